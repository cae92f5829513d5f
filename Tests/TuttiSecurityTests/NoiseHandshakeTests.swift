import Crypto
import Foundation
import TuttiSecurity
import TuttiTesting
import XCTest

/// The Noise handshake of the control channel against the published cacophony vector for its suite, byte for
/// byte, and what a peer without the session key, an altered message or a message out of turn meets.
final class NoiseHandshakeTests: XCTestCase {
    private struct Vector: Decodable {
        struct Message: Decodable {
            let payload: String
            let ciphertext: String
        }
        let name: String
        let initPrologue: String
        let initPsk: String
        let initStatic: String
        let initEphemeral: String
        let respPsk: String
        let respStatic: String
        let respEphemeral: String
        let messages: [Message]
    }

    private func vector() throws -> Vector {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/noise-xxpsk3-25519-chachapoly-sha256.json")
        struct File: Decodable { let vectors: [Vector] }
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase  // init_static → initStatic …
        let file = try decoder.decode(File.self, from: Data(contentsOf: url))
        return try XCTUnwrap(file.vectors.first { $0.name == NoiseHandshake.protocolName })
    }

    private func bytes(_ hex: String) -> [UInt8] { hexBytes(hex) }

    private func key(_ hex: String) throws -> Curve25519.KeyAgreement.PrivateKey {
        try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: bytes(hex))
    }

    func testTheCacophonyVectorForTheSuiteIsReproducedByteForByte() throws {
        let vector = try vector()
        let initiatorEphemeral = try key(vector.initEphemeral)
        let responderEphemeral = try key(vector.respEphemeral)
        var initiator = try NoiseHandshake(
            role: .initiator, staticKey: key(vector.initStatic), preSharedKey: bytes(vector.initPsk),
            prologue: bytes(vector.initPrologue), ephemeral: { initiatorEphemeral })
        var responder = try NoiseHandshake(
            role: .responder, staticKey: key(vector.respStatic), preSharedKey: bytes(vector.respPsk),
            prologue: bytes(vector.initPrologue), ephemeral: { responderEphemeral })
        XCTAssertEqual(vector.messages.count, 6)
        for (index, message) in vector.messages.prefix(3).enumerated() {
            let sender = index % 2 == 0
            let written =
                sender
                ? try initiator.writeMessage(payload: bytes(message.payload)) : try responder.writeMessage(payload: bytes(message.payload))
            XCTAssertEqual(written, bytes(message.ciphertext), "handshake message \(index + 1)")
            let read = sender ? try responder.readMessage(written) : try initiator.readMessage(written)
            XCTAssertEqual(read, bytes(message.payload), "handshake message \(index + 1) read back")
        }
        XCTAssertTrue(initiator.isComplete && responder.isComplete)
        XCTAssertEqual(initiator.handshakeHash, responder.handshakeHash)
        XCTAssertEqual(initiator.remoteStaticKey?.rawRepresentation, try key(vector.respStatic).publicKey.rawRepresentation)
        XCTAssertEqual(responder.remoteStaticKey?.rawRepresentation, try key(vector.initStatic).publicKey.rawRepresentation)
        var (initiatorSend, initiatorReceive) = try XCTUnwrap(initiator.transport())
        var (responderSend, responderReceive) = try XCTUnwrap(responder.transport())
        // Transport messages keep alternating: responder, initiator, responder.
        for (index, message) in vector.messages.dropFirst(3).enumerated() {
            if index % 2 == 0 {
                let sealed = try responderSend.encrypt(bytes(message.payload))
                XCTAssertEqual(sealed, bytes(message.ciphertext), "transport message \(index + 4)")
                XCTAssertEqual(try initiatorReceive.decrypt(sealed), bytes(message.payload))
            } else {
                let sealed = try initiatorSend.encrypt(bytes(message.payload))
                XCTAssertEqual(sealed, bytes(message.ciphertext), "transport message \(index + 4)")
                XCTAssertEqual(try responderReceive.decrypt(sealed), bytes(message.payload))
            }
        }
    }

    /// A peer with another session key gets through the first two messages (the PSK comes in at the third)
    /// and fails there: the responder refuses the third message, so it never takes a request from it.
    func testAPeerWithAnotherSessionKeyFailsAtTheThirdMessage() throws {
        var initiator = try NoiseHandshake(
            role: .initiator, staticKey: .init(), preSharedKey: [UInt8](repeating: 1, count: 32), prologue: Array("tutti 1".utf8))
        var responder = try NoiseHandshake(
            role: .responder, staticKey: .init(), preSharedKey: [UInt8](repeating: 2, count: 32), prologue: Array("tutti 1".utf8))
        _ = try responder.readMessage(initiator.writeMessage())
        _ = try initiator.readMessage(responder.writeMessage())
        let third = try initiator.writeMessage(payload: Array("describe".utf8))
        XCTAssertThrowsError(try responder.readMessage(third)) { error in
            XCTAssertEqual(error as? NoiseError, .authenticationFailed)
        }
        XCTAssertNil(responder.transport(), "no transport keys without a completed handshake")
    }

    func testAnAlteredMessageAMessageOutOfTurnAndABadKeyAreRefused() throws {
        let psk = [UInt8](repeating: 7, count: 32)
        var initiator = try NoiseHandshake(role: .initiator, staticKey: .init(), preSharedKey: psk)
        var responder = try NoiseHandshake(role: .responder, staticKey: .init(), preSharedKey: psk)
        XCTAssertThrowsError(try responder.writeMessage()) { XCTAssertEqual($0 as? NoiseError, .outOfTurn) }
        var first = try initiator.writeMessage(payload: [1, 2, 3])
        first[first.count - 1] ^= 0x01  // the payload's tag
        XCTAssertThrowsError(try responder.readMessage(first)) { XCTAssertEqual($0 as? NoiseError, .authenticationFailed) }
        XCTAssertThrowsError(try responder.readMessage([1, 2, 3])) {
            XCTAssertEqual($0 as? NoiseError, .truncated(needed: 32, got: 3))
        }
        XCTAssertThrowsError(try NoiseHandshake(role: .initiator, staticKey: .init(), preSharedKey: [1, 2])) {
            XCTAssertEqual($0 as? NoiseError, .invalidPreSharedKey(length: 2))
        }
    }

    /// Transport: a message replayed or reordered fails (the nonce moved on), as an altered one does.
    func testTransportMessagesCannotBeReplayed() throws {
        let psk = [UInt8](repeating: 9, count: 32)
        var initiator = try NoiseHandshake(role: .initiator, staticKey: .init(), preSharedKey: psk)
        var responder = try NoiseHandshake(role: .responder, staticKey: .init(), preSharedKey: psk)
        _ = try responder.readMessage(initiator.writeMessage())
        _ = try initiator.readMessage(responder.writeMessage())
        _ = try responder.readMessage(initiator.writeMessage())
        var (send, _) = try XCTUnwrap(initiator.transport())
        var (_, receive) = try XCTUnwrap(responder.transport())
        let first = try send.encrypt(Array("connect".utf8))
        let second = try send.encrypt(Array("disconnect".utf8))
        XCTAssertEqual(try receive.decrypt(first), Array("connect".utf8))
        XCTAssertThrowsError(try receive.decrypt(first)) { XCTAssertEqual($0 as? NoiseError, .authenticationFailed) }
        XCTAssertEqual(try receive.decrypt(second), Array("disconnect".utf8), "a refused message leaves the counter where it was")
    }
}
