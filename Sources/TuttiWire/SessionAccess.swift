/// Who may join a peer's session, as `describe` reports it and `tutti ls` shows it. A value; thread-safe: yes.
public struct SessionAccess: Hashable, Sendable, Codable {
    /// Whether only members (holders of the session key) may join; false: an open session, anyone on the
    /// network may list, connect and disconnect.
    public var membersOnly: Bool
    /// The fingerprint of the session key the peer connects with (8 hex digits; never the key), so hosts can
    /// compare which key they hold. Nil in an open session.
    public var keyFingerprint: String?
    /// Whether the peer answers `describe` and `stats` to anyone (members-only sessions only).
    public var publicReads: Bool

    public init(membersOnly: Bool, keyFingerprint: String? = nil, publicReads: Bool = false) {
        self.membersOnly = membersOnly
        self.keyFingerprint = keyFingerprint
        self.publicReads = publicReads
    }

    /// Whether `text` has a fingerprint's form: 8 lowercase hex digits.
    public static func isValidFingerprint(_ text: String) -> Bool {
        text.utf8.count == 8 && text.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }
}
