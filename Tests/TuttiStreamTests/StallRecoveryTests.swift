import TuttiCore
import TuttiStream
import TuttiTesting
import XCTest

/// A busy machine stalls a peer's clock thread now and then (the lab measured wake-ups up to 20 ms late on
/// an idle machine). A stalled sender catches up with a burst of the packets it owed; a stalled receiver
/// catches up by running its missed reads at once, after taking in everything that arrived meanwhile. Either
/// way the stream must come back exactly where it was: a fixed target keeps its latency (drift compensation
/// holds it, and must not be handed a new one), the packets that missed their time are counted once, and
/// nothing that arrived in time is skipped. And when the stream's packets all come after their time (the
/// path's delay stepped up), the buffer must follow them within a few packets, not after a second of silence.
final class StallRecoveryTests: XCTestCase {
    /// 64-frame packets, 96-frame (1.5-packet) target, 64-frame reads, drift compensation on.
    private let format = StreamFormat(sampleRate: 48_000, channels: 2, sampleFormat: .l24, packetFrames: 64, targetLatencyFrames: 96)
    private let read = 64
    private let transit: Int64 = 5

    private struct Outcome {
        var before: JitterBufferStatistics
        var after: JitterBufferStatistics
        var latencyBefore: Int64
        var latencyAfter: Int64
        var driftPPM: Double
    }

    /// Runs 15 s of packets with the reads `phase` frames after the first arrival. From frame `stallAt`
    /// (measured from the first packet's send) for `stall` frames: a stalled sender sends nothing and then
    /// the packets it owed at once; a stalled receiver reads nothing and then runs the missed reads at once,
    /// each taking in what arrived up to the stall's end. From `delayStepAt` on, every packet takes `delayStep`
    /// frames longer on the way.
    private func run(
        phase: Int64 = 27, stallAt: Int64 = 240_000, stall: Int64 = 0, sender: Bool = false, receiver: Bool = false,
        delayStepAt: Int64 = .max, delayStep: Int64 = 0, headJump: Int64 = 0, packetCount: Int = 11_250,
        target: Int = 96, catchesUp: Bool = true, reportsStep: Bool = true
    ) -> Outcome {
        let format = StreamFormat(
            sampleRate: 48_000, channels: 2, sampleFormat: .l24, packetFrames: 64, targetLatencyFrames: target)
        let packets = makePackets(format: format, packetCount: packetCount, senderPeriod: 64)
        let origin = packets[0].sendFrame
        let stallStart = origin + stallAt
        let stallEnd = stallStart + stall
        let queue = packets.map { packet -> Arrival in
            var sent = packet.sendFrame
            if sender, sent > stallStart, sent <= stallEnd { sent = stallEnd }
            let delay = sent - origin >= delayStepAt ? transit + delayStep : transit
            return Arrival(index: packet.index, bytes: packet.bytes, arrivalFrame: sent + delay)
        }.sorted { $0.arrivalFrame < $1.arrivalFrame }
        let receiverUnderTest = StreamReceiver(
            format: format, ssrc: 0x1234_5678, payloadType: 96, maxPeriodFrames: read, driftCompensation: true)
        var next = 0
        var frame = queue[0].arrivalFrame + phase
        var outcome = Outcome(before: .init(), after: .init(), latencyBefore: 0, latencyAfter: 0, driftPPM: 0)
        var recorded = false
        // A JACK cycle's timeline reports the step that moved the head (`deviceTimeStepped`), with the frames it
        // catches up and with the read after it.
        var stepToReport = false
        while next < queue.count {
            let stalled = receiver && frame > stallStart && frame <= stallEnd
            if !recorded, frame > stallStart - 48_000 {
                recorded = true
                outcome.before = receiverUnderTest.snapshot().statistics
                outcome.latencyBefore = outcome.before.latencyNanoseconds ?? 0
            }
            acceptArrivals(queue, from: &next, until: stalled ? stallEnd : frame, into: receiverUnderTest)
            let now = HostTime(frames: frame, sampleRate: format.sampleRate)
            if headJump != 0, frame > stallStart, frame <= stallStart + Int64(read) {
                // The device's reads jump without its time doing so: `headJump` frames read and thrown away
                // (as for a stall that lost no time after all), or, negative, a period not read.
                if headJump > 0 {
                    // In chunks of at most a period, as a JACK receiver catches up skipped frames.
                    var thrownAway = 0
                    while thrownAway < Int(headJump) {
                        let chunk = min(read, Int(headJump) - thrownAway)
                        receiverUnderTest.render(
                            frames: chunk, now: now, captureClockNow: now.nanoseconds, deviceCatchesUp: catchesUp,
                            deviceTimeStepped: !catchesUp && reportsStep)
                        thrownAway += chunk
                    }
                    stepToReport = !catchesUp && reportsStep
                } else {
                    stepToReport = !catchesUp && reportsStep
                    frame += Int64(read)
                    continue
                }
            }
            receiverUnderTest.render(
                frames: read, now: now, captureClockNow: now.nanoseconds, deviceCatchesUp: catchesUp, deviceTimeStepped: stepToReport)
            stepToReport = false
            frame += Int64(read)
        }
        outcome.after = receiverUnderTest.snapshot().statistics
        outcome.latencyAfter = outcome.after.latencyNanoseconds ?? 0
        outcome.driftPPM = receiverUnderTest.driftFigures()?.partsPerMillion ?? .nan
        return outcome
    }

    /// Packets whose time passed while the sender stalled, at a capture-to-playout latency of `latency` ns: a
    /// packet whose first frame was captured at c is sent at c + P and plays at c + latency, and the stall
    /// sends every packet due in it at its end, to arrive `transit` later.
    private func overdue(stall: Int64, latency: Int64) -> UInt64 {
        let latencyFrames = Double(latency) * Double(format.sampleRate) / 1e9
        let packets = (Double(stall + transit + Int64(format.packetFrames)) - latencyFrames) / Double(format.packetFrames)
        return UInt64(max(0, packets.rounded()))
    }

    private func assertCameBack(_ outcome: Outcome, _ label: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(
            outcome.after.resynchronizations, outcome.before.resynchronizations, "\(label): re-anchored", file: file, line: line)
        XCTAssertEqual(outcome.after.skippedFrames, outcome.before.skippedFrames, "\(label): skipped audio", file: file, line: line)
        XCTAssertEqual(
            Double(outcome.latencyAfter), Double(outcome.latencyBefore), accuracy: 21_000,
            "\(label): the latency moved by a frame or more", file: file, line: line)
        XCTAssertLessThan(abs(outcome.driftPPM), 1, "\(label): a drift the clocks do not have", file: file, line: line)
    }

    func testAReceiverThatStallsUpTo90MillisecondsCatchesUpWithoutLosingAnything() {
        for milliseconds: Int64 in [5, 10, 20, 30, 50, 90] {
            let outcome = run(stall: milliseconds * 48, receiver: true)
            let label = "receiver stalled \(milliseconds) ms"
            assertCameBack(outcome, label)
            XCTAssertEqual(outcome.after.late, 0, label)
            XCTAssertEqual(outcome.after.lost, 0, label)
            XCTAssertEqual(outcome.after.underruns, 0, label)
        }
    }

    func testASenderThatStallsLosesOnlyThePacketsWhoseTimePassed() {
        for milliseconds: Int64 in [5, 10, 20, 30, 50, 90] {
            let stall = milliseconds * 48
            let outcome = run(stall: stall, sender: true)
            let label = "sender stalled \(milliseconds) ms"
            assertCameBack(outcome, label)
            let missed = (outcome.after.late + outcome.after.lost) - (outcome.before.late + outcome.before.lost)
            XCTAssertEqual(Double(missed), Double(overdue(stall: stall, latency: outcome.latencyBefore)), accuracy: 1, label)
            XCTAssertLessThanOrEqual(outcome.after.underruns - outcome.before.underruns, 1, label)
        }
    }

    func testAMachineThatStallsBothPeersComesBackWhereItWas() {
        for milliseconds: Int64 in [10, 20, 50, 90] {
            let stall = milliseconds * 48
            let outcome = run(stall: stall, sender: true, receiver: true)
            let label = "both stalled \(milliseconds) ms"
            assertCameBack(outcome, label)
            let missed = (outcome.after.late + outcome.after.lost) - (outcome.before.late + outcome.before.lost)
            XCTAssertLessThanOrEqual(missed, overdue(stall: stall, latency: outcome.latencyBefore) + 1, label)
        }
    }

    func testWhenEveryPacketComesLateTheBufferFollowsWithinItsPatience() {
        // The path's delay steps up by 15 ms: from then on every packet comes 14 ms after its time.
        let step: Int64 = 720
        let outcome = run(delayStepAt: 240_000, delayStep: step)
        let missed = (outcome.after.late + outcome.after.lost) - (outcome.before.late + outcome.before.lost)
        // The packets of the step itself (12), and those of the 50 ms the buffer waits to be sure (38), not the
        // second until the signal-loss timeout (750).
        let patience = Int64(JitterBuffer.lateStreamPatience.nanosecondsClamped * 48_000 / 1_000_000_000)
        XCTAssertLessThanOrEqual(missed, UInt64((step + patience) / 64 + 2), "silence until the signal-loss timeout")
        XCTAssertEqual(outcome.after.resynchronizations - outcome.before.resynchronizations, 1)
        XCTAssertLessThan(
            outcome.after.concealedFrames - outcome.before.concealedFrames, UInt64(step + patience + 4 * 64), "concealed for too long")
        // Then it plays on at the target from the new delay: the latency is the step higher, less up to a
        // packet (the reads' phase against the packets moved with the step, and with it the aligned latency).
        let stepped = outcome.latencyBefore + step * 1_000_000_000 / 48_000
        XCTAssertLessThanOrEqual(outcome.latencyAfter, stepped + 21_000)
        XCTAssertGreaterThan(outcome.latencyAfter, stepped - 64 * 1_000_000_000 / 48_000)
    }

    func testAStalledSendersBurstIsNotTakenForALateStream() {
        // 90 ms stall: the burst's first 67 packets are all late, and arrive at once; the stream is in time
        // again with the burst's last ones, so the buffer keeps its anchor.
        let outcome = run(stall: 90 * 48, sender: true)
        XCTAssertEqual(outcome.after.resynchronizations, outcome.before.resynchronizations)
    }

    func testAJumpOfThePlayHeadIsGivenBackAtOnceNotByDriftCompensation() {
        // The play head jumps by a 64-frame period against the device's time: ahead (a period read and thrown
        // away, as a JACK timeline does for a server stall that lost no time after all: every packet of a
        // 1.5-packet target then comes late) and back (a period not read). Within 20 ms of reads the head
        // is moved back to the setpoint, repeating or skipping that much audio once.
        for jump: Int64 in [64, -64] {
            let outcome = run(headJump: jump)
            let label = "play head jumped \(jump) frames"
            XCTAssertEqual(outcome.after.resynchronizations, outcome.before.resynchronizations, label)
            if jump > 0 {
                XCTAssertEqual(Double(outcome.after.stretchedFrames - outcome.before.stretchedFrames), Double(jump), accuracy: 2, label)
            } else {
                XCTAssertEqual(Double(outcome.after.skippedFrames - outcome.before.skippedFrames), Double(-jump), accuracy: 2, label)
            }
            XCTAssertEqual(Double(outcome.latencyAfter), Double(outcome.latencyBefore), accuracy: 42_000, "\(label): within two frames")
            let missed = (outcome.after.late + outcome.after.lost) - (outcome.before.late + outcome.before.lost)
            XCTAssertLessThanOrEqual(missed, 16, "\(label): late for longer than the step's confirmation")
            XCTAssertLessThan(abs(outcome.driftPPM), 2, "\(label): drift compensation chased the jump")
        }
    }

    func testOnAJACKCycleAPlayHeadAPacketOrMoreAheadIsBroughtBackWithin50Milliseconds() {
        // A JACK cycle (the device does not catch up; `stepCorrection` is off there) at a 3-packet target: the
        // head jumps ahead by one or two 64-frame packets against the device's time, as a burst of server
        // stalls left it in the lab (2.6 ms down, then 8 s of late packets while drift compensation slewed
        // back). Within 50 ms of reads the head goes back to drift compensation's setpoint, once.
        for jump: Int64 in [128, 64] {
            let outcome = run(headJump: jump, target: 192, catchesUp: false)
            let label = "JACK play head jumped \(jump) frames"
            XCTAssertEqual(outcome.after.resynchronizations, outcome.before.resynchronizations, label)
            XCTAssertEqual(Double(outcome.after.stretchedFrames - outcome.before.stretchedFrames), Double(jump), accuracy: 4, label)
            XCTAssertEqual(outcome.after.skippedFrames, outcome.before.skippedFrames, label)
            XCTAssertEqual(Double(outcome.latencyAfter), Double(outcome.latencyBefore), accuracy: 42_000, "\(label): within two frames")
            let missed = (outcome.after.late + outcome.after.lost) - (outcome.before.late + outcome.before.lost)
            // 50 ms of 64-frame packets (38), and those of the head's way back (a few).
            XCTAssertLessThanOrEqual(missed, 44, "\(label): late for longer than the level's confirmation")
            XCTAssertLessThan(abs(outcome.driftPPM), 2, "\(label): drift compensation chased the jump")
        }
    }

    func testOnAJACKCycleAMoveUnderAPacketUpOrWithoutAStepIsLeftToDriftCompensation() {
        // The fitted timeline moves the measured latency by part of a cycle now and then (under 1 ms); that
        // is not spliced, nor is a packet's move when the timeline reported no step (drift compensation
        // converging on a clock far off swings the level by that much), nor a head left behind (a period not
        // read: the latency a packet higher, which drift compensation gives back without a late packet; after
        // a step the measured latency can read that high for a while when it is not).
        for (jump, reportsStep): (Int64, Bool) in [(40, true), (24, true), (64, false), (-64, false), (-64, true)] {
            let outcome = run(headJump: jump, target: 192, catchesUp: false, reportsStep: reportsStep)
            let label = "JACK play head moved \(jump) frames, step reported: \(reportsStep)"
            XCTAssertEqual(outcome.after.stretchedFrames, outcome.before.stretchedFrames, label)
            XCTAssertEqual(outcome.after.skippedFrames, outcome.before.skippedFrames, label)
            XCTAssertEqual(outcome.after.resynchronizations, outcome.before.resynchronizations, label)
        }
    }
}
