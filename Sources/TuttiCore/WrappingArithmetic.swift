// Wrap-aware comparisons, written once: RTP sequence numbers are 16-bit and RTP timestamps 32-bit
// counters that wrap; every comparison goes through these.

extension UInt16 {
    /// Signed distance from `self` to `other` on the 16-bit circle: positive when `other` is after `self`.
    /// Realtime-safe: yes.
    @inlinable public func wrappingDistance(to other: UInt16) -> Int {
        Int(Int16(bitPattern: other &- self))
    }
}

extension UInt32 {
    /// Signed distance from `self` to `other` on the 32-bit circle: positive when `other` is after `self`.
    /// Realtime-safe: yes.
    @inlinable public func wrappingDistance(to other: UInt32) -> Int64 {
        Int64(Int32(bitPattern: other &- self))
    }
}

/// Extends a wrapping 16- or 32-bit counter to a monotonic 64-bit one by tracking the last value seen.
///
/// Each new value is placed at the extended position nearest the previous one, so it follows the counter
/// across any number of wraps as long as consecutive values are less than half the range apart.
/// Realtime-safe: yes.
public struct CounterExtender<Counter: FixedWidthInteger & UnsignedInteger>: Sendable {
    @usableFromInline var last: Int64
    @usableFromInline var started = false

    @inlinable public init() { last = 0 }

    /// Extends `value`, remembering it as the reference for the next call when it is newer.
    @inlinable public mutating func extend(_ value: Counter) -> Int64 {
        guard started else {
            started = true
            last = Int64(value)
            return last
        }
        let extended = peek(value)
        if extended > last { last = extended }
        return extended
    }

    /// Extends `value` without changing the reference.
    @inlinable public func peek(_ value: Counter) -> Int64 {
        guard started else { return Int64(value) }
        let modulus = Int64(1) << Counter.bitWidth
        let half = modulus / 2
        let lastLow = last & (modulus - 1)
        var delta = Int64(value) - lastLow
        if delta >= half { delta -= modulus } else if delta < -half { delta += modulus }
        return last + delta
    }
}
