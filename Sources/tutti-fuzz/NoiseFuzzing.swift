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

    /// The initiator once it has sent its first frame: with the fixed ephemeral key it is the same value every
    /// time, so each input that answers it starts from a copy instead of an X25519 key computation.
    static let initiatorAwaitingAnswer: ControlHandshakeInitiator = {
        var awaiting = initiator()
        _ = try! awaiting.firstFrame()
        return awaiting
    }()

    /// The responder's transport channel after a whole handshake, and the member's first request as the
    /// member sealed it: each transport input starts from a copy (a value: its nonce counters are its own),
    /// not from a new handshake's ten or so X25519 operations.
    static let established: (responderChannel: SecureControlChannel, sealedRequest: [UInt8]) = {
        var (_, channel, member) = handshake()
        return (channel, try! member.seal(request))
    }()

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
