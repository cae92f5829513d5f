#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization

/// The process-wide scheduling of Tutti's audio threads (device clocks and network receivers), as JACK and
/// PipeWire schedule theirs: `SCHED_FIFO` at a fixed priority, so that a busy machine (a compile, a browser)
/// does not delay a period or a packet's arrival time. Threads created with `OSThread(…, realtime: true)`
/// apply it when they start; it is off until `enable(priority:)` is called.
///
/// A process without the right (not root, no `rtprio` limit, e.g. not in the `audio` group) keeps its
/// threads at normal priority; `enable` reports that once so the peer can say so.
package enum RealtimeScheduling {
    /// The `SCHED_FIFO` priority audio threads ask for; 0 = normal scheduling.
    private static let priority = Atomic<Int32>(0)

    /// What asking for realtime scheduling gave.
    package enum Outcome: Sendable, Equatable {
        /// Audio threads run at `SCHED_FIFO` with this priority.
        case granted(priority: Int32)
        /// Not permitted (the errno's text): audio threads run at normal priority.
        case refused(reason: String)
    }

    /// The highest `SCHED_FIFO` priority (99 on Linux).
    package static var maximumPriority: Int32 { system_sched_get_priority_max(SCHED_FIFO) }

    /// Turns realtime scheduling on for audio threads started from now on, after checking on a short-lived
    /// thread that the process may use it. Control plane; call once at start-up, before ports start.
    package static func enable(priority requested: Int32) -> Outcome {
        let wanted = max(1, min(maximumPriority, requested))
        let result = Atomic<Int32>(0)
        let probe = OSThread(name: "tutti-rt-probe") { result.store(apply(priority: wanted), ordering: .relaxed) }
        probe.join()
        let error = result.load(ordering: .relaxed)
        guard error == 0 else {
            priority.store(0, ordering: .relaxed)
            return .refused(reason: String(cString: strerror(error)))
        }
        priority.store(wanted, ordering: .relaxed)
        return .granted(priority: wanted)
    }

    /// Normal scheduling for audio threads started from now on. Control plane.
    package static func disable() { priority.store(0, ordering: .relaxed) }

    /// Applies the configured scheduling to the calling thread; nothing when it is off. Called by
    /// `OSThread` on the new thread, before its body.
    static func applyToCurrentThread() {
        let wanted = priority.load(ordering: .relaxed)
        if wanted > 0 { _ = apply(priority: wanted) }
    }

    /// `SCHED_FIFO` at `priority` for the calling thread; 0 or the errno.
    private static func apply(priority: Int32) -> Int32 {
        var parameters = sched_param()
        parameters.sched_priority = priority
        return system_pthread_setschedparam(pthread_self(), SCHED_FIFO, &parameters)
    }
}
