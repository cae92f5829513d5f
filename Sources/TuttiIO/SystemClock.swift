#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import TuttiCore

/// `CLOCK_MONOTONIC`: the host clock every peer on a machine shares (and every lab host, since network
/// namespaces share it). Realtime-safe: yes (vDSO, no syscall on Linux). Thread-safe: yes.
public struct MonotonicClock: MediaClock {
    public init() {}

    @inline(__always)
    public func now() -> HostTime {
        var spec = timespec()
        system_clock_gettime(CLOCK_MONOTONIC, &spec)
        return HostTime(nanoseconds: Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec))
    }
}

/// `CLOCK_REALTIME` in nanoseconds: the capture clock of `CaptureClock.realtime` streams.
/// Realtime-safe: yes. Thread-safe: yes.
public enum WallClock {
    @inline(__always)
    public static func nanoseconds() -> Int64 {
        var spec = timespec()
        system_clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
    }

    /// A wall-clock read bracketed by two `CLOCK_MONOTONIC` reads (nanoseconds): the wall clock's time at the
    /// monotonic midpoint, known to within half the bracket (tens of nanoseconds with the vDSO, unless the
    /// thread was preempted between the reads).
    @inline(__always)
    public static func bracketed() -> (before: Int64, wall: Int64, after: Int64) {
        let monotonic = MonotonicClock()
        let before = monotonic.now().nanoseconds
        let wall = nanoseconds()
        return (before, wall, monotonic.now().nanoseconds)
    }
}
