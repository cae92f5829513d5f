#if canImport(Glibc)
import Glibc
#endif
import TuttiPeer
import TuttiWire
import XCTest

/// Malformed or hostile control input gets an error reply and a closed connection, never a crash.
final class HostileControlInputTests: XCTestCase {
    /// Sends raw bytes to the peer's control port and returns everything it answers before closing.
    private func exchange(_ bytes: [UInt8], port: UInt16) throws -> [UInt8] {
        let descriptor = connectedControlSocket(port: port)
        defer { close(descriptor) }
        _ = bytes.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, 0) }
        var reply = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count <= 0 { break }  // closed by the peer (or timed out)
            reply += buffer[0..<count]
        }
        return reply
    }

    private func frame(_ json: String) -> [UInt8] {
        let body = Array(json.utf8)
        let length = UInt32(body.count)
        return [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)] + body
    }

    private func decodedFailure(_ reply: [UInt8]) throws -> ControlFailure? {
        guard reply.count > 4 else { return nil }
        let envelope = try ControlCodec.decodeResponse(Array(reply.dropFirst(4)))
        if case .failure(let failure) = envelope.message { return failure }
        return nil
    }

    func testMalformedFramesGetAnErrorAndTheConnectionCloses() async throws {
        var lab = LoopbackPeers()
        // Open: the control parser itself faces the hostile input (a members-only peer refuses it unread).
        let peer = try await lab.start("victim", ports: [.receiver(name: "in", sink: .null)], access: .open)
        let port = peer.controlPort
        let inputs: [(String, [UInt8], ControlFailure.Code)] = [
            ("not JSON", frame("hello"), .malformed),
            ("empty object", frame("{}"), .malformed),
            ("newer protocol", frame(#"{"v":9,"id":1,"type":"describe"}"#), .unsupportedVersion),
            ("unknown type", frame(#"{"v":1,"id":1,"type":"format-disk"}"#), .malformed),
            ("bad port name", frame(#"{"v":1,"id":1,"type":"disconnect","body":{"source":{"peer":"a","port":"../etc"}}}"#), .malformed),
            ("huge length prefix", [0xFF, 0xFF, 0xFF, 0xFF, 0x7B], .malformed),
            (
                "control characters",
                frame(#"{"v":1,"id":1,"type":"teardown","body":{"connectionID":"0123456789abcdef","reason":"a\u0007b"}}"#), .malformed
            ),
        ]
        for (name, bytes, code) in inputs {
            let reply = try exchange(bytes, port: port)
            let failure = try decodedFailure(reply)
            XCTAssertEqual(failure?.code, code, "\(name): \(String(decoding: reply, as: UTF8.self))")
        }
        // Still alive and answering.
        let response = try await ControlClient.send(.describe, to: peer.endpoint)
        guard case .description(let description) = response else { return XCTFail("no description after hostile input") }
        XCTAssertEqual(description.name, "victim")
        await lab.stopAll()
    }
}
