// The session summary `tutti-link-pcap sessions` prints, on the reference captures of the Link wire tests
// (Tests/TuttiClockTests/Fixtures/link-captures, described in the README beside them).

import TuttiLinkCapture
import XCTest

final class LinkSessionSummaryTests: XCTestCase {
    static func summary(_ name: String) throws -> LinkSessionSummary {
        var components = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
        components.removeLast(2)  // "TuttiLinkCaptureTests", this file
        let path = components.joined(separator: "/") + "/TuttiClockTests/Fixtures/link-captures/\(name).pcap"
        return LinkSessionSummary(messages: LinkSessionSummary.messages(in: try PacketCapture.datagrams(inFile: path)))
    }

    /// Two peers enabled 24 ms apart: both found a session and end in the one with the smaller id (0x27… <
    /// 0x28…), B's, at B's tempo; then A leaves and B, left alone, re-founds under a new NodeId and leaves.
    func testTieBreakEndsInTheSmallerFoundedSession() throws {
        let summary = try Self.summary("tie-break-lower-session-id")
        XCTAssertEqual(summary.nodes.map(\.node), ["2824245945425e5e", "276b5f2d58727026", "7a292d7530624322"])
        XCTAssertEqual(summary.nodes.map(\.src), ["198.18.1.1", "198.18.1.2", "198.18.1.2"])
        XCTAssertEqual(summary.nodes[1].firstT, 0.023936)
        XCTAssertEqual(summary.nodes[0].firstSess, "2824245945425e5e")
        XCTAssertEqual(summary.nodes[0].lastSess, "276b5f2d58727026", "A adopted B's session")
        XCTAssertEqual(summary.nodes[0].lastType, "BYEBYE")
        XCTAssertEqual(summary.smallestFounded, "276b5f2d58727026")
        XCTAssertEqual(summary.finalSessions, ["276b5f2d58727026"])
        XCTAssertTrue(summary.oneSession)
        XCTAssertEqual(summary.finalFounder?.src, "198.18.1.2")
        XCTAssertEqual(summary.finalFounder?.firstTempo, 89.999955)
        XCTAssertEqual(summary.olderFounderSession, "2824245945425e5e")
        XCTAssertEqual(summary.captureS, 2.527701)
    }

    /// A joiner adopts the running session: B founds its own, then announces A's, which is the one left.
    func testALateJoinerAdoptsTheFoundersSession() throws {
        let summary = try Self.summary("late-joiner-startstop")
        XCTAssertEqual(summary.olderFounderSession, "6a6f2a7e384d3422")
        XCTAssertEqual(summary.nodes[1].firstSess, summary.nodes[1].node)
        XCTAssertEqual(summary.nodes[1].lastSess, "6a6f2a7e384d3422")
        XCTAssertEqual(summary.finalSessions, ["6a6f2a7e384d3422"])
        XCTAssertEqual(summary.finalFounder?.firstTempo, 120)
        XCTAssertEqual(summary.smallestFounded, "3a3f2e426a5d7b41", "the smaller id does not win against an older session")
    }

    /// Every node's times are relative to the first message; when everybody has left (BYEBYE, or silent for
    /// the last second) no session is final.
    func testTimesAreRelativeToTheFirstMessage() throws {
        let summary = try Self.summary("two-peers-join-tempo-startstop-bye")
        XCTAssertEqual(summary.nodes.first?.firstT, 0)
        XCTAssertTrue(summary.nodes.allSatisfy { $0.firstT <= $0.lastT && $0.lastT <= summary.captureS })
        XCTAssertEqual(summary.nodes[1].lastSess, summary.nodes[0].node, "B joined A")
        XCTAssertEqual(summary.foundedSessions.count, 3)
        XCTAssertEqual(summary.finalSessions, [])
        XCTAssertFalse(summary.oneSession)
        XCTAssertNil(summary.finalFounder)
        XCTAssertNil(summary.convergedSAfterLastFounder)
    }

    /// The JSON keys the lab scripts read (`final_founder.src`, `final_founder.first_tempo` among them).
    func testEncodesEveryKeyTheScriptsRead() throws {
        let summary = try Self.summary("tie-break-lower-session-id")
        let text = String(decoding: try JSONEncoder().encode(summary), as: UTF8.self)
        for key in [
            "founder_gap_s", "one_session", "final_sessions", "smallest_founded", "older_founder_session",
            "converged_s_after_last_founder", "nodes", "capture_s", "final_founder",
        ] {
            XCTAssertTrue(text.contains("\"\(key)\":"), key)
        }
        XCTAssertTrue(text.contains("\"first_tempo\":89.999955"), text)
        let empty = String(decoding: try JSONEncoder().encode(LinkSessionSummary(messages: [])), as: UTF8.self)
        XCTAssertFalse(empty.contains("smallest_founded"), "a missing figure is left out: \(empty)")
    }

    /// Bad input is a typed error, not a crash.
    func testAFileThatIsNotACaptureIsATypedError() {
        XCTAssertThrowsError(try PacketCapture.datagrams(in: Array("not a capture".utf8))) { error in
            XCTAssertEqual(error as? PacketCaptureError, .notACaptureFile(magic: 0x2074_6f6e))
        }
        XCTAssertThrowsError(try PacketCapture.datagrams(in: [0xd4, 0xc3])) { error in
            XCTAssertEqual(error as? PacketCaptureError, .truncatedFile(offset: 0))
        }
    }
}
