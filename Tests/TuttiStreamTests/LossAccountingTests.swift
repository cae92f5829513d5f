import TuttiStream
import XCTest

/// The jitter buffer's loss counts never go below zero: a late packet whose count another late packet already
/// took back (one the ring could no longer tell apart, under a stall) is counted as such, not subtracted
/// again. Before, that subtraction trapped: a receiving peer crashed with 256 streams on one starved core.
final class LossAccountingTests: XCTestCase {
    func testALatePacketWhoseCountIsGoneLeavesTheCountsAtZero() {
        var loss = LossAccounting(capacity: 8)
        // Passed missing with nothing newer arrived: pending.
        loss.passedMissing(index: 1, packetStart: 64, slot: 1, newestTimestamp: 0, playing: true)
        XCTAssertEqual(loss.pending, 1)
        // A packet from further back than the ring reaches takes a pending count back.
        loss.arrivedAfterPassingLongAgo()
        XCTAssertEqual(loss.pending, 0)
        // The packet passed in slot 1 arrives after all: its count is already gone.
        XCTAssertTrue(loss.wasMissed(slot: 1, timestamp: 64))
        loss.arrivedAfterAll(slot: 1)
        XCTAssertEqual(loss.pending, 0)
        XCTAssertEqual(loss.lost, 0)
        XCTAssertEqual(loss.countsAlreadyTaken, 1)
        XCTAssertFalse(loss.wasMissed(slot: 1, timestamp: 64), "taken back once only")

        // The same for a lost one whose count a packet of a loss of signal took back.
        loss.passedMissing(index: 2, packetStart: 128, slot: 2, newestTimestamp: 192, playing: true)
        XCTAssertEqual(loss.lost, 1)
        loss.arrivedAfterSilence()
        loss.arrivedAfterAll(slot: 2)
        XCTAssertEqual(loss.lost, 0)
        XCTAssertEqual(loss.countsAlreadyTaken, 2)
        loss.arrivedAfterSilence()
        XCTAssertEqual(loss.countsAlreadyTaken, 3)
    }

    func testALatePacketIsTakenBackOutOfItsOwnCount() {
        var loss = LossAccounting(capacity: 8)
        loss.passedMissing(index: 1, packetStart: 64, slot: 1, newestTimestamp: 128, playing: true)
        loss.passedMissing(index: 2, packetStart: 128, slot: 2, newestTimestamp: 0, playing: true)
        XCTAssertEqual(loss.lost, 1)
        XCTAssertEqual(loss.pending, 1)
        loss.arrivedAfterAll(slot: 1)
        loss.arrivedAfterAll(slot: 2)
        XCTAssertEqual(loss.lost, 0)
        XCTAssertEqual(loss.pending, 0)
        XCTAssertEqual(loss.countsAlreadyTaken, 0)
    }
}
