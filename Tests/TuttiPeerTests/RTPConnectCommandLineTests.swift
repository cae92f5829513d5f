import Foundation
import TuttiIO
import TuttiTesting
import XCTest

/// `tutti connect` to a standard RTP receiver's address, against a real peer on loopback.
final class RTPConnectCommandLineTests: XCTestCase {
    /// `tutti connect PEER:PORT rtp://…` prints the connection and its SDP; `tutti sdp` prints the same;
    /// `tutti disconnect` by URL ends it; a refusal is one line on stderr.
    func testConnectToAnRTPAddressPrintsTheSDP() async throws {
        try requireBinary()
        var lab = LoopbackPeers()
        let peer = try await lab.start(
            "a", ports: [.toneSender(name: "out", sampleRates: [48_000]), .toneSender(name: "quad", channels: 4, sampleRates: [48_000])],
            rtpAllowed: ["127.0.0.1"])
        let receiver = try UDPSocket()  // packets land here, unread
        defer { receiver.close() }
        let port = receiver.localPort
        let session = ["--no-discovery", "--peer", "127.0.0.1:\(peer.controlPort)", "--browse", "0.5"]
        func tutti(_ arguments: [String]) async throws -> (status: Int32, output: String, error: String) {
            try await runChildProcess(binary.path, arguments + session, timeout: .seconds(20))
        }

        let connected = try await tutti(["connect", "a:out", "rtp://127.0.0.1:\(port)"])
        XCTAssertEqual(connected.status, 0, connected.error)
        let lines = connected.output.components(separatedBy: "\n")
        let id = try XCTUnwrap(lines.first?.split(separator: "[").last?.dropLast(), connected.output)
        XCTAssertEqual(lines.first, "connected a:out → rtp://127.0.0.1:\(port): L16/48000/2ch, 64 frames/packet [\(id)]")
        let sdp = [
            "v=0", "o=- \(UInt64(id, radix: 16)!) 0 IN IP4 127.0.0.1", "s=Tutti a:out", "c=IN IP4 127.0.0.1", "t=0 0",
            "m=audio \(port) RTP/AVP 96", "a=rtpmap:96 L16/48000/2", "a=ptime:1.333", "a=recvonly",
        ].map { $0 + "\r\n" }.joined()
        XCTAssertEqual(lines.dropFirst().joined(separator: "\n"), sdp)

        let listed = try await tutti(["sdp", "a:out"])
        XCTAssertEqual(listed.status, 0, listed.error)
        XCTAssertEqual(listed.output, sdp)
        let listedJSON = try await tutti(["sdp", "a:out", "--json"])
        XCTAssertEqual(listedJSON.status, 0, listedJSON.error)
        let entries = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(listedJSON.output.utf8)) as? [[String: String]])
        XCTAssertEqual(entries, [["connection": String(id), "source": "a:out", "destination": "rtp://127.0.0.1:\(port)", "sdp": sdp]])

        let refused = try await tutti(["connect", "a:quad", "rtp://127.0.0.1:\(port + 2)", "--codec", "opus", "--channels", "4"])
        XCTAssertEqual(refused.status, 1)
        XCTAssertEqual(
            refused.error,
            "tutti: cannot connect a:quad to rtp://127.0.0.1:\(port + 2): Opus streams carry 1 or 2 channels, not 4; use --channels 2 or PCM\n"
        )

        // Only where the peer's configuration allows: 127.0.0.1 is, 127.0.0.2 is not.
        let forbidden = try await tutti(["connect", "a:quad", "rtp://127.0.0.2:\(port)"])
        XCTAssertEqual(forbidden.status, 1)
        XCTAssertEqual(
            forbidden.error,
            "tutti: cannot connect a:quad to rtp://127.0.0.2:\(port): a streams plain RTP only to addresses its configuration allows (now: 127.0.0.1/32); start it with --allow-rtp 127.0.0.2/32 or a prefix that holds it\n"
        )

        let disconnected = try await tutti(["disconnect", "a:out", "rtp://127.0.0.1:\(port)/"])
        XCTAssertEqual(disconnected.output, "disconnected 1 connection from a:out to rtp://127.0.0.1:\(port)\n", disconnected.error)
        let none = try await tutti(["sdp", "a"])
        XCTAssertEqual(none.status, 1)
        XCTAssertEqual(none.error, "tutti: no live sending connection of a\n")
        await lab.stopAll()
    }
}
