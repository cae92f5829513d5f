import TuttiCore
import TuttiStream
import TuttiTesting
import TuttiWire
import XCTest

/// Reordering, duplication, loss and lateness, each on its own, with exact expectations.
final class JitterBufferImpairmentTests: XCTestCase {
    let format = Fixture.format

    private func play(_ schedule: [Arrival], packets: Int, start: Int64, buffer: inout JitterBuffer) -> PlayoutRun {
        runPlayout(&buffer, arrivals: schedule, period: Fixture.period, endFrame: start + Fixture.playoutFrames(packets: packets))
    }

    func testReorderedPairsPlayBackInOrder() {
        var buffer = JitterBuffer(format: format)
        let packets = makePackets(format: format, packetCount: 121)
        // Packets 1 and 2, 3 and 4, … arrive swapped (both when the later one was sent).
        var schedule = [Arrival(index: 0, bytes: packets[0].bytes, arrivalFrame: packets[0].sendFrame)]
        for pair in stride(from: 1, to: 121, by: 2) {
            let arrival = packets[pair + 1].sendFrame
            schedule.append(Arrival(index: pair + 1, bytes: packets[pair + 1].bytes, arrivalFrame: arrival))
            schedule.append(Arrival(index: pair, bytes: packets[pair].bytes, arrivalFrame: arrival))
        }
        let run = play(schedule, packets: 121, start: packets[0].sendFrame, buffer: &buffer)
        let counts = assertPlayout(run.output[...], format: format, fadeFrames: buffer.fadeFrames, leadIn: Fixture.leadIn, endPacket: 121)
        XCTAssertEqual(counts.exact, 121 * 64 - 2 * buffer.fadeFrames)
        XCTAssertEqual(run.final.reordered, 60)
        XCTAssertEqual(run.count(.acceptedReordered), 60)
        XCTAssertEqual(run.final.lost, 0)
        XCTAssertEqual(run.final.late, 0)
        XCTAssertEqual(run.final.concealedFrames, 0)
        XCTAssertEqual(run.final.received, 121)
    }

    func testDuplicatesAreDroppedAndCounted() {
        var buffer = JitterBuffer(format: format)
        let packets = makePackets(format: format, packetCount: 100)
        var schedule = arrivals(packets)
        var extraCopies = 0
        for index in stride(from: 3, to: 100, by: 7) {
            // One copy right behind the original, one after the original was played (its slot still holds it).
            schedule.append(Arrival(index: index, bytes: packets[index].bytes, arrivalFrame: packets[index].sendFrame))
            schedule.append(Arrival(index: index, bytes: packets[index].bytes, arrivalFrame: packets[index].sendFrame + 400))
            extraCopies += 2
        }
        let run = play(schedule, packets: 100, start: packets[0].sendFrame, buffer: &buffer)
        XCTAssertEqual(run.results.count, 100 + extraCopies, "every copy was delivered")
        assertPlayout(run.output[...], format: format, fadeFrames: buffer.fadeFrames, leadIn: Fixture.leadIn, endPacket: 100)
        XCTAssertEqual(run.final.duplicated, UInt64(extraCopies))
        XCTAssertEqual(run.count(.duplicate), extraCopies)
        XCTAssertEqual(run.final.received, 100)
        XCTAssertEqual(run.final.lost, 0)
        XCTAssertEqual(run.final.late, 0)
        XCTAssertEqual(run.final.reordered, 0)
    }

    func testIsolatedLossesAreConcealedWithFades() {
        var buffer = JitterBuffer(format: format)
        let packets = makePackets(format: format, packetCount: 160)
        let dropped: Set<Int> = [10, 31, 57, 100, 140]
        let run = play(arrivals(packets.filter { !dropped.contains($0.index) }), packets: 160, start: packets[0].sendFrame, buffer: &buffer)
        let counts = assertPlayout(
            run.output[...], format: format, fadeFrames: buffer.fadeFrames, leadIn: Fixture.leadIn, endPacket: 160, missing: dropped)
        XCTAssertEqual(counts.silent, Fixture.leadIn + dropped.count * 64)
        // Each gap: a fade-out before it and a fade-in after it; plus the stream's own start and end.
        XCTAssertEqual(counts.faded, (2 * dropped.count + 2) * buffer.fadeFrames)
        XCTAssertEqual(run.final.lost, UInt64(dropped.count))
        XCTAssertEqual(run.final.concealedFrames, UInt64(dropped.count * 64))
        XCTAssertEqual(run.final.received, UInt64(160 - dropped.count))
        XCTAssertEqual(run.final.late, 0)
        // The run ends as the last packet plays: the buffer emptied but no read went past what had arrived.
        XCTAssertEqual(run.final.underruns, 0)
    }

    func testBurstLossIsConcealedAsOneGap() {
        var buffer = JitterBuffer(format: format)
        let packets = makePackets(format: format, packetCount: 61)
        let dropped: Set<Int> = [20, 21, 22]
        let run = play(arrivals(packets.filter { !dropped.contains($0.index) }), packets: 61, start: packets[0].sendFrame, buffer: &buffer)
        let counts = assertPlayout(
            run.output[...], format: format, fadeFrames: buffer.fadeFrames, leadIn: Fixture.leadIn, endPacket: 61, missing: dropped)
        XCTAssertEqual(counts.faded, 4 * buffer.fadeFrames)
        XCTAssertEqual(run.final.lost, 3)
        XCTAssertEqual(run.final.concealedFrames, 3 * 64)
    }

    func testLatePacketsAreCountedAndNotPlayed() {
        var buffer = JitterBuffer(format: format)
        let packets = makePackets(format: format, packetCount: 79)
        let delayed: Set<Int> = [20, 45]
        var schedule = arrivals(packets)
        for index in delayed {
            // 600 frames late: well past its playout time, but within the buffer's window.
            schedule[index].arrivalFrame += 600
        }
        let run = play(schedule, packets: 79, start: packets[0].sendFrame, buffer: &buffer)
        assertPlayout(
            run.output[...], format: format, fadeFrames: buffer.fadeFrames, leadIn: Fixture.leadIn, endPacket: 79, missing: delayed)
        XCTAssertEqual(run.results.filter { delayed.contains($0.index) }.map(\.result), [.late, .late])
        XCTAssertEqual(run.final.late, 2)
        // Every concealed packet is counted once: these as late, not as lost.
        XCTAssertEqual(run.final.lost, 0)
        XCTAssertEqual(run.final.concealedFrames, 2 * 64)
        XCTAssertEqual(run.final.received, 77)
        XCTAssertEqual(run.final.resynchronizations, 1)
    }

    func testLateAndLostPacketsAreCountedSeparately() {
        var buffer = JitterBuffer(format: format)
        let packets = makePackets(format: format, packetCount: 79)
        var schedule = arrivals(packets.filter { ![12, 50].contains($0.index) })  // 12 and 50 lost
        schedule.append(Arrival(index: 30, bytes: packets[30].bytes, arrivalFrame: packets[30].sendFrame + 500))
        schedule.removeAll { $0.index == 30 && $0.arrivalFrame == packets[30].sendFrame }
        let run = play(schedule, packets: 79, start: packets[0].sendFrame, buffer: &buffer)
        assertPlayout(
            run.output[...], format: format, fadeFrames: buffer.fadeFrames, leadIn: Fixture.leadIn, endPacket: 79, missing: [12, 30, 50])
        XCTAssertEqual(run.final.lost, 2)
        XCTAssertEqual(run.final.late, 1)
        XCTAssertEqual(run.final.concealedFrames, 3 * 64)
    }

    func testPacketArrivingAfterTheFadeDecisionButBeforeItsFramesIsPlayed() {
        var buffer = JitterBuffer(format: format)
        let packets = makePackets(format: format, packetCount: 40)
        var schedule = arrivals(packets)
        // Reads happen at 96 + 48n and play frames [t − 272, t − 224). Packet 20 (frames 1280…1343) is first
        // needed by the read at 1536; the read at 1488 plays packet 19's frames 0…47 and, not finding packet 20,
        // fades them out. Packet 20 arrives in between.
        schedule[20].arrivalFrame = 1_500
        let run = play(schedule, packets: 40, start: packets[0].sendFrame, buffer: &buffer)
        XCTAssertEqual(run.final.late, 0)
        XCTAssertEqual(run.final.lost, 0)
        XCTAssertEqual(run.final.concealedFrames, 0)
        XCTAssertEqual(run.final.received, 40)
        // Packet 19 dips (never to silence) and recovers; packet 20 is exact from its 16th frame on.
        var lowestGain: Float = 1
        for frame in (19 * 64 + 16)..<(20 * 64 + 16) {
            let input = CounterSignal.value(frame: frame, channel: 0, channels: 2)
            let output = run.output[(Fixture.leadIn + frame) * 2]
            lowestGain = min(lowestGain, output / input)
        }
        XCTAssertEqual(lowestGain, 16.0 / 48.0, accuracy: 1e-5)
        var mismatches = 0
        for frame in (20 * 64 + 16)..<(39 * 64)
        where run.output[(Fixture.leadIn + frame) * 2] != CounterSignal.value(frame: frame, channel: 0, channels: 2) {
            mismatches += 1
        }
        XCTAssertEqual(mismatches, 0)
    }

    func testPacketArrivingOneReadTooLateIsPartlyConcealed() {
        var buffer = JitterBuffer(format: format)
        let packets = makePackets(format: format, packetCount: 40)
        var schedule = arrivals(packets)
        // The read at 1536 needs packet 20's first 32 frames; it arrives for the read at 1584 instead.
        schedule[20].arrivalFrame = 1_537
        let run = play(schedule, packets: 40, start: packets[0].sendFrame, buffer: &buffer)
        // Packet 21 came first, so packet 20 counts as reordered as well.
        XCTAssertEqual(run.results.first { $0.index == 20 }?.result, .acceptedReordered)
        XCTAssertEqual(run.final.concealedFrames, 32)
        XCTAssertEqual(run.final.lost + run.final.late, 1, "the concealed packet is counted once")
        XCTAssertEqual(run.final.received, 40)
        // Its first half is silence, its second half is played (fading in).
        let start = (Fixture.leadIn + 20 * 64) * 2
        XCTAssertTrue(run.output[start..<(start + 64)].allSatisfy { $0 == 0 })
        XCTAssertTrue(run.output[(start + 64)..<(start + 128)].allSatisfy { $0 != 0 })
    }

    func testStragglerFarBehindThePlayHeadIsLateAndDoesNotDisturbPlayback() {
        var buffer = JitterBuffer(format: format)
        let packets = makePackets(format: format, packetCount: 121)
        var schedule = arrivals(packets)
        // A second copy of packet 5 turns up 100 ms later (a duplicate held in some queue): older than anything
        // the buffer still holds. It must be dropped, not taken for the start of a new stream.
        schedule.append(Arrival(index: 5, bytes: packets[5].bytes, arrivalFrame: packets[5].sendFrame + 4_800))
        let run = play(schedule, packets: 121, start: packets[0].sendFrame, buffer: &buffer)
        XCTAssertEqual(run.results.filter { $0.index == 5 }.count, 2)
        XCTAssertEqual(run.final.resynchronizations, 1)
        XCTAssertEqual(run.final.late + run.final.duplicated, 1)
        XCTAssertEqual(run.final.lost, 0)
        XCTAssertEqual(run.final.concealedFrames, 0)
        assertPlayout(run.output[...], format: format, fadeFrames: buffer.fadeFrames, leadIn: Fixture.leadIn, endPacket: 121)
    }

    func testLateDuplicateDoesNotCancelARealLoss() {
        var buffer = JitterBuffer(format: format)
        let packets = makePackets(format: format, packetCount: 79)
        var schedule = arrivals(packets.filter { $0.index != 10 })  // packet 10 is really lost
        // A copy of packet 30, which played normally, arrives when its ring slot already holds packet 62 but it
        // is still inside the buffer's window (reads at 96 + 48n play frames [t − 272, t − 224)).
        schedule.append(Arrival(index: 30, bytes: packets[30].bytes, arrivalFrame: 4_100))
        let run = play(schedule, packets: 79, start: packets[0].sendFrame, buffer: &buffer)
        assertPlayout(run.output[...], format: format, fadeFrames: buffer.fadeFrames, leadIn: Fixture.leadIn, endPacket: 79, missing: [10])
        XCTAssertEqual(run.final.resynchronizations, 1)
        XCTAssertEqual(run.final.late + run.final.duplicated, 1)
        XCTAssertEqual(run.final.lost, 1, "packet 10 was lost; the stale copy of packet 30 must not cancel that")
    }
}
