#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization
import TuttiCore

/// A device clock for ports without a sound card (tone, files, pipes), like JACK's dummy backend: a thread
/// that wakes at absolute deadlines, one period of `periodFrames` frames at `sampleRate` apart, and calls
/// `process` once per period. Deadlines are computed from the start time in exact integer arithmetic, so
/// the clock does not drift; nothing runs faster than real time.
///
/// If the thread wakes more than `maxLatePeriods` late (a stalled machine), it skips the missed periods
/// instead of bursting them and counts an overrun, as a sound card would drop them.
///
/// `start`/`stop` from the control plane; `process` runs on the clock's own thread.
public final class PacedDeviceClock: @unchecked Sendable {
    public let sampleRate: Int
    public let periodFrames: Int
    public let maxLatePeriods = 4
    private let name: String
    private let process: @Sendable (_ periodTime: HostTime, _ frames: Int) -> Void
    private let running = Atomic<Bool>(false)
    private let overrunCount = Atomic<UInt64>(0)
    private var thread: OSThread?

    /// - Parameter process: called on the clock thread once per period with the period's nominal start time.
    public init(
        name: String, sampleRate: Int, periodFrames: Int,
        process: @escaping @Sendable (_ periodTime: HostTime, _ frames: Int) -> Void
    ) {
        precondition(sampleRate > 0 && periodFrames > 0)
        self.name = name
        self.sampleRate = sampleRate
        self.periodFrames = periodFrames
        self.process = process
    }

    /// Periods skipped because the thread woke too late.
    public var overruns: UInt64 { overrunCount.load(ordering: .relaxed) }

    /// Starts ticking. Control plane; idempotent.
    public func start() {
        guard running.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else { return }
        let clock = MonotonicClock()
        thread = OSThread(name: name) { [self] in
            let startTime = clock.now().nanoseconds
            var period: Int64 = 0
            let framesPerPeriod = Int64(periodFrames)
            let rate = Int64(sampleRate)
            while running.load(ordering: .relaxed) {
                let deadline = startTime + period * framesPerPeriod * 1_000_000_000 / rate
                var spec = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
                while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &spec, nil) == EINTR {}
                process(HostTime(nanoseconds: deadline), periodFrames)
                period += 1
                let now = clock.now().nanoseconds
                let behind = (now - deadline) * rate / (framesPerPeriod * 1_000_000_000)
                if behind > Int64(maxLatePeriods) {
                    period += behind - 1
                    overrunCount.add(UInt64(behind - 1), ordering: .relaxed)
                }
            }
        }
    }

    /// Stops ticking and waits for the current period to finish. Control plane; idempotent.
    public func stop() {
        running.store(false, ordering: .relaxed)
        thread?.join()
        thread = nil
    }

    deinit { stop() }
}
