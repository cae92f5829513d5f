/// Why a Noise handshake or transport message was refused. Every failure ends the session: the caller drops
/// the connection (a peer without the session key, a forged or replayed message, a message out of turn).
///
/// A value; thread-safe: yes.
public enum NoiseError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A message too short for what it must hold (an ephemeral or static key, a tag).
    case truncated(needed: Int, got: Int)
    /// The AEAD tag did not verify: the other side has another session key, or the bytes were changed.
    case authenticationFailed
    /// A message was written or read when the pattern expects the other side's, or after the handshake.
    case outOfTurn
    /// A public key that Curve25519 refuses (all-zero shared secret and the like).
    case invalidKey
    /// The nonce counter reached its end (2^64 − 1 messages): the session must be keyed anew.
    case nonceExhausted
    /// A pre-shared key of the wrong length (Noise's PSKs are 32 bytes).
    case invalidPreSharedKey(length: Int)
    /// A control connection's first frame lacks the handshake's magic (`ControlHandshake.magic`).
    case notAHandshake

    public var description: String {
        switch self {
        case .truncated(let needed, let got): "Noise message of \(got) bytes, needed at least \(needed)"
        case .authenticationFailed: "Noise message failed authentication (another session key, or altered on the way)"
        case .outOfTurn: "Noise message out of turn"
        case .invalidKey: "Noise public key refused"
        case .nonceExhausted: "Noise nonce exhausted; the session must be keyed anew"
        case .invalidPreSharedKey(let length): "Noise pre-shared key of \(length) bytes, needs 32"
        case .notAHandshake: "the first frame does not begin a handshake"
        }
    }
}
