#if canImport(Glibc)
import Glibc
#endif
import Foundation
import TuttiCore
import TuttiEngine
import TuttiPeer
import TuttiSecurity
import TuttiTesting
import TuttiWire
import XCTest

/// The lifecycle's timeouts through real peers on loopback: a sender drops a connection whose receiving peer
/// was killed (its host refuses the probe), and a receiver frees a connection whose media never came.
final class ConnectionLifecycleEdgeTests: XCTestCase {
    private func connections(of endpoint: ControlEndpoint) async throws -> [ConnectionSummary] {
        guard case .description(let description) = try await TestControl.send(.describe, to: endpoint) else {
            XCTFail("describe did not answer a description")
            return []
        }
        return description.connections
    }

    /// Polls `endpoint` until it lists no connection; the time it took, or nil after `limit`.
    private func timeUntilNoConnection(at endpoint: ControlEndpoint, limit: Duration) async throws -> Duration? {
        let start = ContinuousClock.now
        while ContinuousClock.now - start < limit {
            if try await connections(of: endpoint).isEmpty { return ContinuousClock.now - start }
            try await Task.sleep(for: .milliseconds(50))
        }
        return nil
    }

    func testASenderDropsAConnectionWhoseReceivingPeerWasKilledWithinThreeSeconds() async throws {
        try TuttiBinary.require()
        let directory = "/tmp/tutti-edge-tests-\(getpid())-\(UInt32.random(in: 0 ... .max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let peer = try RunningChildProcess(
            TuttiBinary.path,
            [
                "peer", "--name", "rx", "--no-discovery", "--no-link", "--control-port", "0", "--realtime-priority", "0",
                "--state-dir", directory, "--receiver", "in=null",
            ], log: URL(fileURLWithPath: directory + "/rx.log"))
        let controlPort = await RunningChildProcess.controlPort(loggedTo: peer.log.path)
        let receiver = ControlEndpoint(host: "127.0.0.1", port: try XCTUnwrap(controlPort, "the receiving peer did not start"))

        var lab = LoopbackPeers()
        let sender = try await lab.start("tx", ports: [.toneSender(name: "out")])
        let request = ConnectRequest(
            source: PortReference(peer: "tx", port: "out"), destination: PortReference(peer: "rx", port: "in"),
            destinationEndpoints: [receiver], options: ConnectOptions())
        let answer = try await TestControl.send(.connect(request), to: sender.endpoint, timeout: .seconds(8))
        guard case .connected = answer else { return XCTFail("expected connected, got \(answer)") }
        var playing = false
        for _ in 0..<60 where !playing {
            playing = try await connections(of: receiver).first?.state == .playing
            if !playing { try await Task.sleep(for: .milliseconds(50)) }
        }
        XCTAssertTrue(playing, "the receiver never played")
        let sending = try await connections(of: sender.endpoint)
        XCTAssertEqual(sending.count, 1)

        kill(peer.pid, SIGKILL)
        _ = await peer.waitForExit(timeout: .seconds(5))
        let dropped = try await timeUntilNoConnection(at: sender.endpoint, limit: .seconds(6))
        XCTAssertNotNil(dropped, "the sender still lists the connection 6 s after its receiver was killed")
        if let dropped { XCTAssertLessThan(dropped, .seconds(3)) }
        await lab.stopAll()
    }

    func testAReceiverFreesAConnectionWhoseMediaNeverCameWithinTenSeconds() async throws {
        var lab = LoopbackPeers()
        let receiver = try await lab.start("rx", ports: [.receiver(name: "in", sink: .null)])
        var generator = SystemRandomNumberGenerator()
        // An offer from a sender that never sends (its control port has no listener: the teardown is refused).
        // The test speaks as that sender, with its key pair: a member may offer only in its own name.
        let ghost = PeerKeyPair()
        var offer = StreamOffer(
            connectionID: ConnectionID.random(using: &generator), senderPeerID: ghost.peerID,
            source: PortReference(peer: "ghost", port: "out"), destination: PortReference(peer: "rx", port: "in"), channels: 2,
            sampleRates: [48_000], sampleFormats: [.l24], options: ConnectOptions(), captureClock: .realtime, senderControlPort: 9)
        // In a members-only session the stream is SRTP: an offer without its key is refused.
        let plain = try await TestControl.send(.offer(offer), to: receiver.endpoint, as: ghost)
        guard case .failure(let refusal) = plain else { return XCTFail("an offer without a media key was taken: \(plain)") }
        XCTAssertEqual(refusal.code, .forbidden)
        offer.mediaKey = MediaKeying(suite: "AEAD_AES_128_GCM", key: Array(repeating: 7, count: 28))
        let answer = try await TestControl.send(.offer(offer), to: receiver.endpoint, as: ghost)
        guard case .answer = answer else { return XCTFail("expected an answer, got \(answer)") }
        let answered = ContinuousClock.now
        let listed = try await connections(of: receiver.endpoint)
        XCTAssertEqual(listed.map(\.id), [offer.connectionID])
        XCTAssertEqual(listed.first?.state, .buffering)
        guard let freed = try await timeUntilNoConnection(at: receiver.endpoint, limit: .seconds(15)) else {
            return XCTFail("the connection is still there 15 s after its answer")
        }
        XCTAssertGreaterThanOrEqual(ContinuousClock.now - answered, .seconds(9), "freed before its 9 s were up")
        XCTAssertLessThan(freed, .seconds(10))
        await lab.stopAll()
    }
}
