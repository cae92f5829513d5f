/// An IPv4 or IPv6 address, held as integers in network order so the value never allocates.
///
/// Parsing accepts numeric literals only (never a host name: nothing here resolves anything): dotted
/// quads without leading zeros (`198.18.0.1`, not `198.018.0.1`, which `inet_aton` would read as octal),
/// and RFC 4291 IPv6 text (`2001:2::1`, `::1`, `::ffff:192.0.2.1`) without a zone (`%eth0`). The text
/// form is RFC 5952's: lowercase, the longest run of two or more zero groups as `::`, IPv4-mapped
/// addresses in mixed notation. Pure value; realtime-safe: the cases and predicates (not the text).
/// Thread-safe: yes.
public enum IPAddress: Hashable, Sendable, CustomStringConvertible {
    /// The 4 address bytes as a big-endian integer (198.18.1.2 = 0xC612_0102).
    case ipv4(UInt32)
    /// The 16 address bytes as two big-endian integers: bytes 0–7 and bytes 8–15.
    case ipv6(high: UInt64, low: UInt64)

    /// Parses an IPv4 or IPv6 literal; `nil` for anything else (host names, zones, brackets, ports).
    public init?(parsing text: some StringProtocol) {
        let bytes = Array(text.utf8)
        if let value = Self.parseIPv4(bytes[...]) {
            self = .ipv4(value)
        } else if let groups = Self.parseIPv6(bytes) {
            let high = groups[0..<4].reduce(UInt64(0)) { $0 << 16 | UInt64($1) }
            let low = groups[4..<8].reduce(UInt64(0)) { $0 << 16 | UInt64($1) }
            self = .ipv6(high: high, low: low)
        } else {
            return nil
        }
    }

    /// Whether this is an IPv6 address (SDP's `IP6` address type).
    @inlinable public var isIPv6: Bool { if case .ipv6 = self { true } else { false } }

    /// 127.0.0.0/8 or ::1.
    public var isLoopback: Bool {
        switch self {
        case .ipv4(let value): value >> 24 == 127
        case .ipv6(let high, let low): high == 0 && low == 1
        }
    }

    /// 224.0.0.0/4 or ff00::/8.
    public var isMulticast: Bool {
        switch self {
        case .ipv4(let value): value >> 28 == 0xE
        case .ipv6(let high, _): high >> 56 == 0xFF
        }
    }

    /// 0.0.0.0 or :: (a wildcard, never a destination).
    public var isUnspecified: Bool {
        switch self {
        case .ipv4(let value): value == 0
        case .ipv6(let high, let low): high == 0 && low == 0
        }
    }

    /// `198.18.0.1` or `2001:2::1` (RFC 5952).
    public var description: String {
        switch self {
        case .ipv4(let value):
            return Self.dotted(value)
        case .ipv6(let high, let low):
            let groups =
                (0..<4).map { UInt16(truncatingIfNeeded: high >> (48 - 16 * $0)) }
                + (0..<4).map { UInt16(truncatingIfNeeded: low >> (48 - 16 * $0)) }
            if high == 0, low >> 32 == 0xFFFF {  // IPv4-mapped: ::ffff:a.b.c.d (RFC 5952 §5)
                return "::ffff:" + Self.dotted(UInt32(truncatingIfNeeded: low))
            }
            // The longest run of two or more zero groups (the first one on a tie) becomes "::".
            var bestStart = -1
            var bestLength = 0
            var index = 0
            while index < 8 {
                guard groups[index] == 0 else {
                    index += 1
                    continue
                }
                var end = index
                while end < 8 && groups[end] == 0 { end += 1 }
                if end - index > bestLength { (bestStart, bestLength) = (index, end - index) }
                index = end
            }
            let hex = groups.map { String($0, radix: 16) }
            guard bestLength >= 2 else { return hex.joined(separator: ":") }
            return hex[..<bestStart].joined(separator: ":") + "::" + hex[(bestStart + bestLength)...].joined(separator: ":")
        }
    }

    /// The host as a URI writes it (RFC 3986): IPv6 in brackets, `[::1]`; IPv4 as is.
    public var uriHost: String { isIPv6 ? "[\(description)]" : description }

    private static func dotted(_ value: UInt32) -> String {
        (0..<4).map { String(UInt8(truncatingIfNeeded: value >> (24 - 8 * $0))) }.joined(separator: ".")
    }

    private static let colon = UInt8(ascii: ":")
    private static let dot = UInt8(ascii: ".")

    /// Four decimal parts 0–255, no leading zeros, nothing else.
    private static func parseIPv4(_ bytes: ArraySlice<UInt8>) -> UInt32? {
        let parts = bytes.split(separator: dot, omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var value: UInt32 = 0
        for part in parts {
            guard (1...3).contains(part.count), part.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
            guard part.count == 1 || part.first != 0x30 else { return nil }
            let number = part.reduce(UInt32(0)) { $0 * 10 + UInt32($1 - 0x30) }
            guard number <= 255 else { return nil }
            value = value << 8 | number
        }
        return value
    }

    /// Eight 16-bit groups, or nil. At most one `::`; the last group may be a dotted quad (two groups).
    private static func parseIPv6(_ bytes: [UInt8]) -> [UInt16]? {
        guard bytes.count >= 2, bytes.count <= 45 else { return nil }
        var compression: Int?
        for index in 0..<(bytes.count - 1) where bytes[index] == colon && bytes[index + 1] == colon {
            guard compression == nil else { return nil }  // a second "::", or ":::"
            compression = index
        }
        func groups(_ side: ArraySlice<UInt8>, last: Bool) -> [UInt16]? {
            guard !side.isEmpty else { return [] }
            let fields = side.split(separator: colon, omittingEmptySubsequences: false)
            var result = [UInt16]()
            for (position, field) in fields.enumerated() {
                if last, position == fields.count - 1, field.contains(dot) {
                    guard let value = parseIPv4(field) else { return nil }
                    result += [UInt16(truncatingIfNeeded: value >> 16), UInt16(truncatingIfNeeded: value)]
                    continue
                }
                guard (1...4).contains(field.count) else { return nil }
                var group: UInt16 = 0
                for byte in field {
                    guard let digit = Hex.value(ofDigit: byte) else { return nil }
                    group = group << 4 | UInt16(digit)
                }
                result.append(group)
            }
            return result
        }
        if let compression {
            guard let head = groups(bytes[..<compression], last: false),
                let tail = groups(bytes[(compression + 2)...], last: true),
                head.count + tail.count <= 7
            else { return nil }
            return head + [UInt16](repeating: 0, count: 8 - head.count - tail.count) + tail
        }
        guard let all = groups(bytes[...], last: true), all.count == 8 else { return nil }
        return all
    }
}
