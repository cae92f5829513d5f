/// A peer's stable identity: 128 random bits as 32 lowercase hex digits, kept in the peer's state file.
public struct PeerID: Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: String

    /// Validates `rawValue`: exactly 32 lowercase hex digits.
    public init?(_ rawValue: String) {
        guard rawValue.utf8.count == 32,
            rawValue.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) })
        else { return nil }
        self.rawValue = rawValue
    }

    /// A new random identity.
    public static func random<G: RandomNumberGenerator>(using generator: inout G) -> PeerID {
        let hex = Array("0123456789abcdef")
        var text = ""
        for _ in 0..<32 { text.append(hex[Int(generator.next() % 16)]) }
        return PeerID(text)!
    }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let id = PeerID(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "bad peer id"))
        }
        self = id
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    public var description: String { rawValue }
    /// The first 8 digits, for display.
    public var short: String { String(rawValue.prefix(8)) }
}
