#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import TuttiIO

/// The write end of the self-pipe the signal handler writes to (set once, before the handler is installed).
nonisolated(unsafe) private var signalPipeWrite: Int32 = -1

/// SIGINT and SIGTERM, handled reliably whichever thread the kernel delivers them to: an async-signal-safe
/// handler writes the signal number to a pipe, and one thread reads it. Until a command sets `handler`, a
/// signal ends the process as the default action would (exit status 128 + signal); `tutti peer` sets it to
/// stop cleanly (tear connections down, withdraw the service, finalise files).
enum SignalHandling {
    private static let handlerBox = Mutex<(@Sendable (Int32) -> Void)?>(nil)

    /// Call first thing in `main`.
    static func install() {
        var fds: [Int32] = [0, 0]
        guard system_pipe(&fds) == 0 else { return }
        signalPipeWrite = fds[1]
        let readEnd = fds[0]
        for number in [SIGINT, SIGTERM] {
            system_signal(number) { received in
                var byte = UInt8(truncatingIfNeeded: received)
                _ = system_write(signalPipeWrite, &byte, 1)
            }
        }
        _ = OSThread(name: "tutti-signals") {
            var byte: UInt8 = 0
            while system_read(readEnd, &byte, 1) == 1 {
                let number = Int32(byte)
                if let handler = handlerBox.withLock({ $0 }) {
                    handler(number)
                } else {
                    exit(128 + number)
                }
            }
        }
    }

    /// What to do on SIGINT/SIGTERM from now on (runs on the signal thread).
    static func setHandler(_ handler: @escaping @Sendable (Int32) -> Void) {
        handlerBox.withLock { $0 = handler }
    }
}
