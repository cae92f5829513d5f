import TuttiCore

/// Maps JACK's microsecond clock (`jack_get_time`, the `usecs` of `jack_get_cycle_times`) to host time,
/// the `CLOCK_MONOTONIC` nanoseconds every other Tutti device clock and the network threads use.
///
/// JACK's clock is not always that clock: jack2's documented "system" clock source is `CLOCK_MONOTONIC`,
/// but jackd2 1.9.21 (Debian 12) reads `CLOCK_MONOTONIC_RAW` (measured: JACK − `CLOCK_MONOTONIC_RAW` =
/// 1 µs, JACK − `CLOCK_MONOTONIC` = −250 ms on a machine up for days), and `jackd -c hpet|cycle` counts
/// from another epoch. So the offset is measured (`measure`: one JACK read bracketed by two host reads)
/// and, because NTP slews `CLOCK_MONOTONIC` against the raw clock by up to 500 ppm, re-measured a few
/// times a second and followed smoothly (`refined`).
///
/// Pure value: no clock reads. Realtime-safe: yes. Thread-safe: yes.
public struct JACKClockMapping: Hashable, Sendable {
    /// Host-time nanoseconds minus JACK nanoseconds.
    public var offsetNanoseconds: Int64

    /// Offsets smaller than this come from reading one clock twice (truncation to µs, the reads' spacing).
    public static let sameClockToleranceNanoseconds: Int64 = 1_000_000
    /// A measurement this far from the current mapping replaces it (a clock step) instead of being followed.
    public static let stepThresholdNanoseconds: Int64 = 5_000_000

    /// A mapping that adds `offsetNanoseconds` to JACK time.
    @inlinable public init(offsetNanoseconds: Int64 = 0) { self.offsetNanoseconds = offsetNanoseconds }

    /// The mapping implied by reading JACK's clock (`jackMicroseconds`) between two host-clock reads: the
    /// middle of the host reads, less JACK's reading (truncated to µs, so up to 1 µs early).
    public static func measure(jackMicroseconds: UInt64, hostBefore: HostTime, hostAfter: HostTime) -> JACKClockMapping {
        let middle = hostBefore.nanoseconds + (hostAfter.nanoseconds - hostBefore.nanoseconds) / 2
        return JACKClockMapping(offsetNanoseconds: middle &- Int64(truncatingIfNeeded: jackMicroseconds) &* 1000)
    }

    /// This mapping moved a quarter of the way towards `measurement` (a first-order low-pass: the reads'
    /// microsecond noise is averaged down; measured 4 times a second, a 500 ppm slew is followed with a
    /// steady lag of 375 µs), or replaced by it when they differ by `stepThresholdNanoseconds` or more.
    public func refined(by measurement: JACKClockMapping) -> JACKClockMapping {
        let difference = measurement.offsetNanoseconds &- offsetNanoseconds
        if abs(difference) >= Self.stepThresholdNanoseconds { return measurement }
        return JACKClockMapping(offsetNanoseconds: offsetNanoseconds + difference / 4)
    }

    /// Whether JACK's clock is the host clock (`CLOCK_MONOTONIC`), as far as the measurement can tell.
    public var isHostClock: Bool { abs(offsetNanoseconds) < Self.sameClockToleranceNanoseconds }

    /// `microseconds` on JACK's clock as host time. Realtime-safe: yes.
    @inlinable
    public func hostTime(ofJACKMicroseconds microseconds: UInt64) -> HostTime {
        HostTime(nanoseconds: Int64(truncatingIfNeeded: microseconds) &* 1000 &+ offsetNanoseconds)
    }
}
