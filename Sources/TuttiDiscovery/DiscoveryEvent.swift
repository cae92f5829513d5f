/// What a ``ServiceDiscovery`` reports through its `onEvent` handler.
///
/// Events arrive one at a time, in order, on the discovery's private serial event queue (never on
/// Avahi's thread and never with a lock held), so a handler may call back into the
/// ``ServiceDiscovery``. A plain value: read it on any thread.
package enum DiscoveryEvent: Sendable, Equatable {
    /// Our service is established (probing finished, announced) under `name`. Sent after every
    /// (re-)registration, including after the daemon came back.
    case published(name: String)
    /// Our name collided with another service on the network, so we picked an alternative with
    /// `avahi_alternative_service_name` (for example "Studio" → "Studio #2") and re-registered.
    /// A `published(name: to)` follows once the new name is established.
    case renamed(from: String, to: String)
    /// avahi-daemon (or the system D-Bus) cannot be reached, at start or because it went away.
    /// Sent once per outage; `reason` is Avahi's error text. Every service reported so far has
    /// been reported removed, and our own service is not registered until `daemonAvailable`.
    case daemonUnavailable(reason: String)
    /// The daemon is reachable and running (sent at the first connection and after each outage);
    /// our service is being registered again and browsing has been restarted automatically.
    case daemonAvailable
    /// A service instance was found, or its host name, addresses, port or TXT record changed.
    /// Sent again with the full new value on every change. Our own service is reported too
    /// (filter it by a TXT key such as an instance id if needed).
    case serviceFound(DiscoveredService)
    /// The last instance (over all interfaces and protocols) of a service previously reported
    /// by `serviceFound` is gone, or the daemon went away so we can no longer know it exists.
    case serviceRemoved(instanceName: String)
}
