import TuttiCore
import TuttiStream
import TuttiTesting
import TuttiWire
import XCTest

/// Clean streams: exact playout at the target latency, across sequence and timestamp wrap.
final class JitterBufferPlayoutTests: XCTestCase {
    let format = Fixture.format

    func testFormatDerivedParameters() {
        let buffer = JitterBuffer(format: format)
        XCTAssertEqual(buffer.fadeFrames, 48)  // 1 ms
        XCTAssertEqual(buffer.capacity, 32)  // power of two ≥ 4 × 4 packets + 4
        XCTAssertEqual(buffer.state, .idle)
        var initial = JitterBufferStatistics()
        initial.targetFrames = 240
        XCTAssertEqual(buffer.statistics, initial)
    }

    func testReadsBeforeTheFirstPacketAreSilentAndIdle() {
        var buffer = JitterBuffer(format: format)
        var output = [Float](repeating: 1, count: 96)
        _ = output.withUnsafeMutableBufferPointer {
            buffer.read(into: $0, frames: 48, now: HostTime(nanoseconds: 5_000_000_000), captureClockNow: 0)
        }
        XCTAssertEqual(output, [Float](repeating: 0, count: 96))
        XCTAssertEqual(buffer.state, .idle)
        XCTAssertEqual(buffer.statistics.concealedFrames, 0)
    }

    func testInOrderStreamPlaysBackExactlyAfterTargetLatency() {
        var buffer = JitterBuffer(format: format)
        let packets = makePackets(format: format, packetCount: 199)
        let clock = ManualClock()
        let run = runPlayout(
            &buffer, arrivals: arrivals(packets), period: Fixture.period,
            endFrame: packets[0].sendFrame + Fixture.playoutFrames(packets: 199), clock: clock)

        XCTAssertEqual(Fixture.tailFrames(packets: 199), 0)
        XCTAssertEqual(leadingSilentFrames(run.output, channels: 2), format.targetLatencyFrames - format.packetFrames)
        let counts = assertPlayout(run.output[...], format: format, fadeFrames: buffer.fadeFrames, leadIn: Fixture.leadIn, endPacket: 199)
        XCTAssertEqual(counts.silent, Fixture.leadIn)
        XCTAssertEqual(counts.faded, 2 * buffer.fadeFrames)  // fade-in at the start, fade-out at the very end
        XCTAssertEqual(counts.exact, 199 * 64 - 2 * buffer.fadeFrames)
        XCTAssertEqual(clock.now(), HostTime(frames: run.readFrames.last!, sampleRate: 48_000))

        let statistics = run.final
        XCTAssertEqual(statistics.received, 199)
        XCTAssertEqual(statistics.lost, 0)
        XCTAssertEqual(statistics.late, 0)
        XCTAssertEqual(statistics.duplicated, 0)
        XCTAssertEqual(statistics.reordered, 0)
        XCTAssertEqual(statistics.invalid, 0)
        XCTAssertEqual(statistics.concealedFrames, 0)
        XCTAssertEqual(statistics.resynchronizations, 1)
        XCTAssertEqual(run.results.map(\.result), [.resynchronized] + Array(repeating: .accepted, count: 198))
        XCTAssertEqual(run.states.first, .buffering)
        XCTAssertEqual(run.states.last, .playing)
        // Packets leave at the end of 48-frame sender periods, so their transit varies: RFC 3550 jitter.
        let timeline = packets.map { (arrivalFrame: $0.sendFrame, timestamp: Int64(50_000 + 64 * $0.index)) }
        XCTAssertEqual(statistics.jitterFrames, referenceJitter(timeline, sampleRate: 48_000), accuracy: 1e-9)
        XCTAssertGreaterThan(statistics.jitterFrames, 1)
    }

    func testTargetLatencyIsHeldInSteadyState() {
        var buffer = JitterBuffer(format: format)
        let packets = makePackets(format: format, packetCount: 301)
        let delay: Int64 = 30
        let run = runPlayout(
            &buffer, arrivals: arrivals(packets, delay: delay), period: Fixture.period,
            endFrame: packets[0].sendFrame + delay + Fixture.playoutFrames(packets: 301))
        assertPlayout(run.output[...], format: format, fadeFrames: buffer.fadeFrames, leadIn: Fixture.leadIn, endPacket: 301)
        let target = format.targetLatencyFrames
        let lower = target - Fixture.period - format.packetFrames
        let upper = target + format.packetFrames
        var checked = 0
        for (index, statistics) in run.statistics.enumerated() where run.states[index] == .playing {
            // Steady state: while the sender is still sending.
            guard run.readFrames[index] < packets.last!.sendFrame + delay else { break }
            XCTAssertGreaterThanOrEqual(statistics.bufferedFrames, lower, "read \(index)")
            XCTAssertLessThanOrEqual(statistics.bufferedFrames, upper, "read \(index)")
            checked += 1
        }
        XCTAssertGreaterThan(checked, 350)

        // Capture-to-playout latency is constant: the first packet's wait plus the pre-buffered target.
        let latencies = run.statistics.compactMap(\.latencyNanoseconds)
        XCTAssertGreaterThan(latencies.count, 350)
        let expected = HostTime(frames: packets[0].sendFrame + delay + Int64(Fixture.leadIn), sampleRate: 48_000).nanoseconds
        for latency in latencies { XCTAssertEqual(Double(latency), Double(expected), accuracy: 2_000) }
    }

    func testOneChannelL16StreamWithPeriodsSmallerThanAPacket() {
        // L16 is exact for multiples of 1/32768; the counter signal is not, so compare with the codec's rounding.
        let mono = StreamFormat(sampleRate: 44_100, channels: 1, sampleFormat: .l16, packetFrames: 32, targetLatencyFrames: 100)
        var buffer = JitterBuffer(format: mono)
        let packets = makePackets(format: mono, packetCount: 50, senderPeriod: 20)
        let run = runPlayout(&buffer, arrivals: arrivals(packets), period: 10, endFrame: packets[0].sendFrame + 68 + 50 * 32)
        XCTAssertEqual(leadingSilentFrames(run.output, channels: 1), 100 - 32)
        // After the fade-in, every frame is the L16 rounding of the input.
        for frame in (68 + 32)..<(68 + 49 * 32) {
            let input = CounterSignal.value(frame: frame - 68, channel: 0, channels: 1)
            XCTAssertEqual(run.output[frame], (input * 32_768).rounded(.toNearestOrEven) / 32_768, "frame \(frame)")
        }
        XCTAssertEqual(run.final.received, 50)
        XCTAssertEqual(run.final.lost, 0)
    }

    func testSequenceNumberWrapPlaysContinuously() {
        var buffer = JitterBuffer(format: format)
        let packets = makePackets(format: format, packetCount: 100, initialSequenceNumber: 0xFFF0)
        let run = runPlayout(
            &buffer, arrivals: arrivals(packets), period: Fixture.period,
            endFrame: packets[0].sendFrame + Fixture.playoutFrames(packets: 100))
        assertPlayout(run.output[...], format: format, fadeFrames: buffer.fadeFrames, leadIn: Fixture.leadIn, endPacket: 100)
        XCTAssertEqual(run.final.received, 100)
        XCTAssertEqual(run.final.lost, 0)
        XCTAssertEqual(run.final.reordered, 0)
        XCTAssertEqual(run.final.resynchronizations, 1)
    }

    func testReorderingAndLossAcrossSequenceWrap() {
        var buffer = JitterBuffer(format: format)
        let packets = makePackets(format: format, packetCount: 61, initialSequenceNumber: 0xFFF0)
        // Packet 15 carries 0xFFFF and packet 16 0x0000: they arrive swapped. 0x0002 (packet 18) is lost.
        var schedule = arrivals(packets.filter { $0.index != 18 })
        schedule.swapAt(15, 16)
        schedule[15].arrivalFrame = packets[16].sendFrame
        schedule[16].arrivalFrame = packets[16].sendFrame
        let run = runPlayout(
            &buffer, arrivals: schedule, period: Fixture.period, endFrame: packets[0].sendFrame + Fixture.playoutFrames(packets: 61))
        assertPlayout(run.output[...], format: format, fadeFrames: buffer.fadeFrames, leadIn: Fixture.leadIn, endPacket: 61, missing: [18])
        XCTAssertEqual(run.results.first { $0.index == 15 }?.result, .acceptedReordered)
        XCTAssertEqual(run.final.reordered, 1)
        XCTAssertEqual(run.final.lost, 1)
        XCTAssertEqual(run.final.received, 60)
    }

    func testTimestampWrapPlaysContinuously() {
        var buffer = JitterBuffer(format: format)
        let packets = makePackets(format: format, packetCount: 100, initialTimestamp: 0xFFFF_FF00)
        let run = runPlayout(
            &buffer, arrivals: arrivals(packets), period: Fixture.period,
            endFrame: packets[0].sendFrame + Fixture.playoutFrames(packets: 100))
        assertPlayout(run.output[...], format: format, fadeFrames: buffer.fadeFrames, leadIn: Fixture.leadIn, endPacket: 100)
        XCTAssertEqual(run.final.received, 100)
        XCTAssertEqual(run.final.lost, 0)
        XCTAssertEqual(run.final.late, 0)
        XCTAssertEqual(run.final.invalid, 0)
        XCTAssertEqual(run.final.resynchronizations, 1)
    }

    func testTimestampWrapOffThePacketGridWithLossAtTheWrap() {
        var buffer = JitterBuffer(format: format)
        // 0xFFFFFF3B is no multiple of 64: the grid is anchored on the first packet, not on zero. Packet 3 (the
        // first after the timestamp wraps, sequence 0x0001) is lost.
        let packets = makePackets(format: format, packetCount: 49, initialSequenceNumber: 0xFFFE, initialTimestamp: 0xFFFF_FF3B)
        let run = runPlayout(
            &buffer, arrivals: arrivals(packets.filter { $0.index != 3 }), period: Fixture.period,
            endFrame: packets[0].sendFrame + Fixture.playoutFrames(packets: 49))
        assertPlayout(run.output[...], format: format, fadeFrames: buffer.fadeFrames, leadIn: Fixture.leadIn, endPacket: 49, missing: [3])
        XCTAssertEqual(run.final.lost, 1)
        XCTAssertEqual(run.final.invalid, 0)
        XCTAssertEqual(run.final.concealedFrames, 64)
    }
}
