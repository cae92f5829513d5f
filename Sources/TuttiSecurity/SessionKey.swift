import Crypto
import CryptoExtras
import TuttiCore

/// The secret a members-only session shares: 32 random bytes, the pre-shared key of every control
/// connection's Noise handshake. Whoever holds it is a member.
///
/// Its text form is one a person can copy without mistakes: `tk-` and 56 lowercase base32 letters in groups
/// of four (the 32 bytes and a 3-byte checksum), e.g. `tk-mzxw-6ytb-…`. Parsing ignores case, spaces and
/// dashes, and names a typo as a typo.
///
/// A value; thread-safe: yes.
public struct SessionKey: Hashable, Sendable, CustomStringConvertible {
    public static let byteCount = 32
    private static let checksumBytes = 3
    private static let prefix = "tk-"  // what `text` begins with
    private static let alphabet = Array("abcdefghijklmnopqrstuvwxyz234567".utf8)
    private static let separators = Array(" \t\r\n-".utf8)

    /// The key's 32 bytes.
    public let bytes: [UInt8]

    /// - Precondition: `bytes` holds 32 bytes.
    public init(bytes: [UInt8]) {
        precondition(bytes.count == Self.byteCount, "a session key is 32 bytes")
        self.bytes = bytes
    }

    /// A new key from the system's random source.
    public static func random() -> SessionKey {
        SessionKey(bytes: SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) })
    }

    /// The scrypt parameters a passphrase is stretched with (N = 2^15, r = 8, p = 1: 32 MiB and about a tenth
    /// of a second), and the fixed salt: every host must derive the same key from the same passphrase.
    public static let passphraseRounds = 1 << 15
    static let passphraseSalt = Array("tutti session key v1".utf8)

    /// The key a passphrase stands for, stretched with scrypt. A passphrase is as strong as it is long:
    /// anyone who sees a handshake can try guesses offline, so a random key is better.
    ///
    /// - Throws: `SessionKeyError.emptyPassphrase`.
    public static func derived(fromPassphrase passphrase: String) throws(SessionKeyError) -> SessionKey {
        guard !passphrase.isEmpty else { throw .emptyPassphrase }
        do {
            let key = try KDF.Scrypt.deriveKey(
                from: Array(passphrase.utf8), salt: passphraseSalt, outputByteCount: byteCount, rounds: passphraseRounds,
                blockSize: 8, parallelism: 1)
            return SessionKey(bytes: key.withUnsafeBytes { Array($0) })
        } catch {
            throw .derivationFailed("\(error)")
        }
    }

    /// Reads the text form.
    ///
    /// - Throws: `SessionKeyError` naming what is wrong: a length that is not a key's, a letter base32 does not
    ///   have, or a checksum that does not match (a typo).
    public init(text: String) throws(SessionKeyError) {
        let lowered = Array(text.lowercased().utf8.drop { Self.separators.contains($0) })
        var letters = lowered.filter { !Self.separators.contains($0) }
        let expected = (Self.byteCount + Self.checksumBytes) * 8 / 5
        // The prefix: `tk` and a separator, or (its dash lost) two letters more than a key has.
        let prefixed = lowered.count > 2 && lowered.starts(with: Array("tk".utf8)) && Self.separators.contains(lowered[2])
        if prefixed || (letters.count == expected + 2 && letters.starts(with: Array("tk".utf8))) { letters.removeFirst(2) }
        guard letters.count == expected else { throw .wrongLength(letters: letters.count, expected: expected) }
        var decoded: [UInt8] = []
        var accumulator: UInt32 = 0
        var bits = 0
        for letter in letters {
            guard let value = Self.alphabet.firstIndex(of: letter) else { throw .invalidCharacter(Character(UnicodeScalar(letter))) }
            accumulator = (accumulator << 5) | UInt32(value)
            bits += 5
            if bits >= 8 {
                bits -= 8
                decoded.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        let key = Array(decoded.prefix(Self.byteCount))
        guard Array(decoded.dropFirst(Self.byteCount)) == Self.checksum(key) else { throw .checksumMismatch }
        self.init(bytes: key)
    }

    /// The text form: `tk-` and 14 groups of four base32 letters.
    public var text: String {
        let data = bytes + Self.checksum(bytes)
        var letters: [UInt8] = []
        var accumulator: UInt32 = 0
        var bits = 0
        for byte in data {
            accumulator = (accumulator << 8) | UInt32(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                letters.append(Self.alphabet[Int((accumulator >> UInt32(bits)) & 31)])
            }
        }
        var text = Self.prefix
        for (index, letter) in letters.enumerated() {
            if index > 0, index % 4 == 0 { text += "-" }
            text.unicodeScalars.append(UnicodeScalar(letter))
        }
        return text
    }

    /// A short name for the key that does not give it away (the first 4 bytes of its SHA-256, in hex), so two
    /// hosts can compare which key they hold.
    public var fingerprint: String {
        Hex.string(SHA256.hash(data: Array("tutti key fingerprint".utf8) + bytes).prefix(4))
    }

    /// Never the key itself: logs and errors show the fingerprint.
    public var description: String { "session key \(fingerprint)" }

    private static func checksum(_ key: [UInt8]) -> [UInt8] {
        Array(SHA256.hash(data: Array("tutti key checksum".utf8) + key).prefix(checksumBytes))
    }
}

/// Why a session key could not be read or made. A value; thread-safe: yes.
public enum SessionKeyError: Error, Hashable, Sendable, CustomStringConvertible {
    case wrongLength(letters: Int, expected: Int)
    case invalidCharacter(Character)
    case checksumMismatch
    case emptyPassphrase
    case derivationFailed(String)

    public var description: String {
        switch self {
        case .wrongLength(let letters, let expected):
            "a session key has \(expected) letters after 'tk-' (dashes and spaces aside), this one \(letters)"
        case .invalidCharacter(let character): "a session key has only the letters a-z and 2-7, not '\(character)'"
        case .checksumMismatch: "the session key has a typo: its checksum does not match (copy it again)"
        case .emptyPassphrase: "the passphrase is empty"
        case .derivationFailed(let detail): "cannot stretch the passphrase: \(detail)"
        }
    }
}
