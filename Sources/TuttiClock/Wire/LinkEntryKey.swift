// The 4-byte ASCII keys of Link payload entries.

/// A payload entry's key: 4 ASCII bytes read in order as a big-endian `UInt32` (`tmln` = 0x746d6c6e).
///
/// Realtime-safe and thread-safe: a value.
package struct LinkEntryKey: Hashable, Sendable, CustomStringConvertible {
    /// The key's 4 bytes as a big-endian integer.
    package var rawValue: UInt32

    @inlinable package init(rawValue: UInt32) { self.rawValue = rawValue }

    /// From 4 characters of ASCII text; `nil` for any other text.
    package init?(_ text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count == 4, bytes.allSatisfy({ $0 < 0x80 }) else { return nil }
        rawValue = bytes.reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// The 4 bytes in wire order.
    package var bytes: [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: rawValue >> (24 - 8 * $0)) } }

    /// The key as text when it is printable ASCII, else as hex (`0x00ff1234`).
    package var description: String {
        let bytes = bytes
        if bytes.allSatisfy({ (32...126).contains($0) }) { return String(decoding: bytes, as: UTF8.self) }
        let hex = String(rawValue, radix: 16)
        return "0x" + String(repeating: "0", count: 8 - hex.count) + hex
    }

    // Discovery (state) entries.
    /// `tmln`: the session timeline (24 bytes).
    package static let timeline = LinkEntryKey(rawValue: 0x746d_6c6e)
    /// `sess`: the session id (8 bytes); also the first entry of a PONG.
    package static let sessionID = LinkEntryKey(rawValue: 0x7365_7373)
    /// `stst`: the start/stop state (17 bytes).
    package static let startStop = LinkEntryKey(rawValue: 0x7374_7374)
    /// `mep4`: the measurement endpoint over IPv4 (6 bytes).
    package static let measurementEndpointV4 = LinkEntryKey(rawValue: 0x6d65_7034)
    /// `mep6`: the measurement endpoint over IPv6 (18 bytes).
    package static let measurementEndpointV6 = LinkEntryKey(rawValue: 0x6d65_7036)
    /// `aep4`: the Link Audio endpoint over IPv4 (6 bytes).
    package static let audioEndpointV4 = LinkEntryKey(rawValue: 0x6165_7034)
    /// `aep6`: the Link Audio endpoint over IPv6 (18 bytes).
    package static let audioEndpointV6 = LinkEntryKey(rawValue: 0x6165_7036)

    // Measurement entries.
    /// `__ht`: the pinger's host time (8 bytes).
    package static let hostTime = LinkEntryKey(rawValue: 0x5f5f_6874)
    /// `_pgt`: the ghost time of the previous PONG (8 bytes).
    package static let previousGhostTime = LinkEntryKey(rawValue: 0x5f70_6774)
    /// `__gt`: the responder's ghost time (8 bytes).
    package static let ghostTime = LinkEntryKey(rawValue: 0x5f5f_6774)
}
