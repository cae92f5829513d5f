import CTuttiIO
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A UDP socket for media: dual-stack (IPv6 with IPv4-mapped addresses) where the host has IPv6, IPv4
/// otherwise; marked DSCP EF (expedited forwarding) for audio.
///
/// Every socket asks the kernel to timestamp arriving datagrams (`SO_TIMESTAMPNS`), which
/// `UDPReceiveBatch` and `PacketReceiveLoop` turn into monotonic arrival times; `receive` ignores them.
/// `connect(to:)` fixes a single peer, so sends skip the per-packet route lookup (see
/// `Benchmarks/UDPBatching.md` for what that is worth).
///
/// Thread rules: one thread receives (`receive`, a `UDPReceiveBatch`, or a `PacketReceiveLoop` it is
/// registered with), any one thread sends (`send`, `UDPSendBatch.send`); `close` only after both have
/// stopped (and after `PacketReceiveLoop.unregister`). Realtime-safe: `send` (one non-blocking `sendto`),
/// `receive` blocks up to its timeout.
public final class UDPSocket: @unchecked Sendable {
    package let descriptor: Int32
    public let isDualStack: Bool
    /// The local port the socket is bound to.
    public let localPort: UInt16
    private var closed = false

    /// Binds to `port` (0: any free port) on all addresses.
    public init(port: UInt16 = 0) throws(SystemError) {
        var fd = system_socket(AF_INET6, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var dualStack = true
        if fd >= 0 {
            var off: Int32 = 0
            system_setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &off, socklen_t(MemoryLayout<Int32>.size))
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            address.sin6_addr = in6addr_any
            let status = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { system_bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
            if status != 0 {
                system_close(fd)
                fd = -1
            }
        }
        if fd < 0 {
            dualStack = false
            fd = system_socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { throw .current("create UDP socket") }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr.s_addr = INADDR_ANY
            let status = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { system_bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard status == 0 else {
                let error = SystemError.current("bind UDP port \(port)")
                system_close(fd)
                throw error
            }
        }
        descriptor = fd
        isDualStack = dualStack
        var tos: Int32 = 0xB8  // DSCP EF
        system_setsockopt(fd, Int32(IPPROTO_IP), IP_TOS, &tos, socklen_t(MemoryLayout<Int32>.size))
        if dualStack { system_setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_TCLASS, &tos, socklen_t(MemoryLayout<Int32>.size)) }
        var bufferBytes: Int32 = 1 << 20
        system_setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bufferBytes, socklen_t(MemoryLayout<Int32>.size))
        system_setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bufferBytes, socklen_t(MemoryLayout<Int32>.size))
        var on: Int32 = 1
        system_setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, socklen_t(MemoryLayout<Int32>.size))

        var bound = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &bound) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { system_getsockname(fd, $0, &length) }
        }
        localPort = withUnsafeBytes(of: bound) { raw in
            dualStack
                ? UInt16(bigEndian: raw.load(as: sockaddr_in6.self).sin6_port)
                : UInt16(bigEndian: raw.load(as: sockaddr_in.self).sin_port)
        }
    }

    deinit { close() }

    /// Prepares `address` for this socket's family (maps IPv4 on a dual-stack socket). Control plane.
    public func destination(_ address: UDPAddress) -> UDPAddress {
        isDualStack ? address.mappedToIPv6 : address
    }

    /// Sends one datagram without blocking. Returns `false` if the kernel refused it (buffer full,
    /// unreachable); the caller counts. Realtime-safe: one syscall.
    @discardableResult
    public func send(_ bytes: UnsafeRawBufferPointer, to address: UDPAddress) -> Bool {
        let sent = withUnsafeBytes(of: address.storage) { raw in
            system_sendto(
                descriptor, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT),
                raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), address.length)
        }
        return sent == bytes.count
    }

    /// Connects the socket to `address` (prepared with `destination(_:)`): it then sends there with
    /// `send(_:)` and no per-packet route lookup, and receives only from there. Control plane.
    ///
    /// - Throws: `SystemError` from `connect` (e.g. `ENETUNREACH`).
    public func connect(to address: UDPAddress) throws(SystemError) {
        let status = withUnsafeBytes(of: address.storage) { raw in
            system_connect(descriptor, raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), address.length)
        }
        guard status == 0 else { throw .current("connect UDP socket to \(address)") }
    }

    /// Sends one datagram to the connected peer without blocking. Returns `false` if the kernel refused it
    /// (buffer full, not connected, the peer's port unreachable); the caller counts. Realtime-safe: one syscall.
    @discardableResult
    public func send(_ bytes: UnsafeRawBufferPointer) -> Bool {
        system_send(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT)) == bytes.count
    }

    /// Lets the kernel hand datagrams of one flow that arrive together (a peer's GSO send of a period's
    /// streams, or packets a NIC's GRO merged) to this socket as one coalesced message (`UDP_GRO`), which a
    /// coalescing `UDPReceiveBatch` cuts back into datagrams: one socket enqueue and one copy per batch instead
    /// of per datagram. Only for a socket whose every receive goes through such a batch (a `PacketReceiveLoop`
    /// turns it on for the sockets it serves); `receive(into:timeoutMilliseconds:)` would see the merged bytes.
    /// Returns `false` where the kernel lacks it (before Linux 5.0): datagrams then come one by one, as
    /// before. Control plane.
    @discardableResult
    public func enableReceiveCoalescing() -> Bool { system_enable_udp_gro(descriptor) == 0 }

    /// Waits up to `timeoutMilliseconds` until a datagram is queued (for a `UDPReceiveBatch`). Returns `false`
    /// on timeout or interruption. Realtime-safe: blocks in `poll`, allocates nothing.
    public func waitUntilReadable(timeoutMilliseconds: Int32) -> Bool {
        var descriptorSet = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return system_poll(&descriptorSet, 1, timeoutMilliseconds) > 0
    }

    /// Waits up to `timeout` for one datagram and copies it into `buffer`.
    ///
    /// - Returns: the datagram's length (truncated datagrams are reported with their full length, larger
    ///   than `buffer.count`, so the caller can reject them), or `nil` on timeout or interruption.
    public func receive(into buffer: UnsafeMutableRawBufferPointer, timeoutMilliseconds: Int32) -> Int? {
        guard waitUntilReadable(timeoutMilliseconds: timeoutMilliseconds) else { return nil }
        let received = system_recv(descriptor, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT) | Int32(MSG_TRUNC))
        return received >= 0 ? received : nil
    }

    /// Closes the socket. Idempotent. Call only after the receiving and sending threads stopped.
    public func close() {
        guard !closed else { return }
        closed = true
        system_close(descriptor)
    }
}
