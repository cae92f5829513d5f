import TuttiCore
import TuttiDiscovery
import TuttiIO
import TuttiWire

/// The world a peer's control plane talks to: other peers' control channels, DNS-SD, and the host clock its
/// connections' deadlines count on. `.system` is TCP, Avahi and `CLOCK_MONOTONIC`; tests give an in-memory
/// network, a fake directory and a hand-moved clock (TuttiTesting), so that the peer runs on fake time. (The
/// media engine's sockets and device clocks stay real.) A value; thread-safe: yes (any thread).
public struct PeerEnvironment: Sendable {
    public var transport: any ControlTransport
    public var discovery: ServiceDiscoveryFactory
    public var clock: any MediaClock

    public init(transport: any ControlTransport, discovery: @escaping ServiceDiscoveryFactory, clock: any MediaClock) {
        self.transport = transport
        self.discovery = discovery
        self.clock = clock
    }

    /// TCP, Avahi and the monotonic host clock.
    public static var system: PeerEnvironment {
        PeerEnvironment(transport: TCPControlTransport(), discovery: ServiceDiscovery.avahi, clock: MonotonicClock())
    }
}
