// A UDP endpoint as Link puts it on the wire (`mep4`/`mep6`, `aep4`/`aep6`).

import TuttiCore

/// An IPv4 or IPv6 address and UDP port, as carried by Link's endpoint entries.
///
/// IPv6 link-local addresses travel without a scope id; the receiver supplies the scope of the
/// interface the message arrived on (that is the socket layer's business, not this type's).
/// Realtime-safe and thread-safe: a value.
package struct LinkEndpoint: Hashable, Sendable, CustomStringConvertible {
    /// An address in network byte order (`TuttiCore.IPAddress`: held as integers, so the value never allocates).
    package typealias Address = IPAddress

    package var address: Address
    package var port: UInt16

    @inlinable package init(address: Address, port: UInt16) {
        self.address = address
        self.port = port
    }

    /// An IPv4 endpoint from its four address bytes in dotted order.
    @inlinable package init(ipv4 a: UInt8, _ b: UInt8, _ c: UInt8, _ d: UInt8, port: UInt16) {
        self.init(address: .ipv4(UInt32(a) << 24 | UInt32(b) << 16 | UInt32(c) << 8 | UInt32(d)), port: port)
    }

    /// From 4 (IPv4) or 16 (IPv6) address bytes in wire order; `nil` for any other count.
    package init?(addressBytes: some Collection<UInt8>, port: UInt16) {
        let bytes = Array(addressBytes)
        switch bytes.count {
        case 4: address = .ipv4(bytes.reduce(0) { $0 << 8 | UInt32($1) })
        case 16:
            address = .ipv6(
                high: bytes[0..<8].reduce(0) { $0 << 8 | UInt64($1) },
                low: bytes[8..<16].reduce(0) { $0 << 8 | UInt64($1) })
        default: return nil
        }
        self.port = port
    }

    /// Whether this is an IPv6 endpoint (sent as `mep6`/`aep6`).
    @inlinable package var isIPv6: Bool { if case .ipv6 = address { true } else { false } }

    /// The address bytes in wire order (4 or 16).
    package var addressBytes: [UInt8] {
        switch address {
        case .ipv4(let value): return (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) }
        case .ipv6(let high, let low):
            return (0..<8).map { UInt8(truncatingIfNeeded: high >> (56 - 8 * $0)) }
                + (0..<8).map { UInt8(truncatingIfNeeded: low >> (56 - 8 * $0)) }
        }
    }

    /// Value bytes of the entry: address then port (6 or 18).
    var encodedSize: Int { isIPv6 ? 18 : 6 }

    func write(to writer: inout LinkWireWriter) {
        switch address {
        case .ipv4(let value): writer.u32(value)
        case .ipv6(let high, let low):
            writer.u64(high)
            writer.u64(low)
        }
        writer.u16(port)
    }

    /// Reads an endpoint value of 6 (IPv4) or 18 (IPv6) bytes at `offset`; the caller checked the size.
    static func read(_ bytes: UnsafeRawBufferPointer, at offset: Int, ipv6: Bool) -> LinkEndpoint {
        if ipv6 {
            return LinkEndpoint(
                address: .ipv6(high: LinkWireBytes.u64(bytes, offset), low: LinkWireBytes.u64(bytes, offset + 8)),
                port: LinkWireBytes.u16(bytes, offset + 16))
        }
        return LinkEndpoint(address: .ipv4(LinkWireBytes.u32(bytes, offset)), port: LinkWireBytes.u16(bytes, offset + 4))
    }

    /// `198.18.1.2:47623` or `[fe80::18c4:17ff:fe3e:79ac]:39771` (RFC 5952 text).
    package var description: String { "\(address.uriHost):\(port)" }
}
