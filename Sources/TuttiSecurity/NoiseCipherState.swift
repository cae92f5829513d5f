import Crypto

/// Noise's CipherState (spec §5.1) for ChaChaPoly: a 32-byte key, or none, and a 64-bit nonce counter; the
/// 96-bit nonce is 32 zero bits and the counter, little-endian (spec §12.3).
///
/// A value; thread-safe: no (one owner: the connection that reads or writes with it).
public struct NoiseCipherState: Sendable {
    private var key: SymmetricKey?
    private var nonce: UInt64 = 0

    /// The authentication tag's length.
    public static let tagLength = 16

    init(key: SymmetricKey? = nil) { self.key = key }

    /// Whether a key is set (before the first DH, handshake messages go in the clear).
    public var hasKey: Bool { key != nil }

    mutating func initializeKey(_ key: SymmetricKey?) {
        self.key = key
        nonce = 0
    }

    /// Encrypts `plaintext` with `associatedData` (the handshake hash during the handshake); in the clear
    /// without a key.
    public mutating func encrypt(_ plaintext: [UInt8], associatedData: [UInt8] = []) throws(NoiseError) -> [UInt8] {
        guard let key else { return plaintext }
        guard nonce != .max else { throw .nonceExhausted }
        do {
            let sealed = try ChaChaPoly.seal(plaintext, using: key, nonce: Self.nonce(nonce), authenticating: associatedData)
            nonce += 1
            return Array(sealed.ciphertext) + Array(sealed.tag)
        } catch {
            throw .invalidKey
        }
    }

    /// Decrypts and authenticates `ciphertext`; the counter moves on only when it verifies.
    public mutating func decrypt(_ ciphertext: [UInt8], associatedData: [UInt8] = []) throws(NoiseError) -> [UInt8] {
        guard let key else { return ciphertext }
        guard nonce != .max else { throw .nonceExhausted }
        guard ciphertext.count >= Self.tagLength else { throw .truncated(needed: Self.tagLength, got: ciphertext.count) }
        do {
            let box = try ChaChaPoly.SealedBox(
                nonce: Self.nonce(nonce), ciphertext: ciphertext.dropLast(Self.tagLength), tag: ciphertext.suffix(Self.tagLength))
            let plaintext = try ChaChaPoly.open(box, using: key, authenticating: associatedData)
            nonce += 1
            return Array(plaintext)
        } catch {
            throw .authenticationFailed
        }
    }

    private static func nonce(_ counter: UInt64) -> ChaChaPoly.Nonce {
        var bytes = [UInt8](repeating: 0, count: 12)
        for index in 0..<8 { bytes[4 + index] = UInt8(truncatingIfNeeded: counter >> (8 * UInt64(index))) }
        return try! ChaChaPoly.Nonce(data: bytes)  // 12 bytes: always a valid nonce
    }
}
