import Synchronization
import TuttiCore

/// A `MediaClock` that only moves when the test moves it, so timing-dependent code runs deterministically.
///
/// Thread-safe (the time is an atomic), but tests normally drive it from one thread.
public final class ManualClock: MediaClock {
    private let nanoseconds: Atomic<Int64>

    /// Creates a clock reading `start`.
    public init(start: HostTime = HostTime(nanoseconds: 0)) {
        nanoseconds = Atomic(start.nanoseconds)
    }

    /// The time the test last set.
    public func now() -> HostTime { HostTime(nanoseconds: nanoseconds.load(ordering: .relaxed)) }

    /// Moves the clock forward (or backward, for a negative duration) by `duration`.
    public func advance(by duration: Duration) {
        nanoseconds.add(duration.nanosecondsClamped, ordering: .relaxed)
    }

    /// Sets the clock to `time`.
    public func set(to time: HostTime) {
        nanoseconds.store(time.nanoseconds, ordering: .relaxed)
    }

    /// Sets the clock to the instant `frames` frames after its epoch at `sampleRate` (rounded down to the
    /// nanosecond), so tests can count time in frames without accumulating rounding.
    public func set(frames: Int64, sampleRate: Int) {
        set(to: HostTime(frames: frames, sampleRate: sampleRate))
    }
}

extension HostTime {
    /// The instant `frames` frames after the epoch at `sampleRate`, rounded down to the nanosecond.
    public init(frames: Int64, sampleRate: Int) {
        self.init(nanoseconds: frames * 1_000_000_000 / Int64(sampleRate))
    }
}
