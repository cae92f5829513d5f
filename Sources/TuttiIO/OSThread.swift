#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A joinable POSIX thread, for the data plane (device clocks, network receivers, file writers), which
/// must not run on Swift's cooperative pool. Control plane creates and joins; `body` runs on the new thread.
/// Audio threads (`realtime: true`) run at `SCHED_FIFO` when `RealtimeScheduling` is enabled.
package final class OSThread: @unchecked Sendable {
    private var handle: pthread_t
    private var joined = false

    private final class Start {
        let name: String
        let realtime: Bool
        let body: @Sendable () -> Void
        init(name: String, realtime: Bool, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.realtime = realtime
            self.body = body
        }
    }

    /// Starts `body` on a new thread; `name` (its first 15 bytes) names it for `top -H`, `perf` and
    /// `/proc/PID/task/*/comm`. `realtime`: an audio thread
    /// (a device clock or a network receiver), scheduled as `RealtimeScheduling` says.
    package init(name: String, realtime: Bool = false, body: @escaping @Sendable () -> Void) {
        let start = Unmanaged.passRetained(Start(name: name, realtime: realtime, body: body)).toOpaque()
        var thread = pthread_t()
        let status = system_pthread_create(
            &thread, nil,
            { argument in
                let start = Unmanaged<Start>.fromOpaque(argument!).takeRetainedValue()
                // The kernel keeps 15 bytes of a thread's name (and refuses a longer one).
                system_pthread_setname_self(String(decoding: start.name.utf8.prefix(15), as: UTF8.self))
                if start.realtime { RealtimeScheduling.applyToCurrentThread() }
                start.body()
                return nil
            }, start)
        precondition(status == 0, "pthread_create failed: \(status)")
        handle = thread
    }

    /// Waits for the thread to finish. Idempotent. Must not be called from the thread itself.
    package func join() {
        guard !joined else { return }
        joined = true
        system_pthread_join(handle, nil)
    }
}
