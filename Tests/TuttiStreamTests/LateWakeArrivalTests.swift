import TuttiCore
import TuttiStream
import TuttiTesting
import XCTest

/// A device thread that wakes late takes in packets that arrived after its period's time, and the receiver is
/// given their real arrival times (later than the read's `now`). Neither the start's placement nor drift
/// compensation may mistake that for anything: under two packets of target a fixed target's play head has
/// only a couple of frames before a read needs a packet that has not come yet, so a drift loop kicked by a
/// false fastest transit (as when those arrivals were clamped to the period's time, 2026-11-29 lab: 5414
/// short reads a minute at 1.5 packets) plays reads short for as long as it takes to give the kick back.
final class LateWakeArrivalTests: XCTestCase {
    /// 64-frame packets, 96-frame (1.5-packet) target, 64-frame reads, drift compensation on.
    private let format = StreamFormat(sampleRate: 48_000, channels: 2, sampleFormat: .l24, packetFrames: 64, targetLatencyFrames: 96)
    private let read = 64

    /// Runs `packetCount` packets, each arriving a fixed 5 frames after it was sent; the reads come `phase`
    /// frames after the first arrival, one per packet. At the reads in `lateWakes` the thread woke
    /// `lateness` frames late: what arrived until then is taken in before that read, with its real arrival.
    /// Returns the counters, the drift estimate at the end, and the capture-to-playout latency (ns, as the
    /// receiver measures it) two seconds in and at the last read.
    private func run(phase: Int64, lateWakes: Set<Int>, lateness: Int64 = 40, packetCount: Int = 15_000) -> (
        statistics: JitterBufferStatistics, driftPPM: Double, earlyLatency: Int64, finalLatency: Int64
    ) {
        let packets = makePackets(format: format, packetCount: packetCount, senderPeriod: 64)
        let queue = packets.map { Arrival(index: $0.index, bytes: $0.bytes, arrivalFrame: $0.sendFrame + 5) }
        let receiver = StreamReceiver(format: format, ssrc: 0x1234_5678, payloadType: 96, maxPeriodFrames: read, driftCompensation: true)
        var next = 0
        var frame = queue[0].arrivalFrame + phase
        var (earlyLatency, finalLatency): (Int64, Int64) = (0, 0)
        var readIndex = 0
        while next < queue.count {
            acceptArrivals(queue, from: &next, until: lateWakes.contains(readIndex) ? frame + lateness : frame, into: receiver)
            let now = HostTime(frames: frame, sampleRate: format.sampleRate)
            receiver.render(frames: read, now: now, captureClockNow: now.nanoseconds)
            if let latency = receiver.snapshot().statistics.latencyNanoseconds {
                finalLatency = latency
                if readIndex == 1_500 { earlyLatency = latency }
            }
            readIndex += 1
            frame += Int64(read)
        }
        let drift = receiver.driftFigures()?.partsPerMillion ?? .nan
        return (receiver.snapshot().statistics, drift, earlyLatency, finalLatency)
    }

    func testLateWakesLeaveAFixedTargetBelowTwoPacketsWhereItWas() {
        // 20 s; the thread wakes 40 frames late (0.83 ms) now and then. At phases 27 and 50 the next packet
        // arrives 37 and 14 frames after a read, so each of those reads takes in a packet that came after its
        // time (at phase 0 the next packet comes with the next read: the control).
        let lateWakes: Set<Int> = [3_000, 3_001, 5_200, 7_777, 9_100, 12_000]
        for phase: Int64 in [0, 27, 50] {
            let (statistics, drift, early, final) = run(phase: phase, lateWakes: lateWakes)
            XCTAssertEqual(statistics.late, 0, "phase \(phase)")
            XCTAssertEqual(statistics.underruns, 0, "phase \(phase)")
            XCTAssertEqual(statistics.lost, 0, "phase \(phase)")
            // The counters are published every 10 ms of reads: the last few packets may not be in them yet.
            XCTAssertGreaterThanOrEqual(statistics.received, 14_990, "phase \(phase)")
            XCTAssertLessThan(abs(drift), 0.5, "phase \(phase): a drift the clocks do not have")
            XCTAssertEqual(final, early, accuracy: 21_000, "phase \(phase): the latency moved (by a frame or more)")
        }
    }

    func testAFirstPacketTakenInAfterItsReadsTimeStartsWhereAnOnTimeOneDoes() {
        // The first read comes 10 frames before the first packet, but its thread woke 40 frames late and
        // took it in: the start must be placed as for a read that came 54 frames after it (the next one).
        let late = run(phase: -10, lateWakes: [0], packetCount: 1_500)
        let onTime = run(phase: 54, lateWakes: [], packetCount: 1_500)
        XCTAssertEqual(late.statistics.late, 0)
        XCTAssertEqual(late.statistics.underruns, 0)
        XCTAssertEqual(late.finalLatency, onTime.finalLatency, accuracy: 21_000, "within a frame")
    }
}
