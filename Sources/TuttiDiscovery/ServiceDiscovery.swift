import CAvahi
import Synchronization

/// Publishes this peer and finds the others with DNS-SD over avahi-daemon (libavahi-client).
///
/// Threads:
/// - Every method and property may be called from any thread, including from inside `onEvent`.
///   Calls take the lock of Avahi's threaded poll, so they may briefly wait for Avahi's thread.
/// - Avahi's own callbacks run on Avahi's private event-loop thread (`avahi_threaded_poll`).
/// - `onEvent` is called on a private serial dispatch queue, one event at a time and in order,
///   never on Avahi's thread and never with a lock held. Keep it short; hop to your own executor
///   for real work. Capture the `ServiceDiscovery` weakly in `onEvent` to avoid a retain cycle.
///
/// The daemon need not be running: the client is created with `AVAHI_CLIENT_NO_FAIL`, reports
/// ``DiscoveryEvent/daemonUnavailable(reason:)`` and reconnects on its own when the daemon (or the
/// system D-Bus) comes back, re-registering the service and restarting browsing.
///
/// `@unchecked Sendable`: the only mutable state lives in the `AvahiEngine`, which is touched only
/// with the threaded poll's mutex held (by these methods, or by Avahi's thread while it runs
/// callbacks); `poll` and `sink` are set once; `lifecycle` is a `Mutex` serializing `stop()`.
package final class ServiceDiscovery: @unchecked Sendable {
    private let poll: OpaquePointer
    private let engine: AvahiEngine
    private let sink: EventSink
    private let lifecycle = Mutex(false)  // true once stopped

    /// Creates the discovery and starts connecting to avahi-daemon in the background.
    ///
    /// Call from any thread. Nothing is published or browsed until ``publish(name:port:txt:)`` or
    /// ``startBrowsing()``. Events (starting with `daemonAvailable` or `daemonUnavailable`) are
    /// delivered to `onEvent` on a private serial queue.
    ///
    /// - Parameters:
    ///   - serviceType: the DNS-SD service type, such as "_tutti._udp".
    ///   - onEvent: receives every ``DiscoveryEvent``, serially, on a private queue.
    /// - Throws: ``DiscoveryError`` if the service type is invalid or Avahi's event loop cannot be
    ///   created. An absent daemon is not an error.
    package init(
        serviceType: String = "_tutti._udp",
        onEvent: @escaping @Sendable (DiscoveryEvent) -> Void
    ) throws(DiscoveryError) {
        guard avahi_is_valid_service_type_strict(serviceType) != 0 else {
            throw DiscoveryError("invalid DNS-SD service type \"\(serviceType)\" (expected e.g. \"_tutti._udp\")")
        }
        guard let poll = avahi_threaded_poll_new() else {
            throw DiscoveryError("could not create Avahi's threaded event loop (avahi_threaded_poll_new failed)")
        }
        guard let pollAPI = avahi_threaded_poll_get(poll) else {
            avahi_threaded_poll_free(poll)
            throw DiscoveryError("could not get the poll API of Avahi's threaded event loop")
        }
        let sink = EventSink(handler: onEvent)
        let engine = AvahiEngine(pollAPI: pollAPI, serviceType: serviceType, sink: sink)
        // The loop thread is not running yet: callbacks fired while the client is created run
        // here, on this thread, which is fine since nothing else can touch the engine yet.
        guard engine.start() else {
            engine.teardown()
            avahi_threaded_poll_free(poll)
            throw DiscoveryError("could not create Avahi timers")
        }
        let started = avahi_threaded_poll_start(poll)
        guard started >= 0 else {
            sink.close()
            engine.teardown()
            avahi_threaded_poll_free(poll)
            throw DiscoveryError("could not start Avahi's event-loop thread (avahi_threaded_poll_start failed)")
        }
        self.poll = poll
        self.engine = engine
        self.sink = sink
    }

    deinit {
        stop()
        avahi_threaded_poll_free(poll)
    }

    /// Publishes our service, or updates it.
    ///
    /// Call from any thread (also from `onEvent`). Returns at once; `published(name:)` follows
    /// when the daemon has established the service (about 1 s of mDNS probing), or `renamed` if
    /// the name is taken. If only `txt` changed, the TXT record is updated in place
    /// (`avahi_entry_group_update_service_txt_strlst`) without withdrawing the service; a new
    /// name or port re-registers it. While the daemon is unavailable the request is kept and
    /// applied when it comes back. Does nothing after ``stop()``.
    ///
    /// Names are made publishable rather than rejected: an empty name becomes "Tutti" and one
    /// longer than 63 UTF-8 bytes is cut. TXT entries with an empty key, a key containing "=" or
    /// longer than 255 bytes as "key=value" are left out.
    package func publish(name: String, port: UInt16, txt: [String: String]) {
        withEngine { $0.publish(name: name, port: port, txt: txt) }
    }

    /// Browses for every instance of the service type on all interfaces, over IPv4 and IPv6 mDNS,
    /// resolving each one (host, addresses, port, TXT) and keeping the resolvers running so
    /// changes are reported. Idempotent.
    ///
    /// Call from any thread (also from `onEvent`). Results arrive as `serviceFound` and
    /// `serviceRemoved` on the event queue. Our own service is reported like any other.
    package func startBrowsing() {
        withEngine { $0.startBrowsing() }
    }

    /// The name our service is registered under right now: the requested name or the alternative
    /// picked after a collision. nil before the first `published` event, while re-registering
    /// (after a rename or while the daemon is away) and after ``stop()``.
    ///
    /// Read from any thread (also from `onEvent`).
    package var currentName: String? {
        withEngine { $0.currentName }
    }

    /// Withdraws our service (the daemon sends mDNS goodbye packets at once, so other peers drop
    /// it within about a second), stops browsing, stops Avahi's thread and frees every Avahi
    /// object. Idempotent; also called by `deinit`.
    ///
    /// Call from any thread (also from `onEvent`). No event is delivered once `stop()` has
    /// returned; when called from another thread it waits for an `onEvent` call in progress.
    package func stop() {
        sink.close()
        lifecycle.withLock { stopped in
            guard !stopped else { return }
            stopped = true
            // Stop the loop first (joins Avahi's thread), so no callback runs while objects are freed.
            avahi_threaded_poll_stop(poll)
            avahi_threaded_poll_lock(poll)
            engine.teardown()
            avahi_threaded_poll_unlock(poll)
        }
        sink.drain()
    }

    private func withEngine<Result>(_ body: (AvahiEngine) -> Result) -> Result {
        avahi_threaded_poll_lock(poll)
        defer { avahi_threaded_poll_unlock(poll) }
        return body(engine)
    }
}
