import TuttiCore
import TuttiSecurity
import XCTest

final class ControlHandshakeTests: XCTestCase {
    private struct Outcome {
        var client: SecureControlChannel
        var server: SecureControlChannel
        var serverSaw: PeerID
        var clientSaw: PeerID
        var acceptedKey: SessionKey
    }

    private func handshake(
        client: PeerKeyPair, clientKey: SessionKey, server: PeerKeyPair, serverKeys: SessionKeyRing
    ) throws -> Outcome {
        var initiator = ControlHandshakeInitiator(keyPair: client, sessionKey: clientKey)
        var responder = ControlHandshakeResponder(keyPair: server, keys: serverKeys)
        let first = try initiator.firstFrame()
        XCTAssertTrue(ControlHandshake.isHandshake(first))
        let answer = try responder.answer(first)
        let (final, clientChannel, clientSaw) = try initiator.readAnswer(answer)
        let (serverChannel, serverSaw, key) = try responder.readFinal(final)
        return Outcome(client: clientChannel, server: serverChannel, serverSaw: serverSaw, clientSaw: clientSaw, acceptedKey: key)
    }

    func testMembersLearnEachOthersPeerIDsAndTalkBothWays() throws {
        let (client, server, key) = (PeerKeyPair(), PeerKeyPair(), SessionKey.random())
        var outcome = try handshake(client: client, clientKey: key, server: server, serverKeys: SessionKeyRing([key]))
        XCTAssertEqual(outcome.serverSaw, client.peerID)
        XCTAssertEqual(outcome.clientSaw, server.peerID)
        let request = Array(#"{"v":1,"id":1,"type":"describe"}"#.utf8)
        let sealed = try outcome.client.seal(request)
        XCTAssertNotEqual(Array(sealed.prefix(request.count)), request)
        XCTAssertEqual(try outcome.server.open(sealed), request)
        XCTAssertEqual(try outcome.client.open(try outcome.server.seal([1, 2, 3])), [1, 2, 3])
        // The same bytes again (a replay) no longer open: the counter moved on.
        XCTAssertThrowsError(try outcome.server.open(sealed)) { XCTAssertEqual($0 as? NoiseError, .authenticationFailed) }
    }

    func testAClientWithAnotherKeyFailsAtTheThirdMessage() throws {
        XCTAssertThrowsError(
            try handshake(
                client: PeerKeyPair(), clientKey: SessionKey.random(), server: PeerKeyPair(),
                serverKeys: SessionKeyRing([SessionKey.random()]))
        ) { XCTAssertEqual($0 as? NoiseError, .authenticationFailed) }
    }

    func testDuringAKeyChangeBothKeysAreAcceptedAndTheOneUsedIsNamed() throws {
        let (old, new) = (SessionKey.random(), SessionKey.random())
        let changing = SessionKeyRing([new, old])
        XCTAssertEqual(try handshake(client: PeerKeyPair(), clientKey: old, server: PeerKeyPair(), serverKeys: changing).acceptedKey, old)
        XCTAssertEqual(try handshake(client: PeerKeyPair(), clientKey: new, server: PeerKeyPair(), serverKeys: changing).acceptedKey, new)
        // A peer that has not changed yet refuses the new key; the one that changed retries with the old.
        XCTAssertThrowsError(try handshake(client: PeerKeyPair(), clientKey: new, server: PeerKeyPair(), serverKeys: SessionKeyRing([old])))
    }

    func testAPlainRequestOrGarbageIsNotTakenForAHandshake() throws {
        var responder = ControlHandshakeResponder(keyPair: PeerKeyPair(), keys: SessionKeyRing([SessionKey.random()]))
        XCTAssertFalse(ControlHandshake.isHandshake(Array(#"{"v":1}"#.utf8)))
        XCTAssertThrowsError(try responder.answer(Array(#"{"v":1}"#.utf8))) { XCTAssertEqual($0 as? NoiseError, .notAHandshake) }
        XCTAssertThrowsError(try responder.answer(ControlHandshake.magic + [1, 2, 3])) { error in
            XCTAssertEqual(error as? NoiseError, .truncated(needed: 32, got: 3))
        }
    }

    func testATamperedAnswerIsRefusedByTheClient() throws {
        let key = SessionKey.random()
        var initiator = ControlHandshakeInitiator(keyPair: PeerKeyPair(), sessionKey: key)
        var responder = ControlHandshakeResponder(keyPair: PeerKeyPair(), keys: SessionKeyRing([key]))
        var answer = try responder.answer(try initiator.firstFrame())
        answer[40] ^= 1
        XCTAssertThrowsError(try initiator.readAnswer(answer)) { XCTAssertEqual($0 as? NoiseError, .authenticationFailed) }
    }
}
