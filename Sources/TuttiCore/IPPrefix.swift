/// An address prefix in CIDR form (`192.168.1.0/24`, `2001:db8::/32`, `127.0.0.1` for one address), as a peer's
/// configuration names the standard RTP receivers it may stream to (`--allow-rtp`).
///
/// A prefix matches addresses of its own family only; an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) is not
/// an IPv4 address here. Host bits beyond the length are refused, so `192.168.1.7/24` is a typo, not a wider
/// rule than the user meant. Pure value; thread-safe: yes.
public struct IPPrefix: Hashable, Sendable, CustomStringConvertible {
    public let address: IPAddress
    public let length: Int

    /// Parses `ADDRESS/LENGTH` or a bare address (the whole address: /32 or /128).
    ///
    /// - Returns: nil for anything else: a host name, a length beyond the family's bits, host bits set.
    public init?(parsing text: some StringProtocol) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = IPAddress(parsing: parts[0]) else { return nil }
        let bits = address.isIPv6 ? 128 : 32
        var length = bits
        if parts.count == 2 {
            guard !parts[1].isEmpty, parts[1].allSatisfy(\.isASCII), parts[1].allSatisfy(\.isNumber), parts[1].count <= 3,
                let given = Int(parts[1]), given <= bits
            else { return nil }
            length = given
        }
        self.address = address
        self.length = length
        guard Self.masked(address, length: length) == address else { return nil }
    }

    /// Whether `candidate` lies in this prefix.
    public func contains(_ candidate: IPAddress) -> Bool {
        guard candidate.isIPv6 == address.isIPv6 else { return false }
        return Self.masked(candidate, length: length) == address
    }

    public var description: String { "\(address)/\(length)" }

    private static func masked(_ address: IPAddress, length: Int) -> IPAddress {
        switch address {
        case .ipv4(let value):
            return .ipv4(length == 0 ? 0 : value & ~UInt32(0) << UInt32(32 - length))
        case .ipv6(let high, let low):
            let highMask: UInt64 = length >= 64 ? ~0 : length == 0 ? 0 : ~UInt64(0) << UInt64(64 - length)
            let lowMask: UInt64 = length <= 64 ? 0 : length == 128 ? ~0 : ~UInt64(0) << UInt64(128 - length)
            return .ipv6(high: high & highMask, low: low & lowMask)
        }
    }
}
