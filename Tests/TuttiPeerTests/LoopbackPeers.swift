import Logging
import TuttiPeer
import TuttiWire
import XCTest

/// Two or more real peers in this process, on loopback, without DNS-SD (they are named by endpoint).
/// Each test gets fresh peers on free ports and stops them at the end.
struct LoopbackPeers {
    var peers: [Peer] = []
    var tasks: [Task<Void, Never>] = []
    let directory: String

    init() {
        directory = "/tmp/tutti-peer-tests-\(UInt32.random(in: 0 ... .max))"
    }

    mutating func start(_ name: String, ports: [PortConfiguration]) async throws -> Peer {
        var configuration = PeerConfiguration(name: name, stateDirectory: directory, ports: ports)
        configuration.discovery = false
        // No beat clock: Link multicasts, and these peers run in the machine's own network namespace.
        configuration.link = nil
        var logger = Logger(label: "test.\(name)")
        logger.logLevel = .warning
        let peer = try await Peer.start(configuration, logger: logger)
        peers.append(peer)
        tasks.append(Task { await peer.run() })
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
