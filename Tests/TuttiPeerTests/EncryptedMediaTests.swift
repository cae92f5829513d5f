import Foundation
import TuttiCore
import TuttiIO
import TuttiPeer
import TuttiTesting
import TuttiWire
import XCTest

/// The media of a members-only session is SRTP: the stream plays, and datagrams a stranger sends to its
/// socket under its SSRC are counted as forged and never reach the jitter buffer. An open session's media
/// stays plain RTP.
final class EncryptedMediaTests: XCTestCase {
    private func connect(_ sender: Peer, _ receiver: Peer) async throws -> ConnectionSummary {
        let request = ConnectRequest(
            source: PortReference(peer: "a", port: "out"), destination: PortReference(peer: "b", port: "in"),
            destinationEndpoints: [receiver.endpoint], options: ConnectOptions(latencyMilliseconds: 20))
        let response = try await ControlClient.send(
            .connect(request), to: sender.endpoint, timeout: .seconds(5),
            credentials: (await sender.configuration.access.keys).map { ControlCredentials(keys: $0) })
        guard case .connected(let summary) = response else {
            XCTFail("expected connected, got \(response)")
            throw CancellationError()
        }
        return summary
    }

    /// The receiver's figures for its one stream once it has received `packets`.
    private func receiving(_ receiver: Peer, atLeast packets: UInt64, open: Bool = false) async throws -> ConnectionStatistics? {
        var latest: ConnectionStatistics?
        for _ in 0..<100 {
            try await Task.sleep(for: .milliseconds(50))
            let response =
                open
                ? try await ControlClient.send(.statistics, to: receiver.endpoint)
                : try await TestControl.send(.statistics, to: receiver.endpoint)
            if case .statistics(let list) = response { latest = list.first { $0.role == .receiving } }
            if let latest, latest.packetsReceived >= packets, latest.peakDBFS != nil { break }
        }
        return latest
    }

    func testAMembersStreamIsSRTPAndAStrangersDatagramsAreForged() async throws {
        var lab = LoopbackPeers()
        let sender = try await lab.start("a", ports: [.toneSender(name: "out")])
        let receiver = try await lab.start("b", ports: [.receiver(name: "in", sink: .null)])
        let summary = try await connect(sender, receiver)
        let before = try await XCTUnwrapAsync(await receiving(receiver, atLeast: 100))
        XCTAssertEqual(before.packetsForged, 0, "an SRTP stream counts forged packets")
        XCTAssertEqual(before.packetsReplayed, 0)
        XCTAssertEqual(before.packetsInvalid, 0, "every genuine packet opened")
        XCTAssertEqual(try XCTUnwrap(before.peakDBFS), -6.02, accuracy: 0.2, "the tone arrives intact")

        // A stranger who knows the stream's port and SSRC sends RTP-looking datagrams: plain, and with a tag.
        let (port, ssrc) = try await XCTUnwrapAsync(await receiver.mediaStream(of: summary.id))
        let socket = try UDPSocket()
        let destination = try UDPAddress(host: "127.0.0.1", port: port)
        for index in 0..<200 {
            let sequence = UInt16(truncatingIfNeeded: index * 97)
            var datagram: [UInt8] = [0x80, 96, UInt8(sequence >> 8), UInt8(sequence & 0xFF), 0, 0, 0, 0]
            datagram += [UInt8(ssrc >> 24), UInt8(ssrc >> 16 & 0xFF), UInt8(ssrc >> 8 & 0xFF), UInt8(ssrc & 0xFF)]
            datagram += (0..<(index % 2 == 0 ? 384 : 400)).map { UInt8(truncatingIfNeeded: $0 &* index) }
            _ = datagram.withUnsafeBytes { socket.send($0, to: destination) }
        }
        try await Task.sleep(for: .milliseconds(500))
        let after = try await XCTUnwrapAsync(await receiving(receiver, atLeast: before.packetsReceived + 100))
        // libsrtp checks a packet's index before its tag: a forged one whose sequence number lies behind the
        // window, or was seen, is counted as a replay. Either way every one is counted and dropped.
        XCTAssertEqual((after.packetsForged ?? 0) + (after.packetsReplayed ?? 0), 200, "every forged datagram counted")
        XCTAssertEqual(after.packetsInvalid, 0, "none reached the stream")
        XCTAssertEqual(after.packetsLost, 0)
        XCTAssertEqual(after.concealedFrames, before.concealedFrames, "nothing concealed because of them")
        XCTAssertEqual(after.state, .playing)
        await lab.stopAll()
    }

    func testAnOpenSessionsStreamIsPlainRTP() async throws {
        var lab = LoopbackPeers()
        let sender = try await lab.start("a", ports: [.toneSender(name: "out")], access: .open)
        let receiver = try await lab.start("b", ports: [.receiver(name: "in", sink: .null)], access: .open)
        _ = try await connect(sender, receiver)
        let figures = try await XCTUnwrapAsync(await receiving(receiver, atLeast: 50, open: true))
        XCTAssertNil(figures.packetsForged)
        XCTAssertGreaterThanOrEqual(figures.packetsReceived, 50)
        await lab.stopAll()
    }
}
