#if canImport(Glibc)
import Glibc
import TuttiEngine
#endif
import Logging
import TuttiCore
import TuttiPeer
import TuttiTesting
import TuttiWire
import XCTest

/// Two or more real peers in this process, on loopback, without DNS-SD (they are named by endpoint).
/// Each test gets fresh peers on free ports and stops them at the end.
struct LoopbackPeers {
    var peers: [Peer] = []
    var tasks: [Task<Void, Never>] = []
    let directory: String

    init() {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("tutti-peer-tests-\(UInt32.random(in: 0 ... .max))").path
    }

    /// - Parameters:
    ///   - rtpAllowed: where the peer may stream plain RTP (`--allow-rtp`); none by default.
    ///   - access: the test session (members only, `TestSession.keys`) by default.
    ///   - configure: any other change to the configuration, made last.
    mutating func start(
        _ name: String, ports: [PortConfiguration], rtpAllowed: [String] = [], access: PeerAccess = TestSession.access,
        configure: (inout PeerConfiguration) -> Void = { _ in }
    ) async throws -> Peer {
        var configuration = PeerConfiguration(name: name, stateDirectory: directory, ports: ports)
        configuration.access = access
        configuration.rtpAllowed = rtpAllowed.map { IPPrefix(parsing: $0)! }
        configuration.discovery = false
        // No beat clock: Link multicasts, and these peers run in the machine's own network namespace.
        configuration.link = nil
        configure(&configuration)
        var logger = Logger(label: "test.\(name)")
        logger.logLevel = .warning
        let peer = try await Peer.start(configuration, logger: logger)
        peers.append(peer)
        tasks.append(
            Task {
                do throws(PeerError) { try await peer.run() } catch { XCTFail("peer \(name) failed: \(error)") }
            })
        return peer
    }

    func stopAll() async {
        for peer in peers { await peer.stop() }
        for task in tasks { await task.value }
    }
}

extension Peer {
    nonisolated var endpoint: ControlEndpoint { ControlEndpoint(host: "127.0.0.1", port: controlPort) }
}

/// A raw TCP connection to a control port on 127.0.0.1 (receives time out after 3 s), for tests that send
/// bytes no client would or look at the socket itself. Close it with `close`.
func connectedControlSocket(port: UInt16, file: StaticString = #filePath, line: UInt = #line) -> Int32 {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    XCTAssertGreaterThanOrEqual(descriptor, 0, file: file, line: line)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    XCTAssertEqual(connected, 0, file: file, line: line)
    var timeout = timeval(tv_sec: 3, tv_usec: 0)
    setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    return descriptor
}
