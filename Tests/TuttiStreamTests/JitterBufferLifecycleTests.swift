import TuttiCore
import TuttiStream
import TuttiTesting
import TuttiWire
import XCTest

/// The stream's life: its end, a loss of signal and the return, a sender restart, invalid input.
final class JitterBufferLifecycleTests: XCTestCase {
    let format = Fixture.format

    func testEndOfStreamIsNotCountedAsLoss() {
        var buffer = JitterBuffer(format: format, signalLossTimeout: .seconds(1))
        let packets = makePackets(format: format, packetCount: 31)
        // Keep reading for half a second after the last packet: silence and an underrun, but no loss.
        let end = packets.last!.sendFrame + 24_000
        let run = runPlayout(&buffer, arrivals: arrivals(packets), period: Fixture.period, endFrame: end)
        assertPlayout(run.output[...], format: format, fadeFrames: buffer.fadeFrames, leadIn: Fixture.leadIn, endPacket: 31)
        XCTAssertEqual(run.final.lost, 0)
        XCTAssertEqual(run.final.late, 0)
        XCTAssertEqual(run.final.underruns, 1)
        XCTAssertEqual(run.states.last, .playing)
        XCTAssertEqual(run.final.bufferedFrames, 0)
        let playedFrames = Fixture.leadIn + 31 * 64
        XCTAssertEqual(Int(run.final.concealedFrames), run.output.count / 2 - playedFrames, "the tail is concealment")
    }

    func testLatePacketAfterTheEndOfStreamIsCountedOnlyAsLate() {
        var buffer = JitterBuffer(format: format, signalLossTimeout: .seconds(1))
        let packets = makePackets(format: format, packetCount: 31)
        var schedule = arrivals(packets)
        // The second-to-last packet arrives 25 ms late, after the stream has ended (but within the buffer's window).
        schedule[29].arrivalFrame += 1_200
        let run = runPlayout(&buffer, arrivals: schedule, period: Fixture.period, endFrame: packets.last!.sendFrame + 9_600)
        assertPlayout(run.output[...], format: format, fadeFrames: buffer.fadeFrames, leadIn: Fixture.leadIn, endPacket: 31, missing: [29])
        XCTAssertEqual(run.results.first { $0.index == 29 }?.result, .late)
        XCTAssertEqual(run.final.late, 1)
        XCTAssertEqual(run.final.lost, 0, "the concealed packet is counted once, as late; the stream's end is no loss")
    }

    func testASilenceTheSameStreamResumesFromCountsEveryPacketItMissedAsLost() {
        // The link is down for 1.5 s, and for 95 s (more packets than sequence numbers: they wrapped): the sender
        // ran on, so its sequence numbers and timestamps moved on by exactly the packets that never came.
        for missed in [1_125, 71_250] {
            var buffer = JitterBuffer(format: format, signalLossTimeout: .seconds(1))
            let first = makePackets(format: format, packetCount: 31)
            let gapFrames = Int64(missed) * 64
            let second = makePackets(
                format: format, packetCount: 40, initialSequenceNumber: UInt16(truncatingIfNeeded: 1_000 + 31 + missed),
                initialTimestamp: 50_000 + UInt32(31 + missed) * 64, timelineOffset: first.last!.sendFrame + 64 + gapFrames)
            var schedule = arrivals(first)
            schedule += arrivals(second).map { Arrival(index: 1_000 + $0.index, bytes: $0.bytes, arrivalFrame: $0.arrivalFrame) }
            // Read only around the two bursts (the play head's misses in the silence are among the lost anyway).
            let run = runPlayout(
                &buffer, arrivals: schedule, period: Fixture.period, startFrame: first[0].sendFrame, endFrame: second.last!.sendFrame + 480)
            XCTAssertEqual(run.results.first { $0.index == 1_000 }?.result, .resynchronized, "\(missed)")
            XCTAssertEqual(run.final.lost, UInt64(missed), "every packet of the silence, once (\(missed))")
            XCTAssertEqual(run.final.late, 0)
        }
    }

    func testAStaleBurstAtTheEndOfASilenceCountsEveryPacketOnce() {
        // The link is down for 1.5 s; the sender's kernel held the outage's last 101 packets (unres_qlen) and
        // delivers them at once when the link is back, just before the live packets.
        let outage = StaleBurst(format: format)
        let run = outage.play(liveFirst: false)
        outage.assertEveryPacketCountedOnce(run)
        XCTAssertEqual(run.final.lost, UInt64(outage.missed - outage.queued), "lost: the packets that never came")
        XCTAssertEqual(run.final.late, 0)
        // The burst's audio is older than the latency wants: skipped, so that from the first read after it the
        // buffer holds the target again (not a ring's worth of stale audio), and counted so.
        let afterBurst = run.readFrames.firstIndex { $0 >= outage.upFrame }!
        XCTAssertEqual(run.statistics[afterBurst].bufferedFrames, format.targetLatencyFrames, "the level at the first read after the burst")
        XCTAssertEqual(
            Int(run.final.skippedFrames), (outage.queued - 1) * format.packetFrames,
            "skipped: from where the burst's first packet anchored the play head to where its last one holds it")
    }

    func testAStaleBurstAfterTheFirstLivePacketIsLateNotAJump() {
        // As above, but the first live packet overtakes the queued ones: the buffer anchors on it, counting the
        // whole outage lost; the queued packets then come far behind the play head, in the stream's own
        // numbering: late (taken back out of the lost count), and the live audio plays on undisturbed.
        let outage = StaleBurst(format: format)
        let run = outage.play(liveFirst: true)
        outage.assertEveryPacketCountedOnce(run)
        XCTAssertEqual(run.final.lost, UInt64(outage.missed - outage.queued), "lost: the packets that never came")
        XCTAssertEqual(run.final.late, UInt64(outage.queued), "late: the queued packets, after their time")
        XCTAssertEqual(run.final.received, UInt64(outage.before + outage.after))
        XCTAssertEqual(run.final.skippedFrames, 0)
    }

    /// A stream of `before` packets, an outage of `missed` packets whose last `queued` arrive at once when the
    /// link is back (`upFrame`), then `after` live packets.
    private struct StaleBurst {
        let format: StreamFormat
        let before = 31
        let missed = 1_125
        let queued = 101
        let after = 40
        let first: [SentPacket]
        let gap: [SentPacket]
        let live: [SentPacket]
        /// When the link is back: the frame after the outage's last packet was sent.
        let upFrame: Int64

        init(format: StreamFormat) {
            self.format = format
            first = makePackets(format: format, packetCount: before)
            gap = makePackets(
                format: format, packetCount: missed, initialSequenceNumber: UInt16(1_000 + before),
                initialTimestamp: 50_000 + UInt32(before * 64), timelineOffset: first.last!.sendFrame + 64)
            upFrame = gap.last!.sendFrame + 64
            live = makePackets(
                format: format, packetCount: after, initialSequenceNumber: UInt16(1_000 + before + missed),
                initialTimestamp: 50_000 + UInt32((before + missed) * 64), timelineOffset: upFrame)
        }

        func play(liveFirst: Bool) -> PlayoutRun {
            var buffer = JitterBuffer(format: format, signalLossTimeout: .seconds(1))
            let liveArrivals = arrivals(live).map { Arrival(index: 20_000 + $0.index, bytes: $0.bytes, arrivalFrame: $0.arrivalFrame) }
            let burstFrame = liveFirst ? liveArrivals[0].arrivalFrame : upFrame
            var schedule = arrivals(first)
            if liveFirst { schedule.append(liveArrivals[0]) }
            schedule += arrivals(Array(gap.suffix(queued))).map {
                Arrival(index: 10_000 + $0.index, bytes: $0.bytes, arrivalFrame: burstFrame)
            }
            schedule += liveArrivals.dropFirst(liveFirst ? 1 : 0)
            return runPlayout(
                &buffer, arrivals: schedule, period: Fixture.period, startFrame: first[0].sendFrame,
                endFrame: live.last!.sendFrame + Int64(Fixture.period))
        }

        /// Every packet sent is received, lost, late or pending exactly once; none invalid; one resynchronization
        /// at the start and one after the silence, none in the burst.
        func assertEveryPacketCountedOnce(_ run: PlayoutRun, file: StaticString = #filePath, line: UInt = #line) {
            let final = run.final
            XCTAssertEqual(
                final.received + final.lost + final.late + final.pendingMissing, UInt64(before + missed + after),
                "received \(final.received), lost \(final.lost), late \(final.late), pending \(final.pendingMissing), invalid \(final.invalid), duplicated \(final.duplicated), resynchronizations \(final.resynchronizations)",
                file: file, line: line)
            XCTAssertEqual(final.invalid, 0, "every packet of the burst is the stream's own", file: file, line: line)
            XCTAssertEqual(final.resynchronizations, 2, "anchored at the start and after the silence only", file: file, line: line)
        }
    }

    func testLossOfSignalGoesSilentThenResynchronizes() {
        var buffer = JitterBuffer(format: format, signalLossTimeout: .seconds(1))
        let first = makePackets(format: format, packetCount: 31)
        // The sender comes back 1.5 s later with sequence numbers and timestamps that moved on.
        let resume: Int64 = first.last!.sendFrame + 72_000
        let second = makePackets(
            format: format, packetCount: 40, initialSequenceNumber: 5_000, initialTimestamp: 50_000 + 31 * 64 + 72_000,
            timelineOffset: resume)
        var schedule = arrivals(first)
        schedule += arrivals(second).map { Arrival(index: 1_000 + $0.index, bytes: $0.bytes, arrivalFrame: $0.arrivalFrame) }
        // Reads continue on the first stream's 48-frame grid.
        let start = first[0].sendFrame
        let end = second.last!.sendFrame + 480
        let run = runPlayout(&buffer, arrivals: schedule, period: Fixture.period, startFrame: start, endFrame: end)

        let lastArrival = first.last!.sendFrame
        var silentReads = 0
        for (index, readFrame) in run.readFrames.enumerated() where readFrame > lastArrival && readFrame < second[0].sendFrame {
            let sinceLastPacket = readFrame - lastArrival
            if sinceLastPacket <= 48_000 {
                XCTAssertEqual(run.states[index], .playing, "\(sinceLastPacket) frames after the last packet")
            } else {
                XCTAssertEqual(run.states[index], .lost, "\(sinceLastPacket) frames after the last packet")
                XCTAssertEqual(run.statistics[index].bufferedFrames, 0)
                XCTAssertNil(run.statistics[index].latencyNanoseconds)
                XCTAssertTrue(run.output[(index * 96)..<((index + 1) * 96)].allSatisfy { $0 == 0 })
                silentReads += 1
            }
        }
        XCTAssertGreaterThan(silentReads, 400)

        // The next packet re-anchors (the stream was lost); the new stream plays exactly after its own pre-buffering.
        XCTAssertEqual(run.results.first { $0.index == 1_000 }?.result, .resynchronized)
        XCTAssertEqual(run.final.resynchronizations, 2)
        XCTAssertEqual(run.final.lost, 0)
        let resumeRead = run.readFrames.firstIndex { $0 >= second[0].sendFrame }!
        // Pre-buffering counts from the read that took the packet in, whatever the alignment.
        assertPlayout(
            run.output[(resumeRead * 96)...], format: format, fadeFrames: buffer.fadeFrames, leadIn: Fixture.leadIn, endPacket: 40)
    }

    func testSenderRestartWithNewTimestampsResynchronizes() {
        var buffer = JitterBuffer(format: format)
        let first = makePackets(format: format, packetCount: 50)
        // Right after packet 49 the sender restarts: new random sequence number and timestamp, continuing in time.
        let restart = first.last!.sendFrame
        let second = makePackets(
            format: format, packetCount: 61, initialSequenceNumber: 17, initialTimestamp: 3_000_000_000, timelineOffset: restart)
        var schedule = arrivals(first)
        schedule += arrivals(second).map { Arrival(index: 1_000 + $0.index, bytes: $0.bytes, arrivalFrame: $0.arrivalFrame) }
        let run = runPlayout(
            &buffer, arrivals: schedule, period: Fixture.period, startFrame: first[0].sendFrame,
            endFrame: second[0].sendFrame + Fixture.playoutFrames(packets: 61) + 48)
        // The first packet of the new stream is outside the window and only a candidate; the second one, consecutive
        // to it, confirms the jump and the buffer re-anchors on it (one packet of the restart is not played).
        let firstResult = run.results.first { $0.index == 1_000 }?.result
        XCTAssertTrue(firstResult == .late || firstResult == .invalid, "\(String(describing: firstResult))")
        XCTAssertEqual(run.results.first { $0.index == 1_001 }?.result, .resynchronized)
        XCTAssertEqual(run.final.resynchronizations, 2)
        XCTAssertEqual(run.final.lost, 0)
        let resumeRead = run.readFrames.firstIndex { $0 >= second[1].sendFrame }!
        assertPlayout(
            run.output[(resumeRead * 96)...], format: format, fadeFrames: buffer.fadeFrames, leadIn: Fixture.leadIn,
            firstPacket: 1, endPacket: 61)
    }

    func testInvalidPayloadSizeAndOffGridTimestampsAreRejected() {
        var buffer = JitterBuffer(format: format)
        let payload = [UInt8](repeating: 0, count: format.payloadBytes + 8)
        func insert(_ sequence: UInt16, _ timestamp: UInt32, bytes: Int) -> JitterBufferInsertResult {
            payload.withUnsafeBytes { raw in
                buffer.insert(
                    sequenceNumber: sequence, timestamp: timestamp, captureTime: nil, arrival: HostTime(nanoseconds: 0),
                    payload: UnsafeRawBufferPointer(rebasing: raw[0..<bytes]))
            }
        }
        // A wrong size never anchors the stream.
        XCTAssertEqual(insert(1, 6_400, bytes: 0), .invalid)
        XCTAssertEqual(insert(1, 6_400, bytes: format.payloadBytes - 1), .invalid)
        XCTAssertEqual(insert(1, 6_400, bytes: format.payloadBytes + 1), .invalid)
        XCTAssertEqual(buffer.state, .idle)
        XCTAssertEqual(insert(1, 6_400, bytes: format.payloadBytes), .resynchronized)
        XCTAssertEqual(buffer.state, .buffering)
        XCTAssertEqual(insert(2, 6_464, bytes: format.payloadBytes - 3), .invalid)
        // Off the packet grid.
        XCTAssertEqual(insert(2, 6_465, bytes: format.payloadBytes), .invalid)
        XCTAssertEqual(insert(2, 6_464, bytes: format.payloadBytes), .accepted)
        // Before the packet the buffer anchored on.
        XCTAssertEqual(insert(0, 6_336, bytes: format.payloadBytes), .late)
        let statistics = buffer.statistics
        XCTAssertEqual(statistics.invalid, 5)
        XCTAssertEqual(statistics.received, 2)
        XCTAssertEqual(statistics.late, 1)
        XCTAssertEqual(statistics.resynchronizations, 1)
    }

    func testWrongSizedPacketsInAStreamAreConcealedLikeLosses() {
        var buffer = JitterBuffer(format: format)
        let packets = makePackets(format: format, packetCount: 61)
        var schedule = arrivals(packets)
        // Packet 25 is cut short in transit (one byte of payload missing).
        schedule[25].bytes.removeLast()
        let run = runPlayout(
            &buffer, arrivals: schedule, period: Fixture.period, endFrame: packets[0].sendFrame + Fixture.playoutFrames(packets: 61))
        XCTAssertEqual(run.results.first { $0.index == 25 }?.result, .invalid)
        XCTAssertEqual(run.final.invalid, 1)
        XCTAssertEqual(run.final.lost, 1)
        assertPlayout(run.output[...], format: format, fadeFrames: buffer.fadeFrames, leadIn: Fixture.leadIn, endPacket: 61, missing: [25])
    }
}
