import Synchronization
import TuttiCore

/// `CLOCK_REALTIME` minus `CLOCK_MONOTONIC` (nanoseconds): what turns a device period's monotonic time into a
/// capture time on the wall clock (`CaptureClock.realtime`), read so that a thread preempted between the two
/// clock reads does not shift it.
///
/// Read naively (the wall clock, then the monotonic one) the offset comes out short by however long the thread
/// was away between the reads: on a loaded machine a period's capture time then lands frames early, and a
/// receiver playing a stream in sync, which places its play head from capture times, jumps. Here each reading
/// brackets the wall clock between two monotonic reads; a reading whose bracket is wider than
/// `widestBracketNanoseconds` is refused and the last good offset stands in (the wall clock drifts from the
/// monotonic one by no more than NTP's 500 ppm slew, half a microsecond a millisecond). Unlike
/// `RealtimeClockOffset` (one thread's, re-sampled every 100 ms) it is read afresh on every call, by any thread.
///
/// Realtime-safe: `current()` (three vDSO clock reads and a relaxed atomic), `offset(before:wall:after:)`.
/// Thread-safe: yes; every device thread of a peer may share one.
public final class WallClockOffset: Sendable {
    /// The widest bracket (ns) a reading may have to be taken: its error is at most half of it, a tenth of a
    /// frame at 48 kHz. An unhurried reading's bracket is some 100 ns.
    public static let widestBracketNanoseconds: Int64 = 4_000

    private let lastGood: Atomic<Int64>
    /// Readings refused for a bracket wider than `widestBracketNanoseconds`.
    private let refused = Atomic<UInt64>(0)

    /// Takes the first offset: the reading with the narrowest bracket of up to 16. Any thread.
    public init() {
        var best = (bracket: Int64.max, offset: Int64(0))
        for _ in 0..<16 {
            let (before, wall, after) = WallClock.bracketed()
            if after - before < best.bracket { best = (after - before, Self.midpointOffset(before: before, wall: wall, after: after)) }
            if best.bracket <= Self.widestBracketNanoseconds / 4 { break }
        }
        lastGood = Atomic(best.offset)
    }

    /// An offset whose first value is `offset`, for tests that feed readings by hand. Any thread.
    public init(startingAt offset: Int64) {
        lastGood = Atomic(offset)
    }

    /// The offset now: a fresh reading if its bracket is narrow enough, else the last good one. Any thread.
    @inline(__always)
    public func current() -> Int64 {
        let (before, wall, after) = WallClock.bracketed()
        return offset(before: before, wall: wall, after: after)
    }

    /// The offset from one reading: `wall` taken between the monotonic times `before` and `after`; the last good
    /// offset when the bracket is wider than `widestBracketNanoseconds` (or runs backwards). Any thread.
    @inline(__always)
    public func offset(before: Int64, wall: Int64, after: Int64) -> Int64 {
        let bracket = after - before
        guard bracket >= 0, bracket <= Self.widestBracketNanoseconds else {
            refused.add(1, ordering: .relaxed)
            return lastGood.load(ordering: .relaxed)
        }
        let offset = Self.midpointOffset(before: before, wall: wall, after: after)
        lastGood.store(offset, ordering: .relaxed)
        return offset
    }

    /// Readings refused so far for a bracket too wide. Any thread.
    public var refusedReadings: UInt64 { refused.load(ordering: .relaxed) }

    @inline(__always)
    private static func midpointOffset(before: Int64, wall: Int64, after: Int64) -> Int64 {
        wall - (before + (after - before) / 2)
    }
}
