import XCTest

@testable import TuttiSession

/// A separate-mode receiver's tracks: one per pipeline, kept across a reconnect, reused only when every track
/// has had a pipeline, and none when all are live.
final class TrackAssignmentTests: XCTestCase {
    func testEachPipelineTakesTheLowestUnusedTrackAndKeepsItAcrossAReconnect() {
        var tracks = TrackAssignment(trackCount: 3)
        XCTAssertEqual(tracks.take("h1:out"), 0)
        XCTAssertEqual(tracks.take("h2:out"), 1)
        tracks.release(0)
        XCTAssertEqual(tracks.take("h3:out"), 2, "a new pipeline takes an unused track, not h1's freed one")
        XCTAssertEqual(tracks.take("h1:out"), 0, "h1 reconnects: back on its own track")
        XCTAssertEqual(tracks.live, [0, 1, 2])
    }

    func testWhenEveryTrackHasBeenUsedTheLongestFreedIsReusedAndWhenAllAreLiveThereIsNone() {
        var tracks = TrackAssignment(trackCount: 2)
        XCTAssertEqual(tracks.take("a"), 0)
        XCTAssertEqual(tracks.take("b"), 1)
        XCTAssertNil(tracks.take("c"), "both tracks live")
        tracks.release(1)
        tracks.release(0)
        XCTAssertEqual(tracks.take("c"), 1, "b's track, freed first")
        XCTAssertEqual(tracks.owners, ["a", "c"])
        XCTAssertEqual(tracks.take("b"), 0, "b lost its track to c; a's, freed since, is the one left")
        XCTAssertNil(tracks.take("a"))
    }

    func testASecondConnectionOfALivePipelineGetsAnotherTrack() {
        var tracks = TrackAssignment(trackCount: 2)
        XCTAssertEqual(tracks.take("a"), 0)
        XCTAssertEqual(tracks.take("a"), 1, "its own track is live: a new one")
        tracks.release(5)  // not a live track: nothing changes
        XCTAssertEqual(tracks.live, [0, 1])
    }
}
