/// DNS-SD as a peer uses it: publish one service, browse for the others, stop. `ServiceDiscovery` (Avahi) is
/// the real one; tests use `FakeServiceDirectory` (TuttiTesting). Thread-safe: any thread.
package protocol ServiceDiscovering: AnyObject, Sendable {
    /// Publishes (or re-publishes) this peer's service; `published`, or `renamed` then `published`, follow.
    func publish(name: String, port: UInt16, txt: [String: String])
    /// Reports every service of the type, found and removed, from now on (this peer's own too).
    func startBrowsing()
    /// Withdraws the service and stops browsing; no event follows. Idempotent.
    func stop()
}

/// Makes a discovery for a service type (such as "_tutti._udp") that delivers its events, one at a time and in
/// order, to `onEvent`. Thread-safe: any thread.
package typealias ServiceDiscoveryFactory =
    @Sendable (_ serviceType: String, _ onEvent: @escaping @Sendable (DiscoveryEvent) -> Void) throws(DiscoveryError) ->
    any ServiceDiscovering

extension ServiceDiscovery: ServiceDiscovering {
    /// Avahi, through the system's avahi-daemon.
    package static let avahi: ServiceDiscoveryFactory = { serviceType, onEvent throws(DiscoveryError) in
        try ServiceDiscovery(serviceType: serviceType, onEvent: onEvent)
    }
}
