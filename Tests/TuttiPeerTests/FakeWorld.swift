import Foundation
import Logging
import TuttiCore
import TuttiEngine
import TuttiTesting
import TuttiWire
import XCTest

@testable import TuttiPeer

/// Real peers on an in-memory control network, a fake DNS-SD directory and a hand-moved clock (the media engine
/// stays real: streams run on loopback, hosts 127.0.0.x): the network, directory and clock they share, and the peers.
struct FakeWorld {
    let network = FakeControlNetwork()
    let services = FakeServiceDirectory()
    let clock = ManualClock(start: HostTime(nanoseconds: 1_000_000_000_000))
    let directory = "/tmp/tutti-fake-time-tests-\(getpid())-\(UInt32.random(in: 0 ... .max))"
    var peers: [Peer] = []
    var tasks: [Task<Void, Never>] = []

    mutating func start(_ name: String, host: String, ports: [PortConfiguration]) async throws -> Peer {
        var configuration = PeerConfiguration(name: name, stateDirectory: "\(directory)/\(host)", ports: ports)
        configuration.link = nil
        configuration.realtimePriority = 0
        var logger = Logger(label: "test.\(name)")
        logger.logLevel = .warning
        let environment = PeerEnvironment(
            transport: network.transport(from: host), discovery: services.discovery(host: host), clock: clock)
        let peer = try await Peer.start(configuration, logger: logger, environment: environment)
        network.attach(Self.endpoint(of: peer, on: host)) { request, remoteHost in await peer.handle(request, remoteHost: remoteHost) }
        peers.append(peer)
        tasks.append(Task { try? await peer.run() })
        return peer
    }

    static func endpoint(of peer: Peer, on host: String) -> ControlEndpoint { ControlEndpoint(host: host, port: peer.controlPort) }

    /// Moves the clock, lets each peer run its due deadlines, and waits for what they started to finish.
    func advance(by duration: Duration) async {
        clock.advance(by: duration)
        for peer in peers {
            await peer.pollConnections()
            await peer.settle()
        }
    }

    func stopAll() async {
        for peer in peers { await peer.stop() }
        for task in tasks { await task.value }
        try? FileManager.default.removeItem(atPath: directory)
    }
}
