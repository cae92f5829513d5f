import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Hands events from Avahi's thread to the user's handler on a private serial queue.
///
/// `emit` may be called from any thread (in practice Avahi's, with the poll lock held) and never
/// blocks. The handler runs on the queue, in emission order, with no lock held, so it may call
/// back into ``ServiceDiscovery``. After `close()` no further event is delivered; `drain()` waits
/// until a delivery in progress on another thread has finished.
final class EventSink: Sendable {
    private struct State {
        var closed = false
        /// The thread running the handler right now, if any (to let `drain` skip waiting on itself).
        var deliveringThread: pthread_t?
    }

    private let queue = DispatchQueue(label: "tutti.discovery.events")
    private let handler: @Sendable (DiscoveryEvent) -> Void
    private let state = Mutex(State())

    init(handler: @escaping @Sendable (DiscoveryEvent) -> Void) {
        self.handler = handler
    }

    /// Queues `event`; any thread, never blocks.
    func emit(_ event: DiscoveryEvent) {
        queue.async { self.deliver(event) }
    }

    private func deliver(_ event: DiscoveryEvent) {
        let open = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            state.deliveringThread = pthread_self()
            return true
        }
        guard open else { return }
        handler(event)
        state.withLock { $0.deliveringThread = nil }
    }

    /// Stops delivery: events queued or emitted later are dropped. Any thread.
    func close() {
        state.withLock { $0.closed = true }
    }

    /// Waits until no handler call is running, unless called from inside the handler itself
    /// (waiting there would deadlock). Any thread.
    func drain() {
        let insideHandler = state.withLock { state -> Bool in
            guard let thread = state.deliveringThread else { return false }
            return pthread_equal(thread, pthread_self()) != 0
        }
        if !insideHandler {
            queue.sync {}
        }
    }
}
