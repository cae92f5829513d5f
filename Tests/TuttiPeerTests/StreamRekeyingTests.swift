import Foundation
import TuttiCore
import TuttiPeer
import TuttiSecurity
import TuttiTesting
import TuttiWire
import XCTest

/// A live members' stream changes its SRTP key without losing a packet: on its schedule, and when the session
/// key changes (the peers reread their key file).
final class StreamRekeyingTests: XCTestCase {
    private func connect(_ sender: Peer, _ receiver: Peer) async throws {
        let request = ConnectRequest(
            source: PortReference(peer: "a", port: "out"), destination: PortReference(peer: "b", port: "in"),
            destinationEndpoints: [receiver.endpoint], options: ConnectOptions(latencyMilliseconds: 20))
        let response = try await TestControl.send(.connect(request), to: sender.endpoint, timeout: .seconds(5))
        guard case .connected = response else { return XCTFail("expected connected, got \(response)") }
    }

    private func figures(_ peer: Peer, _ role: ConnectionRole) async throws -> ConnectionStatistics? {
        guard case .statistics(let list) = try await TestControl.send(.statistics, to: peer.endpoint) else { return nil }
        return list.first { $0.role == role }
    }

    /// Waits until both ends have switched keys at least `count` times, and to the same count; their figures.
    private func rekeyed(
        _ sender: Peer, _ receiver: Peer, atLeast count: UInt64, within seconds: Int
    ) async throws -> (sent: ConnectionStatistics, received: ConnectionStatistics) {
        var last: (ConnectionStatistics, ConnectionStatistics)?
        for _ in 0..<(seconds * 10) {
            try await Task.sleep(for: .milliseconds(100))
            guard let sent = try await figures(sender, .sending), let received = try await figures(receiver, .receiving) else { continue }
            last = (sent, received)
            if let keys = sent.rekeys, keys >= count, received.rekeys == keys { break }
        }
        return try XCTUnwrap(last)
    }

    func testAStreamOnAOneSecondScheduleSwitchesKeysWithoutLosingAPacket() async throws {
        var lab = LoopbackPeers()
        let sender = try await lab.start("a", ports: [.toneSender(name: "out")]) { $0.lifecycleTimeouts.rekeyInterval = .seconds(1) }
        let receiver = try await lab.start("b", ports: [.receiver(name: "in", sink: .null)])
        try await connect(sender, receiver)
        let (sent, received) = try await rekeyed(sender, receiver, atLeast: 3, within: 15)
        XCTAssertGreaterThanOrEqual(sent.rekeys ?? 0, 3)
        XCTAssertEqual(received.rekeys, sent.rekeys, "the receiver switched with the sender")
        XCTAssertEqual(received.packetsForged, 0, "no packet of either key refused")
        XCTAssertEqual(received.packetsReplayed, 0)
        XCTAssertEqual(received.packetsInvalid, 0)
        XCTAssertEqual(received.packetsLost, 0)
        XCTAssertEqual(received.state, .playing)
        XCTAssertEqual(try XCTUnwrap(received.peakDBFS), -6.02, accuracy: 0.2, "the tone still opens intact")
        await lab.stopAll()
    }

    func testAChangedSessionKeyGivesEveryLiveStreamANewMediaKey() async throws {
        var lab = LoopbackPeers()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tutti-rekey-\(UInt32.random(in: 0 ... .max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // Each peer reads its own key file, as on two hosts.
        let files = ["a", "b"].map { directory.appendingPathComponent("\($0).session.key").path }
        for file in files { try SessionKeyFile.save(TestSession.keys, to: file) }
        let sender = try await lab.start("a", ports: [.toneSender(name: "out")]) { $0.keyFile = files[0] }
        let receiver = try await lab.start("b", ports: [.receiver(name: "in", sink: .null)]) { $0.keyFile = files[1] }
        try await connect(sender, receiver)
        let (before, _) = try await rekeyed(sender, receiver, atLeast: 0, within: 2)
        XCTAssertEqual(before.rekeys, 0)

        // `tutti key change` on both hosts: the new key first, the old one still accepted.
        let changed = SessionKeyRing([SessionKey.random()] + TestSession.keys.keys)
        for file in files.reversed() { try SessionKeyFile.save(changed, to: file) }
        let (sent, received) = try await rekeyed(sender, receiver, atLeast: 1, within: 10)
        XCTAssertEqual(sent.rekeys, 1, "one new media key for one session-key change")
        XCTAssertEqual(received.rekeys, 1)
        XCTAssertEqual(received.packetsForged, 0)
        XCTAssertEqual(received.packetsLost, 0)
        XCTAssertEqual(received.state, .playing)
        await lab.stopAll()
    }
}
