#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The offset from `CLOCK_MONOTONIC` to `CLOCK_REALTIME`, for mapping the kernel's receive timestamps
/// (`SO_TIMESTAMPNS` stamps datagrams on `CLOCK_REALTIME`) onto the monotonic host clock.
///
/// A sample reads monotonic, realtime, monotonic a few times and keeps the pair with the smallest gap
/// (the realtime read is then known to within half that gap, tens of nanoseconds with the vDSO), as
/// `HostTimeFilter`-style clock mappings do. `refreshIfDue(monotonicNow:)` re-samples once `refreshInterval`
/// has passed, so a step or slew of the wall clock (NTP) reaches the mapping within that interval; between
/// samples a mapping costs one subtraction.
///
/// Realtime-safe: yes (`clock_gettime` through the vDSO, no system call, no allocation). Thread-safe: no
/// (a value owned by one thread, e.g. inside a `UDPReceiveBatch`; `WallClockOffset` is the form device threads
/// share, read afresh each period).
package struct RealtimeClockOffset: Sendable {
    /// `CLOCK_REALTIME − CLOCK_MONOTONIC` in nanoseconds at the last sample.
    package private(set) var realtimeMinusMonotonic: Int64
    /// The monotonic time of the last sample, in nanoseconds.
    package private(set) var sampledAt: Int64
    /// How often `refreshIfDue` re-samples, in nanoseconds.
    package let refreshInterval: Int64
    /// Clock-read triples per sample; the one with the smallest monotonic gap wins.
    static let triesPerSample = 4

    /// Samples the offset now. `refreshInterval`: how long a sample is trusted (default 100 ms).
    package init(refreshInterval: Duration = .milliseconds(100)) {
        self.refreshInterval = refreshInterval.nanosecondsClamped
        (realtimeMinusMonotonic, sampledAt) = Self.sample()
    }

    /// Re-samples when `refreshInterval` has passed since the last sample (or the monotonic clock seems to
    /// have gone back). `monotonicNow`: a `CLOCK_MONOTONIC` read the caller already has.
    @inline(__always)
    package mutating func refreshIfDue(monotonicNow: Int64) {
        let age = monotonicNow &- sampledAt
        if age >= refreshInterval || age < 0 { (realtimeMinusMonotonic, sampledAt) = Self.sample() }
    }

    /// The monotonic time (nanoseconds) of a `CLOCK_REALTIME` instant, with the current offset.
    @inline(__always)
    package func monotonic(fromRealtime realtime: Int64) -> Int64 { realtime &- realtimeMinusMonotonic }

    /// One minimum-gap sample: (realtime − monotonic, monotonic time of the sample).
    static func sample() -> (offset: Int64, at: Int64) {
        var best: (gap: Int64, offset: Int64, at: Int64) = (.max, 0, 0)
        for _ in 0..<triesPerSample {
            let (before, wall, after) = WallClock.bracketed()
            let gap = after &- before
            if gap < best.gap {
                let middle = before &+ gap / 2
                best = (gap, wall &- middle, middle)
            }
        }
        return (best.offset, best.at)
    }

    @inline(__always)
    static func nanoseconds(_ spec: timespec) -> Int64 { Int64(spec.tv_sec) &* 1_000_000_000 &+ Int64(spec.tv_nsec) }
}
