import TuttiCore
import TuttiStream
import TuttiTesting
import TuttiWire
import XCTest

/// The latency floor: a target is one packet plus jitter slack, reads are aligned to the packet grid, and
/// many streams read on one device clock each play at their own aligned latency whatever the phase of their
/// packets against the reads, through bursts, reordering and late packets.
final class LatencyFloorTests: XCTestCase {
    func testTheAlignedLatencyIsTheLowestThatKeepsTheSlackForEveryRead() {
        for packet in [32, 64, 128] {
            for read in [16, 32, 48, 64, 128] {
                for target in stride(from: packet, through: packet + 100, by: 7) {
                    for phase in 0..<packet {
                        XCTAssertEqual(
                            LatencyPolicy.alignedLatency(targetFrames: target, packetFrames: packet, readFrames: read, phaseFrames: phase),
                            referenceAlignedLatency(target: target, packet: packet, read: read, phase: phase),
                            "packet \(packet), read \(read), target \(target), phase \(phase)")
                    }
                }
            }
        }
    }

    func testReadsOfAPacketAddOnlyThePartOfThePhaseTheSlackDoesNotCover() {
        // 64-frame packets and reads, one packet of target (no slack): the latency is the packet plus the time
        // from a packet's arrival to the next read, never a whole read more.
        for phase in 0..<64 {
            XCTAssertEqual(LatencyPolicy.alignedLatency(targetFrames: 64, packetFrames: 64, readFrames: 64, phaseFrames: phase), 64 + phase)
        }
        // With 24 frames of slack, reads that come 24 or more frames after the arrival cost nothing more.
        XCTAssertEqual(LatencyPolicy.alignedLatency(targetFrames: 88, packetFrames: 64, readFrames: 64, phaseFrames: 24), 88)
        XCTAssertEqual(LatencyPolicy.alignedLatency(targetFrames: 88, packetFrames: 64, readFrames: 64, phaseFrames: 40), 104)
        XCTAssertEqual(LatencyPolicy.alignedLatency(targetFrames: 88, packetFrames: 64, readFrames: 64, phaseFrames: 10), 138)
    }

    func testTheAdaptiveBufferRaisesAtOnceAndLowersOnlyHalfAPacketAbove() {
        func step(_ current: Int, _ desired: Int) -> LatencyPolicy.AdaptiveStep {
            LatencyPolicy.adaptiveStep(currentFrames: current, desiredFrames: desired, packetFrames: 64, sampleRate: 48_000)
        }
        XCTAssertEqual(step(100, 101), .raise(1), "a frame below the aligned target loses a step of slack")
        XCTAssertEqual(step(100, 2_000), .raise(480), "at most 10 ms at a time")
        XCTAssertEqual(step(131, 100), .hold)
        XCTAssertEqual(step(132, 100), .lower(atMost: 32))
        XCTAssertEqual(step(100, 100), .hold)
    }

    /// One stream of the shared-clock runs: its target, the network delay of its fastest packets (which sets
    /// the phase of its arrivals against the reads), and what it sees on the way.
    private struct Stream {
        var format: StreamFormat
        var delay: Int64
        /// Packets delivered two at a time (the first of each pair held until the second arrives, and handed
        /// over after it): the first of a pair is a packet late against the fastest, and out of order.
        var bursts = false
        /// Packets delayed by this much beyond the slack (late): every 250th one after the first 1000.
        var straggler: Int64? = nil
        var firstDelay: Int64 = 0
        /// Extra delay of every packet, uniform in 0…jitter frames (seeded).
        var jitter: Int64 = 0
    }

    /// What one stream of a shared-clock run showed.
    private struct Outcome {
        var statistics: JitterBufferStatistics
        /// Capture-to-playout latency (frames) at the last read that played audio before the stream ended.
        var latency: Int64
        /// Reads, after the first that played sound and before the stream ended, whose output was not the
        /// signal's consecutive frames, whole (concealment, a fade, a skip, silence).
        var damagedReads: Int
    }

    /// Whether `output` holds `frames` consecutive frames of `CounterSignal`, exactly (L24 steps).
    private func isWholeSignal(_ output: UnsafeMutableBufferPointer<Float>, frames: Int, channels: Int) -> Bool {
        func frameIndex(_ value: Float) -> Int { (Int((abs(value) * 8_388_608).rounded()) - 838_861) / channels }
        guard output[0] != 0 else { return false }
        let first = frameIndex(output[0])
        for frame in 0..<frames {
            for channel in 0..<channels
            where output[frame * channels + channel] != CounterSignal.value(frame: first + frame, channel: channel, channels: channels) {
                return false
            }
        }
        return true
    }

    /// Runs every stream through its own `StreamReceiver`, all read by one device clock (64 frames a period,
    /// reads at multiples of 64 on the shared timeline), for `packetCount` packets.
    private func runOnOneClock(_ streams: [Stream], packetCount: Int, read: Int = 64) -> [Outcome] {
        let receivers = streams.map {
            StreamReceiver(format: $0.format, ssrc: 0x1234_5678, payloadType: 96, maxPeriodFrames: read, driftCompensation: false)
        }
        var queues: [[Arrival]] = []
        var lastSend: Int64 = 0
        for stream in streams {
            let packets = makePackets(format: stream.format, packetCount: packetCount, senderPeriod: 64)
            lastSend = max(lastSend, packets.last!.sendFrame)
            var queue: [Arrival] = []
            var generator = SeededGenerator(seed: UInt64(stream.delay))
            for packet in packets {
                var arrival = packet.sendFrame + stream.delay
                if stream.jitter > 0 { arrival += Int64.random(in: 0...stream.jitter, using: &generator) }
                if stream.bursts, packet.index % 2 == 0, packet.index + 1 < packets.count {
                    arrival = packets[packet.index + 1].sendFrame + stream.delay
                }
                if packet.index < 6 { arrival += stream.firstDelay }
                if let straggler = stream.straggler, packet.index >= 1_000, packet.index % 250 == 125 {
                    arrival += Int64(stream.format.targetLatencyFrames - stream.format.packetFrames) + straggler
                }
                queue.append(Arrival(index: packet.index, bytes: packet.bytes, arrivalFrame: arrival))
            }
            // Equal arrival times: the later packet first (out of order within a burst).
            queue.sort { ($0.arrivalFrame, -$0.index) < ($1.arrivalFrame, -$1.index) }
            queues.append(queue)
        }
        var next = [Int](repeating: 0, count: streams.count)
        var latencies = [Int64](repeating: 0, count: streams.count)
        var damaged = [Int](repeating: 0, count: streams.count)
        var sounding = [Bool](repeating: false, count: streams.count)
        let clock = ManualClock()
        var frame: Int64 = 0
        let sampleRate = streams[0].format.sampleRate
        while frame < lastSend + 2_000 {
            clock.set(frames: frame, sampleRate: sampleRate)
            for (index, receiver) in receivers.enumerated() {
                while next[index] < queues[index].count, queues[index][next[index]].arrivalFrame <= frame {
                    let arrival = queues[index][next[index]]
                    next[index] += 1
                    arrival.bytes.withUnsafeBytes { raw in
                        _ = receiver.accept(datagram: raw, arrival: HostTime(frames: arrival.arrivalFrame, sampleRate: sampleRate))
                    }
                }
                let now = clock.now()
                let captured = receiver.render(frames: read, now: now, captureClockNow: now.nanoseconds)
                if captured != .min, frame < lastSend {
                    latencies[index] = (now.nanoseconds - captured) * Int64(sampleRate) / 1_000_000_000
                }
                if frame < lastSend {
                    let whole = isWholeSignal(receiver.output, frames: read, channels: streams[index].format.channels)
                    if sounding[index], !whole { damaged[index] += 1 }
                    if receiver.output[(read - 1) * streams[index].format.channels] != 0 { sounding[index] = true }
                }
            }
            frame += Int64(read)
        }
        return receivers.indices.map {
            Outcome(statistics: receivers[$0].snapshot().statistics, latency: latencies[$0], damagedReads: damaged[$0])
        }
    }

    private func format(target: Int) -> StreamFormat {
        StreamFormat(sampleRate: 48_000, channels: 2, sampleFormat: .l24, packetFrames: 64, targetLatencyFrames: target)
    }

    func testOnePacketOfTargetPlaysWithoutALatePacketOrUnderrunOnAJitterFreeNetworkAtEveryPhase() {
        // The floor: a target of exactly one packet (1.33 ms), sixteen streams whose packets arrive at every
        // fourth phase of the 64-frame reads, 2 s each.
        let streams = (0..<16).map { Stream(format: format(target: 64), delay: 20 + Int64($0) * 4) }
        let results = runOnOneClock(streams, packetCount: 1_500)
        for (stream, outcome) in zip(streams, results) {
            let (statistics, latency) = (outcome.statistics, outcome.latency)
            let phase = Int((64 - stream.delay % 64) % 64)
            XCTAssertEqual(statistics.received, 1_500, "delay \(stream.delay)")
            XCTAssertEqual(statistics.late, 0, "delay \(stream.delay)")
            XCTAssertEqual(statistics.lost, 0, "delay \(stream.delay)")
            XCTAssertEqual(statistics.underruns, 1, "delay \(stream.delay): only the stream's end")
            XCTAssertEqual(outcome.damagedReads, 0, "delay \(stream.delay): reads that were not the signal, whole")
            // Capture to playout: the packet, the network, and the wait for the read (the phase).
            XCTAssertEqual(latency, 64 + stream.delay + Int64(phase), accuracy: 1, "delay \(stream.delay)")
            XCTAssertLessThan(Int(latency - stream.delay), 64 + 64, "a whole read more than the packet")
        }
    }

    func testSmallSlackPlaysCleanlyAtTheAlignedLatencyOfEveryPhase() {
        // One packet plus 0.25 ms (12 frames), a jitter-free network, every phase in steps of 3 frames.
        let streams = stride(from: Int64(0), to: 64, by: 3).map { Stream(format: format(target: 76), delay: 100 + $0) }
        let results = runOnOneClock(streams, packetCount: 600)
        for (stream, outcome) in zip(streams, results) {
            let (statistics, latency) = (outcome.statistics, outcome.latency)
            let phase = Int((64 - stream.delay % 64) % 64)
            let expected = referenceAlignedLatency(target: 76, packet: 64, read: 64, phase: phase)
            XCTAssertEqual(statistics.late + statistics.lost, 0, "delay \(stream.delay)")
            XCTAssertEqual(statistics.underruns, 1, "delay \(stream.delay): only the stream's end")
            XCTAssertEqual(outcome.damagedReads, 0, "delay \(stream.delay)")
            XCTAssertEqual(latency, Int64(expected) + stream.delay, accuracy: 1, "delay \(stream.delay)")
        }
    }

    func testManyStreamsOnOneClockThroughBurstsReorderingAndLatePacketsEachPlayAtTheirAlignedTarget() {
        // Twelve streams on one clock: targets from one packet plus a packet of slack (bursts of two need it)
        // to 5 ms, every phase, packets in bursts of two delivered out of order, every 250th packet late. 4 s
        // each. (A slow first packet keeps its delay: `FixedTargetStartTests`.)
        var streams: [Stream] = []
        for index in 0..<12 {
            let target = [128, 140, 160, 240][index % 4]
            streams.append(
                Stream(
                    format: format(target: target), delay: 30 + Int64(index) * 11, bursts: true, straggler: 100))
        }
        let packetCount = 3_000
        let results = runOnOneClock(streams, packetCount: packetCount)
        for (stream, outcome) in zip(streams, results) {
            let (statistics, latency) = (outcome.statistics, outcome.latency)
            let label = "target \(stream.format.targetLatencyFrames), delay \(stream.delay)"
            // The fastest packets are the second of each pair: they set the phase.
            let phase = Int((64 - stream.delay % 64) % 64)
            let expected = referenceAlignedLatency(target: stream.format.targetLatencyFrames, packet: 64, read: 64, phase: phase)
            // The 8 stragglers are late, and so is packet 0: its pair's second packet came first and anchored.
            let stragglers: UInt64 = 8
            let late = stragglers + 1
            XCTAssertEqual(statistics.late, late, label)
            XCTAssertEqual(statistics.lost, 0, label)
            XCTAssertEqual(statistics.received, UInt64(packetCount) - late, label)
            XCTAssertGreaterThan(statistics.reordered, UInt64(packetCount / 3), label)
            // A straggler leaves the buffer dry when nothing after it has come yet (small slack); then the end.
            XCTAssertTrue((1...(stragglers + 1)).contains(statistics.underruns), "\(label): \(statistics.underruns) underruns")
            XCTAssertEqual(latency, Int64(expected) + stream.delay, accuracy: 1, label)
            XCTAssertEqual(statistics.skippedFrames, 0, "\(label): never spliced")
        }
    }

    func testTheAdaptiveBufferSettlesAtOnePacketPlusTheLatenessAndAMarginOnAQuietNetwork() {
        // `--latency auto` (one packet to 40 ms, starting at the 4 ms default) on a LAN-like network: 0–12 frames
        // (0–0.25 ms) of jitter. Within 4 s it comes down to the packet, the 99th percentile of lateness (12) and
        // 0.5 ms (24), aligned to the reads' phase: no device period added, and no late packet on the way.
        // (Before, a device period was added: 64 frames more.)
        let format = StreamFormat(
            sampleRate: 48_000, channels: 2, sampleFormat: .l24, packetFrames: 64, targetLatencyFrames: 192,
            adaptiveLatencyFrames: 64...1_920)
        let streams = stride(from: Int64(40), to: 104, by: 16).map { Stream(format: format, delay: $0, jitter: 12) }
        let results = runOnOneClock(streams, packetCount: 3_000)
        for (stream, outcome) in zip(streams, results) {
            let statistics = outcome.statistics
            // The fastest packets came `delay` after they were sent: the phase of the reads against them.
            let phase = Int((64 - stream.delay % 64) % 64)
            let settled = referenceAlignedLatency(target: 64 + 12 + 24, packet: 64, read: 64, phase: phase)
            let latency = Int(outcome.latency - stream.delay)
            print("adaptive, delay \(stream.delay): settled at \(latency) frames (aligned target \(settled)); \(statistics)")
            XCTAssertEqual(statistics.late + statistics.lost, 0, "delay \(stream.delay)")
            XCTAssertGreaterThanOrEqual(latency, settled - 1, "delay \(stream.delay)")
            // It lowers by skipping whole periods of the audio once half a packet above the target (the counter
            // signal repeats every 48 frames): it settles less than a period above, and at most half a packet.
            XCTAssertLessThanOrEqual(latency, settled + 32, "delay \(stream.delay): not settled")
        }
    }
}
