#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Orders and deduplicates textual IP addresses for ``DiscoveredService/addresses``.
/// Pure functions: call them on any thread.
enum AddressOrdering {
    /// Returns the addresses without duplicates, in a stable order: IPv4 (numerically), then IPv6
    /// without zone (numerically), then IPv6 with a zone such as "fe80::1%eth0" (by address, then
    /// zone), then anything unparsable (as text). Stable ordering keeps equal sets equal, so a
    /// service is not reported as changed when only the arrival order of its records changed.
    static func ordered(_ addresses: [String]) -> [String] {
        var seen = Set<String>()
        var keyed: [(key: SortKey, text: String)] = []
        for address in addresses where seen.insert(address).inserted {
            keyed.append((SortKey(address), address))
        }
        keyed.sort { $0.key < $1.key }
        return keyed.map(\.text)
    }

    private struct SortKey: Comparable {
        var rank: Int
        var bytes: [UInt8]
        var zone: String
        var text: String

        init(_ address: String) {
            text = address
            let parts = address.split(separator: "%", maxSplits: 1, omittingEmptySubsequences: false)
            let host = String(parts.first ?? "")
            zone = parts.count > 1 ? String(parts[1]) : ""
            if let v4 = Self.parse(host, family: AF_INET, count: 4), zone.isEmpty {
                rank = 0
                bytes = v4
            } else if let v6 = Self.parse(host, family: AF_INET6, count: 16) {
                rank = zone.isEmpty ? 1 : 2
                bytes = v6
            } else {
                rank = 3
                bytes = []
            }
        }

        static func < (a: SortKey, b: SortKey) -> Bool {
            if a.rank != b.rank { return a.rank < b.rank }
            if a.bytes != b.bytes { return a.bytes.lexicographicallyPrecedes(b.bytes) }
            if a.zone != b.zone { return a.zone < b.zone }
            return a.text < b.text
        }

        private static func parse(_ host: String, family: Int32, count: Int) -> [UInt8]? {
            var buffer = [UInt8](repeating: 0, count: 16)
            let ok = buffer.withUnsafeMutableBytes { raw in
                host.withCString { inet_pton(family, $0, raw.baseAddress) }
            }
            return ok == 1 ? Array(buffer.prefix(count)) : nil
        }
    }
}
