#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A resolved IPv4 or IPv6 UDP destination (a `sockaddr_storage`), ready for `sendto`.
public struct UDPAddress: Sendable, CustomStringConvertible {
    public private(set) var storage = sockaddr_storage()
    public private(set) var length: socklen_t = 0

    /// Resolves a numeric address or host name (control plane: may block on DNS).
    public init(host: String, port: UInt16) throws(SystemError) {
        try self.init(host: host, port: port, flags: 0)
    }

    /// An address the kernel reported (a datagram's source). TuttiIO only.
    init(storage: sockaddr_storage, length: socklen_t) {
        self.storage = storage
        self.length = length
    }

    /// Converts a numeric IPv4 or IPv6 address, never asking DNS (`AI_NUMERICHOST`): for destinations that
    /// must mean exactly the address given. Control plane.
    ///
    /// - Throws: `SystemError` (`EHOSTUNREACH`) when `numericHost` is not an address literal.
    public init(numericHost: String, port: UInt16) throws(SystemError) {
        try self.init(host: numericHost, port: port, flags: AI_NUMERICHOST)
    }

    private init(host: String, port: UInt16, flags: Int32) throws(SystemError) {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        hints.ai_family = AF_UNSPEC
        hints.ai_flags = flags
        var result: UnsafeMutablePointer<addrinfo>?
        let status = system_getaddrinfo(host, String(port), &hints, &result)
        guard status == 0, let first = result else {
            throw SystemError("resolve \(host)", errno: status == EAI_SYSTEM ? system_errno : EHOSTUNREACH)
        }
        defer { system_freeaddrinfo(result) }
        withUnsafeMutableBytes(of: &storage) { raw in
            raw.copyMemory(from: UnsafeRawBufferPointer(start: first.pointee.ai_addr, count: Int(first.pointee.ai_addrlen)))
        }
        length = first.pointee.ai_addrlen
    }

    /// This address as an IPv4-mapped IPv6 address when it is IPv4 (for dual-stack sockets).
    public var mappedToIPv6: UDPAddress {
        guard Int32(storage.ss_family) == AF_INET else { return self }
        var copy = self
        withUnsafeBytes(of: storage) { raw in
            let v4 = raw.load(as: sockaddr_in.self)
            var v6 = sockaddr_in6()
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = v4.sin_port
            withUnsafeMutableBytes(of: &v6.sin6_addr) { address in
                address[10] = 0xFF
                address[11] = 0xFF
                withUnsafeBytes(of: v4.sin_addr) { address.baseAddress!.advanced(by: 12).copyMemory(from: $0.baseAddress!, byteCount: 4) }
            }
            copy.storage = sockaddr_storage()
            withUnsafeMutableBytes(of: &copy.storage) { $0.storeBytes(of: v6, as: sockaddr_in6.self) }
            copy.length = socklen_t(MemoryLayout<sockaddr_in6>.size)
        }
        return copy
    }

    /// Decodes a NUL-terminated C string buffer.
    static func string(_ buffer: [CChar]) -> String {
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: bytes, as: UTF8.self)
    }

    public var isIPv6: Bool { Int32(storage.ss_family) == AF_INET6 }

    /// The address as numeric text (`127.0.0.1`, `::1`, `fe80::1%eth0`), or nil if it has none. Control plane.
    public var numericHost: String? { numeric().map(\.host) }

    public var description: String {
        guard let (host, service) = numeric() else { return "?" }
        return host.contains(":") ? "[\(host)]:\(service)" : "\(host):\(service)"
    }

    private func numeric() -> (host: String, service: String)? {
        var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        var service = [CChar](repeating: 0, count: Int(NI_MAXSERV))
        let status = withUnsafeBytes(of: storage) { raw in
            getnameinfo(
                raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), length, &host, socklen_t(host.count), &service,
                socklen_t(service.count), NI_NUMERICHOST | NI_NUMERICSERV)
        }
        guard status == 0 else { return nil }
        return (Self.string(host), Self.string(service))
    }
}
