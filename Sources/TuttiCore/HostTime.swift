/// A point on a monotonic clock, in integer nanoseconds.
///
/// Host times come from an injected clock (`CLOCK_MONOTONIC` at the edge, a manual clock in tests), so
/// pure code never reads the system clock. Realtime-safe: yes. Thread-safe: yes (a value).
public struct HostTime: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Nanoseconds since the clock's (arbitrary) epoch.
    public var nanoseconds: Int64

    @inlinable public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

    @inlinable public static func < (lhs: HostTime, rhs: HostTime) -> Bool { lhs.nanoseconds < rhs.nanoseconds }
    @inlinable public static func + (lhs: HostTime, rhs: Duration) -> HostTime {
        HostTime(nanoseconds: lhs.nanoseconds &+ rhs.nanosecondsClamped)
    }
    @inlinable public static func - (lhs: HostTime, rhs: HostTime) -> Duration {
        .nanoseconds(lhs.nanoseconds &- rhs.nanoseconds)
    }

    public var description: String { "\(nanoseconds)ns" }
}

extension Duration {
    /// This duration as whole nanoseconds, clamped to `Int64`. Realtime-safe: yes.
    @inlinable public var nanosecondsClamped: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        return scaled &+ attoseconds / 1_000_000_000
    }

    /// This duration in seconds as a `Double`. Realtime-safe: yes.
    @inlinable public var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) * 1e-18
    }
}
