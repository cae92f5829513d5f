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
/// A thread that wakes late (a busy or preempted machine) catches up: it runs the missed periods at once,
/// so that the stream's timeline stays on the wall clock (a receiver's play head keeps its latency, a
/// sender's packets keep their spacing in RTP time). Only when it is more than `maxLateFrames` (100 ms)
/// behind, a stalled machine, does it skip the missed periods instead of bursting them, and count them as
/// overruns, as a sound card would drop them.
///
/// A port may move the clock's timeline by a few frames (`moveNextPeriod(byFrames:)`): a paced receiver that
/// plays a single stream moves its reads to just where its packets have waited their slack, and keeps them
/// there as the sender's clock drifts, which a sound card's clock could not do. Deadlines stay exact: the
/// moves are counted in frames.
///
/// The clock also counts its own late wake-ups, those later than half a period after their deadline, and
/// keeps the latest one's lateness: what a late packet or an underrun downstream can be set beside, to tell
/// the machine's scheduling from the stream's own faults.
///
/// `process` is a C function with a context pointer, like a JACK process callback: the period loop makes no
/// reference counting, allocation or existential call of its own.
///
/// `start`/`stop` from the control plane; `process` runs on the clock's own thread.
package final class PacedDeviceClock: @unchecked Sendable {
    /// Called on the clock thread once per period: `context` as given to `init`, the period's nominal start
    /// (`CLOCK_MONOTONIC` nanoseconds) and its length in frames. Must be realtime-safe.
    package typealias Handler = @convention(c) (_ context: UnsafeMutableRawPointer?, _ periodTime: Int64, _ frames: Int) -> Void

    package let sampleRate: Int
    package let periodFrames: Int
    /// How far behind the thread may fall before it skips periods instead of catching up: 100 ms.
    package var maxLateFrames: Int { sampleRate / 10 }
    private let name: String
    private let process: Handler
    private nonisolated(unsafe) let context: UnsafeMutableRawPointer?
    private let running = Atomic<Bool>(false)
    private let overrunCount = Atomic<UInt64>(0)
    private let lateWakeCount = Atomic<UInt64>(0)
    private let worstLateness = Atomic<Int64>(0)
    private let pendingDelayFrames = Atomic<Int>(0)
    private var thread: OSThread?

    /// - Parameters:
    ///   - context: passed to `process`; the caller keeps what it points to alive until `stop` returns.
    ///   - process: called on the clock thread once per period with the period's nominal start time.
    package init(name: String, sampleRate: Int, periodFrames: Int, context: UnsafeMutableRawPointer?, process: Handler) {
        precondition(sampleRate > 0 && periodFrames > 0)
        self.name = name
        self.sampleRate = sampleRate
        self.periodFrames = periodFrames
        self.process = process
        self.context = context
    }

    /// Periods skipped because the thread woke more than `maxLateFrames` late. Any thread.
    package var overruns: UInt64 { overrunCount.load(ordering: .relaxed) }

    /// Wake-ups later than half a period after their deadline since `start`. Any thread.
    package var lateWakes: UInt64 { lateWakeCount.load(ordering: .relaxed) }

    /// The latest wake-up since `start`, in nanoseconds after its deadline. Any thread.
    package var worstWakeLatenessNanoseconds: Int64 { worstLateness.load(ordering: .relaxed) }

    /// Moves every later period `frames` frames later, or earlier when negative (added up when called more than
    /// once before the next period): the next period comes one period and `frames` after this one, and never
    /// less than a frame after it. Any thread; realtime-safe.
    package func moveNextPeriod(byFrames frames: Int) {
        pendingDelayFrames.add(frames, ordering: .relaxed)
    }

    /// Starts ticking. Control plane; idempotent.
    package func start() {
        guard running.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else { return }
        let clock = MonotonicClock()
        thread = OSThread(name: name, realtime: true) { [self] in
            let startTime = clock.now().nanoseconds
            var period: Int64 = 0
            var delayedFrames: Int64 = 0
            let framesPerPeriod = Int64(periodFrames)
            let rate = Int64(sampleRate)
            let lateWake = framesPerPeriod * 1_000_000_000 / rate / 2
            while running.load(ordering: .relaxed) {
                let deadline = startTime + (period * framesPerPeriod + delayedFrames) * 1_000_000_000 / rate
                var spec = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
                while system_clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &spec, nil) == EINTR {}
                let lateness = clock.now().nanoseconds - deadline
                if lateness > lateWake {
                    lateWakeCount.add(1, ordering: .relaxed)
                    if lateness > worstLateness.load(ordering: .relaxed) { worstLateness.store(lateness, ordering: .relaxed) }
                }
                process(context, deadline, periodFrames)
                period += 1
                delayedFrames += max(1 - framesPerPeriod, Int64(pendingDelayFrames.exchange(0, ordering: .relaxed)))
                let now = clock.now().nanoseconds
                let behind = (now - deadline) * rate / (framesPerPeriod * 1_000_000_000)
                if behind * framesPerPeriod > Int64(maxLateFrames) {
                    period += behind - 1
                    overrunCount.add(UInt64(behind - 1), ordering: .relaxed)
                }
            }
        }
    }

    /// Stops ticking and waits for the current period to finish. Control plane; idempotent.
    package func stop() {
        running.store(false, ordering: .relaxed)
        thread?.join()
        thread = nil
    }

    deinit { stop() }
}
