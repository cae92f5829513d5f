import Foundation
import Logging
import TuttiCore
import TuttiEngine
import TuttiTesting
import TuttiWire
import XCTest

@testable import TuttiPeer

/// Real peers on an in-memory control network, a fake DNS-SD directory and a hand-moved clock (streams run on
/// loopback, hosts 127.0.0.x): the network, directory and clock they share, and the peers. With `mediaByHand`
/// the peers' media engines run no threads: their periods run only in `play(for:)`, on the fake clock.
struct FakeWorld {
    let network = FakeControlNetwork()
    let services = FakeServiceDirectory()
    /// Whether the media engines' periods run only in `play(for:)`.
    let mediaByHand: Bool
    /// Starts at 1000 s; with `mediaByHand` at 1 s, behind the real monotonic clock, so that a hand-run period
    /// takes a datagram's kernel arrival time (which is later) as the period's own time.
    let clock: ManualClock
    let directory = "/tmp/tutti-fake-time-tests-\(getpid())-\(UInt32.random(in: 0 ... .max))"
    var peers: [Peer] = []
    var tasks: [Task<Void, Never>] = []

    init(mediaByHand: Bool = false) {
        self.mediaByHand = mediaByHand
        clock = ManualClock(start: HostTime(nanoseconds: mediaByHand ? 1_000_000_000 : 1_000_000_000_000))
    }

    /// Starts a peer named `name` on `host` with `ports`.
    mutating func start(_ name: String, host: String, ports: [PortConfiguration]) async throws -> Peer {
        var configuration = PeerConfiguration(name: name, stateDirectory: "\(directory)/\(host)", ports: ports)
        configuration.link = nil
        configuration.realtimePriority = 0
        // Hand-run engines share one clock: no drift to follow, and the resampler's delay (about 21 frames a
        // hop) would blur the figures these tests check to the frame.
        if mediaByHand { configuration.driftCompensation = false }
        var logger = Logger(label: "test.\(name)")
        logger.logLevel = .warning
        let environment = PeerEnvironment(
            transport: network.transport(from: host), discovery: services.discovery(host: host), clock: clock,
            mediaThreads: !mediaByHand)
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

    /// Plays `duration` of media time, period by period (`periodFrames` at `sampleRate`): sets the clock to each
    /// period's start (counted in frames from the clock's time now, so no rounding adds up) and runs every peer's
    /// engine for it, in the order the peers started (a datagram sent in a period reaches a later peer in the same
    /// period); every 100 ms of it the peers run their due deadlines and settle. Needs `mediaByHand`.
    func play(for duration: Duration, periodFrames: Int = 64, sampleRate: Int = 48_000) async {
        precondition(mediaByHand, "a world whose engines run their own threads")
        let start = clock.now().nanoseconds
        let frames = Int64((duration / .seconds(1)) * Double(sampleRate))
        var played: Int64 = 0
        var sincePoll = 0
        while played < frames {
            let time = HostTime(nanoseconds: start + played * 1_000_000_000 / Int64(sampleRate))
            clock.set(to: time)
            for peer in peers { await peer.runMediaPeriod(at: time) }
            played += Int64(periodFrames)
            sincePoll += periodFrames
            if sincePoll >= sampleRate / 10 {
                sincePoll = 0
                for peer in peers {
                    await peer.pollConnections()
                    await peer.settle()
                }
            }
        }
        clock.set(to: HostTime(nanoseconds: start + played * 1_000_000_000 / Int64(sampleRate)))
    }

    func stopAll() async {
        for peer in peers { await peer.stop() }
        for task in tasks { await task.value }
        try? FileManager.default.removeItem(atPath: directory)
    }
}
