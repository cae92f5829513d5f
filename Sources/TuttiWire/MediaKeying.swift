import TuttiCore

/// A stream's SRTP master key and salt as an offer carries it from the sender to the receiver, inside a
/// members-only session's encrypted control connection (an open session sends none, and its media is plain
/// RTP). A value; thread-safe: yes.
public struct MediaKeying: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The SRTP suite (`AEAD_AES_128_GCM` between Tutti peers).
    public var suite: String
    /// The master key and salt in hex.
    public var key: String

    /// The suites a peer takes, with their master key and salt lengths in bytes.
    public static let suites: [String: Int] = ["AEAD_AES_128_GCM": 28, "AES_CM_128_HMAC_SHA1_80": 30]

    public init(suite: String, key: [UInt8]) {
        self.suite = suite
        self.key = Hex.string(key)
    }

    /// The key's bytes, or nil when it is not the suite's length in hex.
    public var keyBytes: [UInt8]? {
        guard let length = Self.suites[suite], let bytes = Hex.bytes(key), bytes.count == length else { return nil }
        return bytes
    }

    /// Never the key.
    public var description: String { "\(suite) key" }
}
