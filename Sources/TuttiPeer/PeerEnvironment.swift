import TuttiCore
import TuttiDiscovery
import TuttiIO
import TuttiWire

/// The world a peer's control plane talks to: other peers' control channels, DNS-SD, and the host clock its
/// connections' deadlines count on. `.system` is TCP, Avahi and `CLOCK_MONOTONIC`; tests give an in-memory
/// network, a fake directory and a hand-moved clock (TuttiTesting), so that the peer runs on fake time. (The
/// media engine's sockets and device clocks stay real.) Applications use `.system`; the fakes are the package's
/// own (`package` members). A value; thread-safe: yes (any thread).
public struct PeerEnvironment: Sendable {
    package var transport: any ControlTransport
    package var discovery: ServiceDiscoveryFactory
    package var clock: any MediaClock

    package init(transport: any ControlTransport, discovery: @escaping ServiceDiscoveryFactory, clock: any MediaClock) {
        self.transport = transport
        self.discovery = discovery
        self.clock = clock
    }

    /// TCP, Avahi and the monotonic host clock.
    public static var system: PeerEnvironment {
        PeerEnvironment(transport: TCPControlTransport(), discovery: ServiceDiscovery.avahi, clock: MonotonicClock())
    }
}
