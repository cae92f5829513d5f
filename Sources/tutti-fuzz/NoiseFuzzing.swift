import Crypto
import TuttiSecurity

/// The control channel's handshake as a fuzz target's fixed world: a responder and an initiator with fixed
/// key pairs, ephemeral keys and session key, so an input always meets the same peer. Thread-safe: yes
/// (values only).
enum NoiseFuzzing {
    static let sessionKey = SessionKey(bytes: Array(1...32))
    /// The member's first request on the channel.
    static let request = Array(#"{"v":1,"id":1,"type":"describe"}"#.utf8)
    static let responderPair = PeerKeyPair(privateKey: try! Curve25519.KeyAgreement.PrivateKey(rawRepresentation: Array(33...64)))
    static let initiatorPair = PeerKeyPair(privateKey: try! Curve25519.KeyAgreement.PrivateKey(rawRepresentation: Array(65...96)))
    private static let responderEphemeral = try! Curve25519.KeyAgreement.PrivateKey(rawRepresentation: Array(97...128))
    private static let initiatorEphemeral = try! Curve25519.KeyAgreement.PrivateKey(rawRepresentation: Array(129...160))

    static func responder() -> ControlHandshakeResponder {
        ControlHandshakeResponder(keyPair: responderPair, keys: SessionKeyRing([sessionKey]), ephemeral: { responderEphemeral })
    }

    static func initiator() -> ControlHandshakeInitiator {
        ControlHandshakeInitiator(keyPair: initiatorPair, sessionKey: sessionKey, ephemeral: { initiatorEphemeral })
    }

    /// A whole handshake of the fixed peers: its three frames and the responder's transport channel.
    static func handshake() -> (frames: [[UInt8]], responderChannel: SecureControlChannel, initiatorChannel: SecureControlChannel) {
        var initiator = initiator()
        var responder = responder()
        let first = try! initiator.firstFrame()
        let answer = try! responder.answer(first)
        let (final, initiatorChannel, _) = try! initiator.readAnswer(answer)
        let (responderChannel, _, _) = try! responder.readFinal(final)
        return ([first, answer, final], responderChannel, initiatorChannel)
    }
}
