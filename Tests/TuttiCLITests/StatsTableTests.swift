import Foundation
import TuttiCore
import TuttiWire
import XCTest

@testable import tutti

/// `tutti stats`'s table, laid out from a fixed report: exact text at 80 columns and with --wide.
final class StatsTableTests: XCTestCase {
    private static let format = StreamFormat(
        sampleRate: 48_000, channels: 2, sampleFormat: .l24, packetFrames: 64, targetLatencyFrames: 240)

    /// Two peers of one connection, a second connection to a long-named port (a duplicate, told apart by its
    /// ID), and a peer that does not answer.
    static let report: StatsReport = {
        let source = PortReference(peer: "stage", port: "out")
        var sending = ConnectionStatistics(
            id: ConnectionID("3f9a0c1e5b7d2a48")!, role: .sending, source: source,
            destination: PortReference(peer: "foh", port: "in"), state: .playing, format: format, packetsSent: 7_502,
            targetMilliseconds: 5)
        sending.peakDBFS = -6.0206
        sending.rmsDBFS = -9.0309
        var receiving = ConnectionStatistics(
            id: ConnectionID("3f9a0c1e5b7d2a48")!, role: .receiving, source: source,
            destination: PortReference(peer: "foh", port: "in"), state: .playing, format: format, packetsReceived: 7_501,
            packetsLost: 3, packetsLate: 1, packetsReordered: 2, jitterMilliseconds: 0.123, bufferMilliseconds: 5.31,
            targetMilliseconds: 5, concealedFrames: 192, latencyMilliseconds: 6.518)
        receiving.peakDBFS = -6.0207
        receiving.rmsDBFS = -9.0308
        receiving.driftPartsPerMillion = 1.24
        receiving.resamplingRatio = 1.0000012
        var duplicate = ConnectionStatistics(
            id: ConnectionID("c04d11e2a9b3f576")!, role: .receiving, source: source,
            destination: PortReference(peer: "front-of-house-left-console", port: "monitor-mix"), state: .buffering,
            format: format, packetsReceived: 12, targetMilliseconds: 5)
        duplicate.peakDBFS = -120
        duplicate.rmsDBFS = -120
        return StatsReport(
            time: 1_700_000_000,
            peers: [
                .init(peer: "foh", statistics: [receiving]),
                .init(peer: "front-of-house-left-console", statistics: [duplicate]),
                .init(peer: "stage", statistics: [sending]),
                .init(peer: "backstage", statistics: [], error: "not answering: cannot reach peer at 198.18.0.4:47123: connection refused"),
            ])
    }()

    func testAt80ColumnsLongNamesAreCutAndTheLeastImportantColumnsLeftOut() {
        let lines = Self.report.table.lines(width: 80)
        XCTAssertEqual(
            lines.joined(separator: "\n"),
            """
            ID       PEER        END  CONNECTION       STATE     LOST LATE LATENCY  PEAK/RMS
                                                                 pkts pkts      ms      dBFS
            3f9a0c1e foh         recv stage:out→foh:in playing      3    1    6.52 -6.0/-9.0
                     drift +1.2 ppm, ratio 1.000001
            c04d11e2 front-of-h… recv stage:ou…tor-mix buffering    0    0       - -inf/-inf
            3f9a0c1e stage       send stage:out→foh:in playing      -    -       - -6.0/-9.0
            -        backstage                         no answer
                     not answering: cannot reach peer at 198.18.0.4:47123: connection refus…
            (7 more columns with --wide)
            """)
        XCTAssertEqual(lines.map(TextTable.displayWidth).max(), 80)
    }

    func testWideShowsEveryColumnAndWholeNames() {
        XCTAssertEqual(
            Self.report.table.lines(width: nil).joined(separator: "\n"),
            """
            ID       PEER                        END  CONNECTION                                        STATE     SENT/RECV LOST LATE  DUP REORD JITTER BUF/TARGET UNDERRUNS CONCEALED LATENCY  PEAK/RMS
                                                                                                                       pkts pkts pkts pkts  pkts     ms         ms                  ms      ms      dBFS
            3f9a0c1e foh                         recv stage:out→foh:in                                  playing        7501    3    1    0     2   0.12    5.3/5.0         0       4.0    6.52 -6.0/-9.0
                     drift +1.2 ppm, ratio 1.000001
            c04d11e2 front-of-house-left-console recv stage:out→front-of-house-left-console:monitor-mix buffering        12    0    0    0     0   0.00    0.0/5.0         0       0.0       - -inf/-inf
            3f9a0c1e stage                       send stage:out→foh:in                                  playing        7502    -    -    -     -      -          -         -         -       - -6.0/-9.0
            -        backstage                                                                          no answer
                     not answering: cannot reach peer at 198.18.0.4:47123: connection refused
            """)
    }

    /// Short names (the usual case) leave room for more columns: at 100 columns (`stats` through a pipe)
    /// only the counts of duplicates, reordering, underruns and concealment are left out.
    func testShortNamesAt100Columns() {
        let report = StatsReport(time: 0, peers: [Self.report.peers[0], Self.report.peers[2]])
        XCTAssertEqual(
            report.table.lines(width: 100).joined(separator: "\n"),
            """
            ID       PEER  END  CONNECTION       STATE   SENT/RECV LOST LATE JITTER BUF/TARGET LATENCY  PEAK/RMS
                                                              pkts pkts pkts     ms         ms      ms      dBFS
            3f9a0c1e foh   recv stage:out→foh:in playing      7501    3    1   0.12    5.3/5.0    6.52 -6.0/-9.0
                     drift +1.2 ppm, ratio 1.000001
            3f9a0c1e stage send stage:out→foh:in playing      7502    -    -      -          -       - -6.0/-9.0
            (4 more columns with --wide)
            """)
    }

    func testNoConnections() {
        XCTAssertEqual(StatsReport(time: 0, peers: [.init(peer: "foh", statistics: [])]).table.lines(width: 80), ["(no connections)"])
    }

    func testASmallNegativeDriftReadsPlusZero() {
        var stat = Self.report.peers[0].statistics[0]
        stat.driftPartsPerMillion = -0.01
        XCTAssertEqual(StatsReport.details(of: stat), "drift +0.0 ppm, ratio 1.000001")
        stat.driftPartsPerMillion = -0.06
        XCTAssertEqual(StatsReport.details(of: stat), "drift -0.1 ppm, ratio 1.000001")
    }

    func testTheClocksAlignmentShowsInTheDetailsAndTheJSON() {
        var stat = Self.report.peers[0].statistics[0]
        stat.deviceAlignmentMilliseconds = 0.375
        stat.deviceAlignmentMoves = 1
        XCTAssertEqual(
            StatsReport.details(of: stat),
            "clock follows the stream (waited 0.38 ms at its start, moved 1 time since); drift +1.2 ppm, ratio 1.000001")
        let encoded = String(decoding: try! JSONEncoder().encode(stat), as: UTF8.self)
        XCTAssertTrue(encoded.contains("\"deviceAlignmentMilliseconds\":0.375"), encoded)
        let decoded = try! JSONDecoder().decode(ConnectionStatistics.self, from: Data(encoded.utf8))
        XCTAssertEqual(decoded.deviceAlignmentMilliseconds, 0.375)
    }

    func testTheDriftGroupRoleAndStrayDatagramsShowInTheDetails() {
        var stat = Self.report.peers[0].statistics[0]
        stat.driftGroupRole = .follows
        stat.strayDatagrams = 0
        XCTAssertEqual(StatsReport.details(of: stat), "drift +1.2 ppm, ratio 1.000001 (follows its clock's group)")
        stat.driftGroupRole = .left
        stat.strayDatagrams = 17
        XCTAssertEqual(
            StatsReport.details(of: stat), "drift +1.2 ppm, ratio 1.000001 (left its clock's group); socket dropped 17 stray datagrams")
        // Old peers send neither field; the JSON names them as they are.
        let encoded = String(decoding: try! JSONEncoder().encode(stat), as: UTF8.self)
        XCTAssertTrue(encoded.contains("\"driftGroupRole\":\"left\"") && encoded.contains("\"strayDatagrams\":17"), encoded)
    }

    /// A stalled or late-woken device clock shows at the end it happened, the sender's included (its late
    /// wake-ups are what makes the far end's packets late).
    func testTheDeviceClocksStallsAndLateWakeUpsShowAtEitherEnd() {
        var sending = Self.report.peers[2].statistics[0]
        XCTAssertNil(StatsReport.deviceNote(of: sending))
        sending.deviceLateWakes = 0
        sending.deviceWorstWakeMilliseconds = 0
        XCTAssertNil(StatsReport.deviceNote(of: sending), "a clock that never woke late says nothing")
        sending.deviceLateWakes = 26
        sending.deviceWorstWakeMilliseconds = 33.0964
        XCTAssertEqual(StatsReport.deviceNote(of: sending), "device clock woke late 26 times, the latest 33.10 ms late")
        sending.deviceOverruns = 77
        sending.deviceLateWakes = 1
        XCTAssertEqual(
            StatsReport.deviceNote(of: sending),
            "device stalled: 77 periods skipped; device clock woke late 1 time, the latest 33.10 ms late")
        let report = StatsReport(time: 0, peers: [.init(peer: "stage", statistics: [sending])])
        let lines = report.table.lines(width: nil)
        XCTAssertEqual(
            lines.last?.trimmingCharacters(in: .whitespaces),
            "device stalled: 77 periods skipped; device clock woke late 1 time, the latest 33.10 ms late")
    }

    func testCOLUMNSSetsTheWidth() {
        let saved = getenv("COLUMNS").map { String(cString: $0) }
        defer { if let saved { setenv("COLUMNS", saved, 1) } else { unsetenv("COLUMNS") } }
        setenv("COLUMNS", "72", 1)
        XCTAssertEqual(StatsCommand.terminalWidth(), 72)
        setenv("COLUMNS", "wide", 1)  // not a number: the terminal's width, or 100 when not a terminal
        XCTAssertNotEqual(StatsCommand.terminalWidth(), 0)
        if isatty(1) == 0 { XCTAssertEqual(StatsCommand.terminalWidth(), 100) }
    }

    func testLevelsRead() {
        XCTAssertEqual(StatsReport.level(peak: -0.04, rms: -3.05), "-0.0/-3.1")
        XCTAssertEqual(StatsReport.level(peak: 2.5, rms: -119.9), "2.5/-119.9")
        XCTAssertEqual(StatsReport.level(peak: -120, rms: -120), "-inf/-inf")
        XCTAssertEqual(StatsReport.level(peak: nil, rms: nil), "-")
    }

    func testCellsAreCutToTheirDisplayWidth() {
        XCTAssertEqual(TextTable.truncate("front-of-house", to: 8, .end), "front-o…")
        XCTAssertEqual(TextTable.truncate("stage:out→foh:monitor", to: 11, .middle), "stage…nitor")
        XCTAssertEqual(TextTable.truncate("short", to: 8, .middle), "short")
        XCTAssertEqual(TextTable.displayWidth("舞台:out"), 8)
        XCTAssertEqual(TextTable.truncate("舞台舞台", to: 6, .end), "舞台…")
    }

    /// The JSON of one refresh: one object, `time` and `peers`, each peer's statistics or its error.
    func testJSONShape() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let report = StatsReport(time: 12.5, peers: [.init(peer: "x", statistics: [], error: "not answering: refused")])
        XCTAssertEqual(
            String(decoding: try encoder.encode(report), as: UTF8.self),
            #"{"peers":[{"error":"not answering: refused","peer":"x","statistics":[]}],"time":12.5}"#)
        let decoded = try JSONDecoder().decode(StatsReport.self, from: try encoder.encode(Self.report))
        XCTAssertEqual(decoded, Self.report)
    }

    /// A peer from before the meter sends no level: it decodes, and the table shows `-`.
    func testStatisticsWithoutLevelsFromAnOlderPeer() throws {
        var object = try XCTUnwrap(
            JSONSerialization.jsonObject(with: try JSONEncoder().encode(Self.report.peers[2].statistics[0])) as? [String: Any])
        XCTAssertNotNil(object.removeValue(forKey: "peakDBFS"))
        XCTAssertNotNil(object.removeValue(forKey: "rmsDBFS"))
        let old = try JSONDecoder().decode(ConnectionStatistics.self, from: try JSONSerialization.data(withJSONObject: object))
        XCTAssertNil(old.peakDBFS)
        XCTAssertNil(old.rmsDBFS)
        let table = StatsReport(time: 0, peers: [.init(peer: "stage", statistics: [old])]).table.lines(width: 80)
        XCTAssertEqual(table[2], "3f9a0c1e stage send stage:out→foh:in playing    -    -       -        -")
    }
}
