#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// The first write error of a receiver port's sink (a closed pipe, a full disk, a failing device): recorded
/// by the sink's writer thread, turned into the connections' `failed` state and their reason by the control
/// plane, and logged once.
///
/// Fields: `code` is written once by the writer thread (release) and read by any thread (acquire);
/// `reported` is claimed by the control plane. Lock-free; nothing allocates until `reason` is read.
public final class SinkFailure: Sendable {
    /// What the sink writes to.
    public enum Target: Hashable, Sendable {
        case standardOutput
        case file(path: String)
    }

    public let target: Target
    private let code = Atomic<Int32>(0)
    private let reported = Atomic<Bool>(false)

    public init(target: Target) { self.target = target }

    /// Writer thread: records a write error's errno; only the first counts. Realtime-safe: yes.
    public func record(errno: Int32) {
        _ = code.compareExchange(expected: 0, desired: errno == 0 ? EIO : errno, ordering: .releasing)
    }

    /// Whether a write has failed. Any thread.
    public var hasFailed: Bool { code.load(ordering: .acquiring) != 0 }

    /// Why the sink failed, for `tutti ls`/`stats` and the log (nil while it works). Control plane.
    public var reason: String? {
        let errno = code.load(ordering: .acquiring)
        return errno == 0 ? nil : Self.reason(writing: target, errno: errno)
    }

    /// The reason, the first time it is asked for after the failure; nil before the failure and after the
    /// first answer, so the failure is logged once. Control plane.
    public func claimReport() -> String? {
        guard let reason else { return nil }
        return reported.exchange(true, ordering: .acquiringAndReleasing) ? nil : reason
    }

    /// What failed and what it means for the audio, in one line: e.g. "cannot write foh.wav: No space left
    /// on device; recording stopped". Pure.
    public static func reason(writing target: Target, errno: Int32) -> String {
        let cause = String(cString: strerror(errno))
        switch (target, errno) {
        case (.standardOutput, EPIPE):
            return "standard output is closed (the program reading it has exited: \(cause)); nothing is played"
        case (.standardOutput, _):
            return "cannot write to standard output: \(cause); nothing is played"
        case (.file(let path), _):
            return "cannot write \(path): \(cause); recording stopped"
        }
    }
}
