#if canImport(Glibc)
import Glibc
#endif
import TuttiClock

/// The three UDP sockets Link uses on one local IPv4 address ("gateway", reference section 2): the group
/// receiver (0.0.0.0:20808, SO_REUSEADDR, joined to 224.76.78.75 on this interface only), the discovery
/// socket (address:ephemeral; sends ALIVE/RESPONSE/BYEBYE, receives RESPONSEs) and the measurement socket
/// (address:ephemeral; answers pings and sends this peer's own).
///
/// Control plane creates and closes; the Link network thread uses them.
final class LinkGatewaySockets: @unchecked Sendable {
    static let groupAddress: UInt32 = 0xE04C_4E4B  // 224.76.78.75
    static let groupPort: UInt16 = 20_808

    let interfaceName: String
    /// The interface address in host byte order.
    let address: UInt32
    let group: Int32
    let discovery: Int32
    let measurement: Int32
    let measurementPort: UInt16

    init(interfaceName: String, address: UInt32) throws(SystemError) {
        self.interfaceName = interfaceName
        self.address = address
        let isLoopback = address >> 24 == 127
        var created: [Int32] = []
        func fail(_ operation: String) -> SystemError {
            let error = SystemError.current("\(operation) on \(interfaceName)")
            for fd in created { system_close(fd) }
            return error
        }
        func udpSocket() -> Int32 {
            let fd = system_socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            if fd >= 0 { created.append(fd) }
            return fd
        }
        func setOption(_ fd: Int32, _ level: Int32, _ name: Int32, _ value: Int32) {
            var value = value
            system_setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size))
        }
        func bindTo(_ fd: Int32, _ host: UInt32, _ port: UInt16) -> Bool {
            var socketAddress = sockaddr_in()
            socketAddress.sin_family = sa_family_t(AF_INET)
            socketAddress.sin_port = port.bigEndian
            socketAddress.sin_addr.s_addr = host.bigEndian
            return withUnsafePointer(to: &socketAddress) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { system_bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            } == 0
        }

        // Group receiver.
        let group = udpSocket()
        guard group >= 0 else { throw fail("create Link group socket") }
        setOption(group, SOL_SOCKET, SO_REUSEADDR, 1)
        setOption(group, Int32(IPPROTO_IP), 49 /* IP_MULTICAST_ALL */, 0)
        guard bindTo(group, 0, Self.groupPort) else { throw fail("bind 0.0.0.0:\(Self.groupPort)") }
        var membership = ip_mreq()
        membership.imr_multiaddr.s_addr = Self.groupAddress.bigEndian
        membership.imr_interface.s_addr = address.bigEndian
        guard system_setsockopt(group, Int32(IPPROTO_IP), IP_ADD_MEMBERSHIP, &membership, socklen_t(MemoryLayout<ip_mreq>.size)) == 0 else {
            throw fail("join the Link group")
        }

        // Discovery sender.
        let discovery = udpSocket()
        guard discovery >= 0 else { throw fail("create Link discovery socket") }
        setOption(discovery, SOL_SOCKET, SO_REUSEADDR, 1)
        guard bindTo(discovery, address, 0) else { throw fail("bind the Link discovery socket") }
        var interface = in_addr(s_addr: address.bigEndian)
        system_setsockopt(discovery, Int32(IPPROTO_IP), IP_MULTICAST_IF, &interface, socklen_t(MemoryLayout<in_addr>.size))
        setOption(discovery, Int32(IPPROTO_IP), IP_MULTICAST_LOOP, isLoopback ? 1 : 0)
        setOption(discovery, Int32(IPPROTO_IP), IP_MULTICAST_TTL, 1)

        // Measurement.
        let measurement = udpSocket()
        guard measurement >= 0 else { throw fail("create Link measurement socket") }
        guard bindTo(measurement, address, 0) else { throw fail("bind the Link measurement socket") }
        var bound = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &bound) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { system_getsockname(measurement, $0, &length) }
        }
        self.group = group
        self.discovery = discovery
        self.measurement = measurement
        measurementPort = UInt16(bigEndian: bound.sin_port)
    }

    deinit {
        system_close(group)
        system_close(discovery)
        system_close(measurement)
    }

    var measurementEndpoint: LinkEndpoint {
        LinkEndpoint(
            ipv4: UInt8(address >> 24), UInt8(address >> 16 & 0xFF), UInt8(address >> 8 & 0xFF), UInt8(address & 0xFF),
            port: measurementPort)
    }

    /// Sends `bytes` from `fd` to an IPv4 endpoint (host byte order address). Non-blocking.
    static func send(_ bytes: UnsafeRawBufferPointer, from fd: Int32, to address: UInt32, port: UInt16) {
        var destination = sockaddr_in()
        destination.sin_family = sa_family_t(AF_INET)
        destination.sin_port = port.bigEndian
        destination.sin_addr.s_addr = address.bigEndian
        _ = withUnsafePointer(to: &destination) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                system_sendto(fd, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT), $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
    }

    /// Reads one datagram from `fd` into `buffer`: its length and source (address, port), or nil.
    static func receive(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) -> (length: Int, address: UInt32, port: UInt16)? {
        var source = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let count = withUnsafeMutablePointer(to: &source) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                system_recvfrom(fd, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT), $0, &length)
            }
        }
        guard count >= 0 else { return nil }
        return (count, UInt32(bigEndian: source.sin_addr.s_addr), UInt16(bigEndian: source.sin_port))
    }

    /// The running IPv4 interfaces with multicast (and loopback), optionally only those named.
    static func interfaces(named names: [String]?) -> [(name: String, address: UInt32)] {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard system_getifaddrs(&list) == 0 else { return [] }
        defer { system_freeifaddrs(list) }
        var result: [(String, UInt32)] = []
        var cursor = list
        while let entry = cursor {
            defer { cursor = entry.pointee.ifa_next }
            guard let socketAddress = entry.pointee.ifa_addr, Int32(socketAddress.pointee.sa_family) == AF_INET else { continue }
            let flags = Int32(entry.pointee.ifa_flags)
            guard flags & Int32(IFF_UP) != 0, flags & Int32(IFF_RUNNING) != 0 else { continue }
            let name = String(cString: entry.pointee.ifa_name)
            if let names, !names.contains(name) { continue }
            let address = socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                UInt32(bigEndian: $0.pointee.sin_addr.s_addr)
            }
            result.append((name, address))
        }
        return result
    }
}
