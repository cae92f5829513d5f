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
        let digits = Array(hex.utf8.filter { !($0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09) })
        guard digits.count == 64 else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: 64, by: 2) {
            guard let high = Self.nibble(digits[index]), let low = Self.nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        guard let key = try? Curve25519.KeyAgreement.PrivateKey(rawRepresentation: bytes) else { return nil }
        self.init(privateKey: key)
    }

    /// The state file's form of the private key.
    public var hex: String { Self.hex(Array(privateKey.rawRepresentation)) }

    /// The peer ID this key pair proves.
    public var peerID: PeerID { Self.peerID(for: privateKey.publicKey) }

    /// The peer ID of the peer holding `publicKey`: the first 16 bytes of SHA-256 over a domain label and the
    /// key, in hex (the 32 digits every peer ID has).
    public static func peerID(for publicKey: Curve25519.KeyAgreement.PublicKey) -> PeerID {
        let digest = SHA256.hash(data: Array("tutti peer id".utf8) + Array(publicKey.rawRepresentation))
        return PeerID(hex(Array(digest.prefix(16))))!  // 32 lowercase hex digits: always a valid ID
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        var text = ""
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 15)])
        }
        return text
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case 0x30...0x39: digit - 0x30
        case 0x61...0x66: digit - 0x61 + 10
        case 0x41...0x46: digit - 0x41 + 10
        default: nil
        }
    }
}
