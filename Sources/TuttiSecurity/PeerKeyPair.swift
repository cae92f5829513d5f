import Crypto
import TuttiCore

/// A peer's long-term identity: a Curve25519 key pair. Its peer ID is derived from the public key, so a
/// peer that proves the key in a handshake proves its ID, and no one can answer under another peer's ID.
///
/// A value; thread-safe: yes.
public struct PeerKeyPair: Sendable {
    public let privateKey: Curve25519.KeyAgreement.PrivateKey

    public init(privateKey: Curve25519.KeyAgreement.PrivateKey = Curve25519.KeyAgreement.PrivateKey()) {
        self.privateKey = privateKey
    }

    /// Reads the state file's form: the private key's 32 bytes in hex (64 digits, whitespace ignored).
    public init?(hex: String) {
        guard let bytes = Hex.bytes(hex.filter { !$0.isWhitespace }), bytes.count == 32,
            let key = try? Curve25519.KeyAgreement.PrivateKey(rawRepresentation: bytes)
        else { return nil }
        self.init(privateKey: key)
    }

    /// The state file's form of the private key.
    public var hex: String { Hex.string(privateKey.rawRepresentation) }

    /// The peer ID this key pair proves.
    public var peerID: PeerID { Self.peerID(for: privateKey.publicKey) }

    /// The peer ID of the peer holding `publicKey`: the first 16 bytes of SHA-256 over a domain label and the
    /// key, in hex (the 32 digits every peer ID has).
    public static func peerID(for publicKey: Curve25519.KeyAgreement.PublicKey) -> PeerID {
        let digest = SHA256.hash(data: Array("tutti peer id".utf8) + Array(publicKey.rawRepresentation))
        return PeerID(Hex.string(digest.prefix(16)))!  // 32 lowercase hex digits: always a valid ID
    }
}
