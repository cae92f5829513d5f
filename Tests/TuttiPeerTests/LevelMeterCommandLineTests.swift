import Foundation
import TuttiPeer
import TuttiTesting
import TuttiWire
import XCTest

/// Levels in `tutti stats --json`, end to end: two peers on loopback, the `tutti` binary connecting them and
/// asking for statistics.
final class LevelMeterCommandLineTests: XCTestCase {
    /// One line of `tutti stats --json`.
    private struct Report: Decodable {
        struct PeerStatistics: Decodable {
            var peer: String
            var statistics: [ConnectionStatistics]
            var error: String?
        }
        var time: Double
        var peers: [PeerStatistics]
    }

    /// A tone of amplitude 0.5 is −6.02 dBFS (20·log10 0.5): `stats --json` shows a peak of −6.0 ± 0.1 dBFS and
    /// an RMS 3.01 dB lower, at the sender (what it sends) and at the receiver (what the connection plays,
    /// through drift compensation's resampler, on by default).
    func testAToneAtMinus6DBFSShowsAPeakOfMinus6InStatsJSON() async throws {
        try TuttiBinary.require()
        var lab = LoopbackPeers()
        let sender = try await lab.start("a", ports: [.toneSender(name: "out", amplitude: 0.5, sampleRates: [48_000])])
        let receiver = try await lab.start("b", ports: [.receiver(name: "in", sink: .null, channels: 2, sampleRates: [48_000])])
        let session = [
            "--no-discovery", "--peer", "127.0.0.1:\(sender.controlPort)", "--peer", "127.0.0.1:\(receiver.controlPort)", "--browse", "0.5",
        ]
        func tutti(_ arguments: [String]) async throws -> (status: Int32, output: String, error: String) {
            try await TuttiBinary.run(arguments + session)
        }
        func stats() async throws -> Report {
            let result = try await tutti(["stats", "--json"])
            XCTAssertEqual(result.status, 0, result.error)
            let lines = result.output.split(separator: "\n")
            XCTAssertEqual(lines.count, 1, "one JSON object per refresh: \(result.output)")
            return try JSONDecoder().decode(Report.self, from: Data(result.output.utf8))
        }

        let connected = try await tutti(["connect", "a:out", "b:in"])
        XCTAssertEqual(connected.status, 0, connected.error)

        // Levels appear once a 0.5 s window completes; wait for the receiver to play, then for two more windows,
        // so that the window read holds only the steady tone (not the silence before the buffer filled).
        var playing = false
        for _ in 0..<50 where !playing {
            try await Task.sleep(for: .milliseconds(100))
            playing = try await stats().peers.flatMap(\.statistics).contains { $0.role == .receiving && $0.state == .playing }
        }
        XCTAssertTrue(playing, "the receiver plays within 5 s")
        try await Task.sleep(for: .milliseconds(1_100))

        let report = try await stats()
        XCTAssertEqual(report.peers.map(\.peer).sorted(), ["a", "b"])
        XCTAssertTrue(report.peers.allSatisfy { $0.error == nil })
        let expectedPeak = 20 * log10(0.5)  // −6.0206
        let expectedRMS = expectedPeak - 10 * log10(2.0)  // −9.0309
        for role in [ConnectionRole.sending, .receiving] {
            let stat = try XCTUnwrap(report.peers.flatMap(\.statistics).first { $0.role == role }, "\(role)")
            let peak = try XCTUnwrap(stat.peakDBFS, "\(role) has a peak")
            let rms = try XCTUnwrap(stat.rmsDBFS, "\(role) has an RMS")
            print("level \(role): peak \(peak) dBFS, RMS \(rms) dBFS")
            XCTAssertEqual(peak, -6.0, accuracy: 0.1, "\(role)")
            XCTAssertEqual(peak, expectedPeak, accuracy: 0.1, "\(role)")
            XCTAssertEqual(rms, expectedRMS, accuracy: 0.1, "\(role)")
        }
        await lab.stopAll()
    }
}
