import TuttiClock
import TuttiTesting
import XCTest

/// The pure session rules: start/stop acceptance and the late joiner (6.5), and the comparison that decides
/// which of two meeting sessions survives (6.3).
final class LinkMathSessionRulesTests: XCTestCase {
    private let ours = SessionID(rawValue: 0x2824_2459_4542_5E5E)
    private let theirs = SessionID(rawValue: 0x276B_5F2D_5872_7026)

    // MARK: Start/stop (6.5)

    func testNewestStartStopTimestampWins() {
        let current = StartStopState(isPlaying: true, beats: Beats(4), timestamp: 505_005)
        XCTAssertTrue(StartStopState(isPlaying: false, beats: Beats(8), timestamp: 505_006).supersedes(current))
        XCTAssertFalse(StartStopState(isPlaying: false, beats: Beats(8), timestamp: 505_005).supersedes(current))
        XCTAssertFalse(StartStopState(isPlaying: false, beats: Beats(8), timestamp: 505_004).supersedes(current))
        XCTAssertTrue(current.supersedes(.default))
    }

    func testAnnouncedStartStopIsAdoptedOnlyFromOurSessionAndOnlyWhenNewAndNewer() {
        let current = StartStopState(isPlaying: false, beats: Beats(0), timestamp: 1_000)
        let newer = StartStopState(isPlaying: true, beats: Beats(4), timestamp: 2_000)
        XCTAssertTrue(current.adoptsAnnounced(newer, senderSession: ours, ownSession: ours, pairAlreadyHeld: false))
        XCTAssertFalse(current.adoptsAnnounced(newer, senderSession: theirs, ownSession: ours, pairAlreadyHeld: false))
        XCTAssertFalse(current.adoptsAnnounced(newer, senderSession: ours, ownSession: ours, pairAlreadyHeld: true))
        XCTAssertFalse(current.adoptsAnnounced(current, senderSession: ours, ownSession: ours, pairAlreadyHeld: false))
    }

    /// Capture `late-joiner-startstop.pcap`: A plays (timestamp 505005) for 3 s; B, in its own session, sees
    /// the state (other session: rejected), joins A (start/stop reset), keeps receiving the same pair (held:
    /// not evaluated) and stays stopped until A's next change.
    func testLateJoinerStaysStoppedUntilTheNextChange() {
        let sessionA = theirs
        let sessionB = ours
        let playing = StartStopState(isPlaying: true, beats: Beats(microBeats: 1_010_010), timestamp: 505_005)
        var b = StartStopState.default
        XCTAssertFalse(
            b.adoptsAnnounced(playing, senderSession: sessionA, ownSession: sessionB, pairAlreadyHeld: false))
        b = b.afterSwitchingSession(from: sessionB, to: sessionA)
        XCTAssertEqual(b, .default)
        for _ in 0..<12 {  // 3 s of ALIVEs
            XCTAssertFalse(
                b.adoptsAnnounced(playing, senderSession: sessionA, ownSession: sessionA, pairAlreadyHeld: true))
        }
        let stopped = StartStopState(isPlaying: false, beats: Beats(20), timestamp: 3_600_000)
        XCTAssertTrue(b.adoptsAnnounced(stopped, senderSession: sessionA, ownSession: sessionA, pairAlreadyHeld: false))
        // A Tutti peer that prefers to pick the running state up treats the pair as new after joining.
        XCTAssertTrue(b.adoptsAnnounced(playing, senderSession: sessionA, ownSession: sessionA, pairAlreadyHeld: false))
        // Staying in a session keeps the state.
        XCTAssertEqual(playing.afterSwitchingSession(from: sessionA, to: sessionA), playing)
    }

    func testLocalStartStopTakesTheBeatAtTheEventAndTheGhostTimeOfTheCommit() {
        let clock = LinkSessionClock.founded(hostTimeAtEnable: 2_000_000, tempo: Tempo(bpm: 120))
        // Start at the next bar (quantum 4) from host time 3.3 s (session beat 2.6), committed now.
        let now: Int64 = 3_300_000
        let bar = clock.nextBeats(matchingPhaseOf: Beats(0), quantum: Beats(4), atOrAfterHostTime: now)
        XCTAssertEqual(bar, Beats(4))
        let state = clock.startStop(isPlaying: true, atHostTime: clock.hostTime(atBeats: bar), committedAtHostTime: now)
        XCTAssertEqual(state, StartStopState(isPlaying: true, beats: Beats(4), timestamp: 1_300_000))
        XCTAssertEqual(clock.hostTime(of: state), 4_000_000)
        // A tempo change before the event moves it in time (the beat stays, 6.5).
        let faster = clock.changingTempo(
            to: Tempo(bpm: 150), keepingBeatsContinuousAtHostTime: 3_500_000, committedAtHostTime: 3_500_000)
        XCTAssertEqual(faster.hostTime(of: state), 3_500_000 + 400_000)  // 1 beat left at 150 bpm
    }

    // MARK: Session comparison (6.3)

    /// Capture 1: B enabled 1.9 s after A. A measures B (diff about -1.94 s): stays. B measures A (about
    /// +1.94 s): joins, whatever the ids.
    func testOlderSessionWinsOutsideTheBand() {
        for (a, b) in [(theirs, ours), (ours, theirs)] {
            XCTAssertEqual(
                LinkSessionComparison.decide(ghostDifference: -1_940_000, otherSession: b, ownSession: a), .stay)
            XCTAssertEqual(
                LinkSessionComparison.decide(ghostDifference: 1_940_000, otherSession: a, ownSession: b), .join)
        }
    }

    /// Capture `tie-break-lower-session-id.pcap`: 0x276b5f2d58727026 beat 0x2824245945425e5e although the
    /// latter was 24 ms older.
    func testSmallerSessionIDWinsInsideTheBand() {
        // The older (ours, 0x2824...) sees the younger one's ghost clock 24 ms behind; it is smaller: join.
        XCTAssertEqual(
            LinkSessionComparison.decide(ghostDifference: -24_000, otherSession: theirs, ownSession: ours), .join)
        // The younger (0x276b...) sees the older 24 ms ahead; the older one's id is larger: stay.
        XCTAssertEqual(
            LinkSessionComparison.decide(ghostDifference: 24_000, otherSession: ours, ownSession: theirs), .stay)
        XCTAssertLessThan(theirs, ours)
        XCTAssertEqual(theirs.bytes, [0x27, 0x6B, 0x5F, 0x2D, 0x58, 0x72, 0x70, 0x26])
    }

    func testBandEdges() {
        let decide = LinkSessionComparison.decide(ghostDifference:otherSession:ownSession:)
        XCTAssertEqual(decide(500_001, ours, theirs), .join)
        XCTAssertEqual(decide(500_000, ours, theirs), .stay)  // exactly 500 ms: neither rule applies
        XCTAssertEqual(decide(500_000, theirs, ours), .stay)
        XCTAssertEqual(decide(499_999, theirs, ours), .join)
        XCTAssertEqual(decide(499_999, ours, theirs), .stay)
        XCTAssertEqual(decide(-499_999, theirs, ours), .join)
        XCTAssertEqual(decide(-500_000, theirs, ours), .stay)
        XCTAssertEqual(decide(0, theirs, ours), .join)
        XCTAssertEqual(decide(0, ours, theirs), .stay)
        XCTAssertEqual(decide(.min, theirs, ours), .stay)
        XCTAssertEqual(decide(.max, ours, theirs), .join)
        XCTAssertEqual(decide(9_000_000, ours, ours), .stay)  // the same session never "joins" itself
    }

    /// Seen from both sides with consistent measurements (d and -d), exactly one side moves, except at
    /// exactly ±500 ms, where both stay.
    func testExactlyOneSideMovesForConsistentMeasurements() {
        var generator = SeededGenerator(seed: 0x5E55)
        for _ in 0..<100_000 {
            let a = NodeID.random(using: &generator)
            let b = NodeID.random(using: &generator)
            guard a != b else { continue }
            let d = Int64.random(in: -1_500_000...1_500_000, using: &generator)
            let aJoins = LinkSessionComparison.decide(ghostDifference: d, otherSession: b, ownSession: a) == .join
            let bJoins = LinkSessionComparison.decide(ghostDifference: -d, otherSession: a, ownSession: b) == .join
            XCTAssertTrue(aJoins != bJoins, "d = \(d)")
        }
        for d: Int64 in [500_000, -500_000] {
            XCTAssertEqual(
                LinkSessionComparison.decide(ghostDifference: d, otherSession: ours, ownSession: theirs), .stay)
            XCTAssertEqual(
                LinkSessionComparison.decide(ghostDifference: -d, otherSession: theirs, ownSession: ours), .stay)
        }
    }

    /// From measured transforms: a founder (ghost 0 at its enable) meets a session founded 1.94 s earlier on
    /// another host clock.
    func testDecisionFromMeasuredTransforms() {
        let own = GhostTransform.founder(hostTimeAtEnable: 1_088_926_769)
        // The other session's ghost clock, measured: host + offset, reading 1.94 s more than ours.
        let measured = GhostTransform.measured(offset: own.intercept + 1_940_000)
        XCTAssertEqual(
            LinkSessionComparison.ghostDifference(
                otherTransform: measured, ownTransform: own, atHostTime: 1_089_000_000), 1_940_000)
        XCTAssertEqual(
            LinkSessionComparison.decide(
                otherSession: ours, otherTransform: measured, ownSession: theirs, ownTransform: own,
                atHostTime: 1_089_000_000),
            .join)
        XCTAssertEqual(
            LinkSessionComparison.decide(
                otherSession: theirs, otherTransform: own, ownSession: ours, ownTransform: measured,
                atHostTime: 1_089_000_000),
            .stay)
    }
}
