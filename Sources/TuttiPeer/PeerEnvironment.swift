import TuttiCore
import TuttiDiscovery
import TuttiIO
import TuttiWire

/// The world a peer talks to: other peers' control channels, DNS-SD, the host clock its connections' deadlines
/// count on, and what paces its media engine. `.system` is TCP, Avahi, `CLOCK_MONOTONIC` and the engine's own
/// device-clock threads; tests give an in-memory network, a fake directory and a hand-moved clock
/// (TuttiTesting), and may run the engine's periods by hand (`Peer.runMediaPeriod(at:)`), so that the peer runs
/// on fake time. (Media datagrams still travel through real loopback sockets: a datagram sent in a period is
/// queued on its receiver's socket before the send returns, and a hand-run period reads it with its arrival
/// time clamped to the period's time, so hand-run peers see a network without jitter.) Applications use
/// `.system`; the fakes are the package's own (`package` members). A value; thread-safe: yes (any thread).
public struct PeerEnvironment: Sendable {
    package var transport: any ControlTransport
    package var discovery: ServiceDiscoveryFactory
    package var clock: any MediaClock
    /// Whether the media engine's periods come from its device-clock threads (true) or only from
    /// `Peer.runMediaPeriod(at:)` (false: deterministic tests).
    package var mediaThreads: Bool

    package init(
        transport: any ControlTransport, discovery: @escaping ServiceDiscoveryFactory, clock: any MediaClock, mediaThreads: Bool = true
    ) {
        self.transport = transport
        self.discovery = discovery
        self.clock = clock
        self.mediaThreads = mediaThreads
    }

    /// TCP, Avahi and the monotonic host clock.
    public static var system: PeerEnvironment {
        PeerEnvironment(transport: TCPControlTransport(), discovery: ServiceDiscovery.avahi, clock: MonotonicClock())
    }
}
