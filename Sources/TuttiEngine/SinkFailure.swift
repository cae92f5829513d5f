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
    private let dropped = Atomic<Int>(0)
    /// The sink's rate, to say how much audio was not written (0: unknown).
    public let sampleRate: Int

    public init(target: Target, sampleRate: Int = 0) {
        self.target = target
        self.sampleRate = sampleRate
    }

    /// Writer thread: frames that reached the sink after its failure and were dropped. Realtime-safe: yes.
    public func noteDropped(frames: Int) { dropped.add(frames, ordering: .relaxed) }

    /// Frames dropped since the failure. Any thread.
    public var droppedFrames: Int { dropped.load(ordering: .relaxed) }

    /// Writer thread: records a write error's errno; only the first counts. Realtime-safe: yes.
    public func record(errno: Int32) {
        _ = code.compareExchange(expected: 0, desired: errno == 0 ? EIO : errno, ordering: .releasing)
    }

    /// Whether a write has failed. Any thread.
    public var hasFailed: Bool { code.load(ordering: .acquiring) != 0 }

    /// Why the sink failed, for `tutti ls`/`stats` and the log (nil while it works). Control plane.
    public var reason: String? {
        let errno = code.load(ordering: .acquiring)
        guard errno != 0 else { return nil }
        let frames = droppedFrames
        let seconds = sampleRate > 0 ? (Double(frames) / Double(sampleRate) * 10).rounded() / 10 : 0
        // A recording says how much of the take is missing; a dead output plays nothing, as its reason says.
        guard seconds > 0, case .file = target else { return Self.reason(writing: target, errno: errno) }
        return Self.reason(writing: target, errno: errno) + " (\(seconds) s not recorded since)"
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
