import TuttiCore
import TuttiStream
import TuttiTesting
import TuttiWire
import XCTest

/// A fixed target's slack must not depend on when the device's first read comes after the first packet:
/// every packet that arrives up to the target less one packet after the anchor packet plays, whatever the
/// phase (`LatencyPolicy` places the start at the aligned latency; before any alignment, a read right after
/// the anchor packet left up to a period less, and one leg of a lab loop under 0–4 ms of jitter played 24 %
/// of its packets late).
final class FixedTargetStartTests: XCTestCase {
    /// 64-frame packets, 5 ms (240 frames) target, 64-frame device reads: the slack is 240 − 64 = 176 frames.
    private let format = StreamFormat(sampleRate: 48_000, channels: 2, sampleFormat: .l24, packetFrames: 64, targetLatencyFrames: 240)
    private let read = 64

    /// Runs `packetCount` packets through a receiver whose first read comes `phase` frames after the first
    /// packet arrives; packet 0 is the fastest, every later one is delayed by up to `maxExtraDelay` frames.
    /// Returns the counters and when the first packet's audio played, in frames after it arrived.
    /// `firstDelay` delays the first ten packets instead (a slow start: the anchor packet came slow).
    /// `finalLatency`: frames from a frame's capture to the read that played it, at the last read before the
    /// stream ended (not the concealment after it).
    private func run(
        phase: Int64, maxExtraDelay: Int64, firstDelay: Int64 = 0, packetCount: Int = 600, seed: UInt64 = 7,
        driftCompensation: Bool = false
    ) -> (statistics: JitterBufferStatistics, firstSoundFrame: Int, finalLatency: Int64) {
        let packets = makePackets(format: format, packetCount: packetCount, senderPeriod: 64)
        var generator = SeededGenerator(seed: seed)
        var queue = packets.map { packet in
            let extra =
                packet.index < 10 && firstDelay > 0
                ? firstDelay
                : packet.index == 0 ? 0 : Int64.random(in: 0...maxExtraDelay, using: &generator)
            return Arrival(index: packet.index, bytes: packet.bytes, arrivalFrame: packet.sendFrame + extra)
        }
        queue.sort { ($0.arrivalFrame, $0.index) < ($1.arrivalFrame, $1.index) }
        let receiver = StreamReceiver(
            format: format, ssrc: 0x1234_5678, payloadType: 96, maxPeriodFrames: read, driftCompensation: driftCompensation)
        var next = 0
        var frame = queue[0].arrivalFrame + phase
        var firstSoundFrame = -1
        var finalLatency: Int64 = 0
        var played = 0
        let end = packets.last!.sendFrame + maxExtraDelay + 4 * Int64(format.targetLatencyFrames)
        while frame < end {
            acceptArrivals(queue, from: &next, until: frame, into: receiver)
            let now = HostTime(frames: frame, sampleRate: format.sampleRate)
            receiver.render(frames: read, now: now, captureClockNow: now.nanoseconds)
            if firstSoundFrame < 0, let index = (0..<(read * format.channels)).first(where: { receiver.output[$0] != 0 }) {
                firstSoundFrame = played + index / format.channels
            }
            if receiver.output[0] != 0, frame < packets.last!.sendFrame {
                // CounterSignal's frame from its magnitude (exact for L24): the frame captured at that frame.
                let counted = Int64((abs(receiver.output[0]) * 8_388_608).rounded()) - 838_861
                finalLatency = frame - counted / Int64(format.channels)
            }
            played += read
            frame += Int64(read)
        }
        return (receiver.snapshot().statistics, firstSoundFrame + Int(phase), finalLatency)
    }

    func testEveryPacketWithinTheSlackPlaysWhateverThePhaseOfTheFirstRead() {
        for phase: Int64 in [0, 1, 16, 32, 48, 63] {
            let (statistics, _, _) = run(phase: phase, maxExtraDelay: 170)
            XCTAssertEqual(statistics.late, 0, "phase \(phase): late packets within the slack")
            XCTAssertEqual(statistics.lost, 0, "phase \(phase)")
            XCTAssertEqual(statistics.received, 600, "phase \(phase)")
        }
    }

    func testTheSameHoldsThroughDriftCompensation() {
        for phase: Int64 in [0, 32, 63] {
            let (statistics, _, _) = run(phase: phase, maxExtraDelay: 170, driftCompensation: true)
            XCTAssertEqual(statistics.late, 0, "phase \(phase): late packets within the slack")
            XCTAssertEqual(statistics.received, 600, "phase \(phase)")
        }
    }

    func testPacketsBeyondTheSlackAreStillLate() {
        // The guarantee is the slack, not more: delays well past it make late packets at every phase.
        for phase: Int64 in [0, 63] {
            let (statistics, _, _) = run(phase: phase, maxExtraDelay: 400)
            XCTAssertGreaterThan(statistics.late, 50, "phase \(phase)")
        }
    }

    func testTheStartIsAtTheAlignedLatencyOfItsPhaseAndLessThanAReadAboveTheSlack() {
        // The first packet plays as long after it arrived as the aligned latency for the phase of the first
        // read wants, less the packet (`referenceAlignedLatency`): the slack (176) plus only the part of the
        // phase it does not cover, never a whole read more (its first sample may fall on the fade-in's zero: a
        // frame).
        for phase: Int64 in [0, 1, 16, 32, 48, 63] {
            let (_, start, _) = run(phase: phase, maxExtraDelay: 0, packetCount: 50)
            let expected = referenceAlignedLatency(target: 240, packet: 64, read: read, phase: Int(phase)) - 64
            XCTAssertEqual(start, expected, accuracy: 1, "phase \(phase)")
            XCTAssertGreaterThanOrEqual(start, 176, "phase \(phase): started before the slack")
            XCTAssertLessThan(start, 176 + read, "phase \(phase): delayed by a read or more")
        }
    }

    func testASlowFirstPacketKeepsItsDelayAndTheStreamIsNeverSpliced() {
        // The first ten packets come 150 frames (3.1 ms) slower than the rest (0–20 frames): the buffer anchors
        // on the first and keeps that delay for the whole stream, playing every packet, with no skip. 2 s.
        let (slow, _, slowLatency) = run(phase: 0, maxExtraDelay: 20, firstDelay: 150, packetCount: 1_500)
        let (fast, _, fastLatency) = run(phase: 0, maxExtraDelay: 20, packetCount: 1_500)
        XCTAssertEqual(slow.late, 0)
        XCTAssertEqual(slow.received, 1_500)
        XCTAssertEqual(slow.skippedFrames, 0, "a fixed target never splices the audio it plays")
        XCTAssertEqual(slow.latencyChanges, 0)
        XCTAssertGreaterThanOrEqual(slowLatency, fastLatency + 150 - 64, "the anchor's delay is kept (within a packet of phase)")
        XCTAssertEqual(fastLatency, Int64(referenceAlignedLatency(target: 240, packet: 64, read: read, phase: 0)), accuracy: 1)
        XCTAssertEqual(fast.skippedFrames, 0)
        XCTAssertEqual(fast.latencyChanges, 0)
    }
}
