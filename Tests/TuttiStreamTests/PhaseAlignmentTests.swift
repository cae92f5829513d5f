import TuttiCore
import TuttiStream
import TuttiTesting
import TuttiWire
import XCTest

/// A device clock that plays one stream alone may come later (a paced receiver port): the stream asks it, once,
/// to delay its reads until they come just as the packets have waited their slack, and then plays at its target
/// whatever the phase at which its first packet arrived, instead of up to a packet above it.
final class PhaseAlignmentTests: XCTestCase {
    func testThePhaseDelayGivesTheLeastAlignedLatencyForEveryPhase() {
        for packet in [32, 64, 128] {
            for read in [16, 32, 48, 64, 128] {
                let grid = gcd(read, packet)
                for target in stride(from: packet, through: packet + 100, by: 7) {
                    let least = (0..<packet).map {
                        LatencyPolicy.alignedLatency(targetFrames: target, packetFrames: packet, readFrames: read, phaseFrames: $0)
                    }.min()!
                    for phase in 0..<packet {
                        let label = "packet \(packet), read \(read), target \(target), phase \(phase)"
                        let delay = LatencyPolicy.phaseDelayFrames(
                            targetFrames: target, packetFrames: packet, readFrames: read, phaseFrames: phase)
                        XCTAssertTrue((0..<grid).contains(delay), label)
                        XCTAssertEqual(
                            LatencyPolicy.alignedLatency(
                                targetFrames: target, packetFrames: packet, readFrames: read, phaseFrames: phase + delay), least, label)
                    }
                    if packet % read == 0 { XCTAssertEqual(least, target, "reads that divide the packet add nothing") }
                }
            }
        }
    }

    func testPhaseMovesBringTheReadsAFrameAtATimeToAFrameOrTwoAfterTheEdgeTheStartAimsAt() {
        for packet in [32, 64, 128] {
            for read in [16, 32, 48, 64, 128] {
                let grid = gcd(read, packet)
                for target in stride(from: packet, through: packet + 100, by: 13) {
                    for start in 0..<packet {
                        var phase = start
                        var moves = 0
                        while case let move = LatencyPolicy.phaseMoveFrames(
                            targetFrames: target, packetFrames: packet, readFrames: read, phaseFrames: phase), move != 0
                        {
                            phase += move
                            moves += 1
                            if moves > grid { break }
                        }
                        let label = "packet \(packet), read \(read), target \(target), from phase \(start)"
                        XCTAssertLessThanOrEqual(moves, grid / 2 + 1, "\(label): the shorter way round")
                        let delay = LatencyPolicy.phaseDelayFrames(
                            targetFrames: target, packetFrames: packet, readFrames: read, phaseFrames: phase)
                        XCTAssertTrue(delay == grid - 1 || delay == grid - 2, "\(label): a frame or two past the edge, not \(delay)")
                    }
                }
            }
        }
    }

    /// What one run showed.
    private struct Outcome {
        var statistics: JitterBufferStatistics
        /// Capture-to-playout latency (frames) at the last read before the stream ended.
        var latency: Int64
        /// The start delays the receiver asked its device for (device frames).
        var delays: [Int]
        /// The moves it asked for while it played, and their sum (frames).
        var moves = 0
        var movedFrames = 0
    }

    /// One stream whose packets (64 frames, sent at the end of each sender period) arrive `networkDelay` frames
    /// after they were sent, plus a seeded 0…`jitter` frames, read by a device of 64-frame periods that starts
    /// at frame 0 and honours every move the receiver asks for (`follows`; else only the start's delay). The
    /// sender's clock runs `senderPPM` fast against the device's.
    private func run(
        target: Int, networkDelay: Int64, jitter: Int64 = 0, packetCount: Int = 400, driftCompensation: Bool = false,
        senderPPM: Double = 0, follows: Bool = true
    ) -> Outcome {
        let format = StreamFormat(sampleRate: 48_000, channels: 2, sampleFormat: .l24, packetFrames: 64, targetLatencyFrames: target)
        let receiver = StreamReceiver(
            format: format, ssrc: 0x1234_5678, payloadType: 96, maxPeriodFrames: 64, driftCompensation: driftCompensation)
        let packets = makePackets(format: format, packetCount: packetCount, senderPeriod: 64)
        var generator = SeededGenerator(seed: UInt64(networkDelay) &+ 7)
        // Arrival in device frames (fractional: the sender's frames are shorter or longer).
        let arrivals = packets.map { packet in
            let sent = Double(packet.sendFrame) / (1 + senderPPM * 1e-6)
            let extra = jitter > 0 ? Int64.random(in: 0...jitter, using: &generator) : 0
            return (bytes: packet.bytes, frame: sent + Double(networkDelay + extra))
        }.sorted { $0.frame < $1.frame }
        let end = arrivals.last!.frame
        var next = 0
        var frame: Int64 = 0
        var outcome = Outcome(statistics: JitterBufferStatistics(), latency: 0, delays: [])
        while Double(frame) < end {
            while next < arrivals.count, arrivals[next].frame <= Double(frame) {
                let arrival = HostTime(nanoseconds: Int64(arrivals[next].frame * 1e9 / 48_000))
                arrivals[next].bytes.withUnsafeBytes { raw in _ = receiver.accept(datagram: raw, arrival: arrival) }
                next += 1
            }
            let now = HostTime(frames: frame, sampleRate: 48_000)
            let captured = receiver.render(
                frames: 64, now: now, captureClockNow: now.nanoseconds, deviceCatchesUp: true, deviceDelayLimitFrames: 63)
            if captured != .min { outcome.latency = (now.nanoseconds - captured) * 48_000 / 1_000_000_000 }
            frame += 64
            switch receiver.takeDeviceTimingRequest() {
            case .none: break
            case .startLater(let frames):
                outcome.delays.append(frames)
                frame += Int64(frames)
            case .follow(let frames):
                outcome.moves += 1
                outcome.movedFrames += frames
                if follows { frame += Int64(frames) }
            }
        }
        outcome.statistics = receiver.snapshot().statistics
        return outcome
    }

    func testAStreamPlaysAtItsTargetWhateverThePhaseOfItsFirstPacket() {
        // Without the delay, the latency was the aligned one for the phase: up to 63 frames more
        // (`LatencyFloorTests.testSmallSlackPlaysCleanlyAtTheAlignedLatencyOfEveryPhase`).
        for target in [64, 76, 88, 112] {
            for networkDelay in stride(from: Int64(100), to: 164, by: 3) {
                let label = "target \(target), network \(networkDelay)"
                let outcome = run(target: target, networkDelay: networkDelay)
                XCTAssertEqual(outcome.statistics.late + outcome.statistics.lost, 0, label)
                XCTAssertEqual(outcome.statistics.underruns, 0, label)
                XCTAssertLessThanOrEqual(outcome.delays.count, 1, "\(label): asked once, at the start")
                XCTAssertEqual(outcome.moves, 0, "\(label): clocks that agree need no move")
                XCTAssertTrue(outcome.delays.allSatisfy { (2..<64).contains($0) }, "\(label): \(outcome.delays)")
                // Capture to playout: the target and the network, nothing for the phase (a frame, for rounding).
                XCTAssertTrue((0...1).contains(outcome.latency - Int64(target) - networkDelay), "\(label): \(outcome.latency)")
            }
        }
    }

    func testJitterWithinTheSlackPlaysWithoutALatePacketAtEveryPhase() {
        // 1.75 packets (112 frames: 48 of slack) and 0…40 frames of jitter: no packet late, whatever the phase;
        // a first packet slower than the fastest keeps its extra delay, at most the jitter.
        for networkDelay in stride(from: Int64(100), to: 164, by: 7) {
            let outcome = run(target: 112, networkDelay: networkDelay, jitter: 40, packetCount: 1_500)
            let label = "network \(networkDelay)"
            XCTAssertEqual(outcome.statistics.late + outcome.statistics.lost, 0, label)
            XCTAssertEqual(outcome.statistics.underruns, 0, label)
            XCTAssertGreaterThanOrEqual(outcome.latency, 112 + networkDelay - 1, label)
            XCTAssertLessThanOrEqual(outcome.latency, 112 + networkDelay + 40 + 1, label)
        }
    }

    func testThroughTheDriftResamplerEveryPhasePlaysAtTheSameLatency() {
        // Drift compensation on (clocks that agree): the resampler's delay and its two frames of wobble are added
        // alike at every phase.
        let outcomes = stride(from: Int64(100), to: 164, by: 9).map { run(target: 88, networkDelay: $0, packetCount: 1_500) }
        let resampled = stride(from: Int64(100), to: 164, by: 9).map {
            (delay: $0, outcome: run(target: 88, networkDelay: $0, packetCount: 1_500, driftCompensation: true))
        }
        for (plain, (networkDelay, outcome)) in zip(outcomes, resampled) {
            XCTAssertEqual(outcome.statistics.late + outcome.statistics.lost, 0, "network \(networkDelay)")
            XCTAssertEqual(outcome.statistics.underruns, 0, "network \(networkDelay)")
            XCTAssertEqual(outcome.delays.count, plain.delays.count, "network \(networkDelay)")
        }
        let excess = resampled.map { $0.outcome.latency - 88 - $0.delay }
        XCTAssertLessThanOrEqual(excess.max()! - excess.min()!, 1, "the same at every phase: \(excess)")
        XCTAssertTrue((19...23).contains(excess[0]), "the resampler's delay and its wobble: \(excess[0])")
    }

    func testTheDeviceFollowsASenderThatDriftsAndNoPacketComesLate() {
        // 1.25 packets (16 frames of slack), no jitter, a sender 200 ppm fast or slow, 20 s: its packets slide
        // past the reads by 9.6 frames a second, three packets in all. Followed, the reads keep their phase;
        // not followed (the device asked but not moved), the worst read's slack goes below 0 and packets
        // come late while drift compensation holds the buffer's level.
        for ppm in [200.0, -200.0] {
            let followed = run(target: 80, networkDelay: 130, packetCount: 15_000, driftCompensation: true, senderPPM: ppm)
            XCTAssertEqual(followed.statistics.late + followed.statistics.lost, 0, "\(ppm) ppm, followed")
            XCTAssertEqual(followed.statistics.underruns, 0, "\(ppm) ppm, followed")
            // 192 frames in 20 s, a frame at a time. A slow sender is followed up to 5 frames behind: the fastest
            // packet of the last 0.5 s (which the phase is measured against) is the oldest, 0.5 s of drift ago.
            XCTAssertEqual(Double(followed.movedFrames), -ppm * 0.96, accuracy: 6, "\(ppm) ppm: the device ran at the sender's rate")
            XCTAssertLessThan(followed.moves, 260, "\(ppm) ppm: moves of about a frame, not a dither")
            let unfollowed = run(
                target: 80, networkDelay: 130, packetCount: 15_000, driftCompensation: true, senderPPM: ppm, follows: false)
            XCTAssertGreaterThan(unfollowed.statistics.late + unfollowed.statistics.underruns, 0, "\(ppm) ppm: what following prevents")
        }
    }

    func testWithoutADelayLimitTheStreamNeverAsks() {
        let format = StreamFormat(sampleRate: 48_000, channels: 2, sampleFormat: .l24, packetFrames: 64, targetLatencyFrames: 88)
        let receiver = StreamReceiver(format: format, ssrc: 0x1234_5678, payloadType: 96, maxPeriodFrames: 64, driftCompensation: false)
        let packets = makePackets(format: format, packetCount: 50, senderPeriod: 64)
        var played = 0
        for (index, packet) in packets.enumerated() {
            let arrival = packet.sendFrame + 10
            packet.bytes.withUnsafeBytes { _ = receiver.accept(datagram: $0, arrival: HostTime(frames: arrival, sampleRate: 48_000)) }
            let now = HostTime(frames: Int64(index + 1) * 64 + 30, sampleRate: 48_000)
            if receiver.render(frames: 64, now: now, captureClockNow: now.nanoseconds, deviceCatchesUp: true) != .min { played += 1 }
            XCTAssertEqual(receiver.takeDeviceTimingRequest(), .none)
        }
        XCTAssertGreaterThan(played, 40, "it plays from the first read after its slack")
    }

    private func gcd(_ a: Int, _ b: Int) -> Int { b == 0 ? a : gcd(b, a % b) }
}
