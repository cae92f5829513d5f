import TuttiIO
import XCTest

/// The wall clock's offset from the monotonic one, as capture times use it: a reading preempted between its
/// clock reads is refused, so a capture time never moves by the time the thread was away.
final class WallClockOffsetTests: XCTestCase {
    func testANarrowReadingGivesTheWallClockLessTheMidpointOfItsBracket() {
        let offset = WallClockOffset(startingAt: 0)
        XCTAssertEqual(offset.offset(before: 1_000, wall: 5_000_000_700, after: 1_400), 5_000_000_700 - 1_200)
        XCTAssertEqual(offset.refusedReadings, 0)
    }

    func testAReadingPreemptedBetweenItsClockReadsIsRefusedAndTheLastGoodOffsetStands() {
        let offset = WallClockOffset(startingAt: 0)
        let good = offset.offset(before: 10_000, wall: 7_000_010_100, after: 10_200)
        XCTAssertEqual(good, 7_000_000_000)
        // The thread was away 3 ms between the wall read and the second monotonic read: the naive offset (wall −
        // after) would be 3 ms short, a capture time 144 frames early at 48 kHz.
        let preempted = offset.offset(before: 20_000, wall: 7_000_020_050, after: 3_020_100)
        XCTAssertEqual(preempted, good)
        // A bracket just wider than the limit is refused too; one at the limit is taken.
        let limit = WallClockOffset.widestBracketNanoseconds
        XCTAssertEqual(offset.offset(before: 30_000, wall: 9_000_000_000, after: 30_000 + limit + 1), good)
        XCTAssertEqual(offset.offset(before: 30_000, wall: 9_000_000_000, after: 30_000 + limit), 9_000_000_000 - 30_000 - limit / 2)
        XCTAssertEqual(offset.refusedReadings, 2)
    }

    func testABracketThatRunsBackwardsIsRefused() {
        let offset = WallClockOffset(startingAt: 42)
        XCTAssertEqual(offset.offset(before: 5_000, wall: 1_000_000, after: 4_000), 42)
        XCTAssertEqual(offset.refusedReadings, 1)
    }

    func testTheRealOffsetIsTheWallClockLessTheMonotonicOne() {
        let offset = WallClockOffset()
        let monotonic = MonotonicClock().now().nanoseconds
        let expected = WallClock.nanoseconds() - monotonic
        // Both readings come from the same two clocks moments apart; they differ by the time between the reads
        // and any slew, far under a second.
        XCTAssertEqual(Double(offset.current()), Double(expected), accuracy: 1e9)
        XCTAssertGreaterThan(offset.current(), 1_000_000_000 * 1_600_000_000 - monotonic, "the wall clock counts from 1970")
    }
}
