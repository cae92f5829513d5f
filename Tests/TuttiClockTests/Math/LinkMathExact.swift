import TuttiClock

/// Exact integer reference arithmetic for the LinkMath tests: the rational value Link's double formulas
/// approximate, rounded half away from zero, in 128 bits (no intermediate can overflow).
enum LinkMathExact {
    /// `n / d` rounded half away from zero (`d > 0`), and how far the fraction of `n / d` is from one half
    /// (0 = an exact tie, 0.5 = an integer), so a test can tell a genuine double rounding difference at a
    /// tie from precision loss.
    static func roundedQuotient(_ n: Int128, _ d: Int128) -> (value: Int128, distanceFromHalf: Double) {
        precondition(d > 0)
        let a = n < 0 ? -n : n
        let q = (2 * a + d) / (2 * d)
        let r = (2 * a) % (2 * d)  // 2d × fraction
        let distance = abs(Double(r - d)) / Double(2 * d)
        return (n < 0 ? -q : q, distance)
    }

    /// Exact `timeline.beats(at:)`: `B + round((t - T) × 1e6 / m)`.
    static func beats(_ timeline: Timeline, at time: Int64) -> (value: Int128, distanceFromHalf: Double) {
        let (q, distance) = roundedQuotient(
            (Int128(time) - Int128(timeline.timeOrigin)) * 1_000_000, Int128(timeline.tempo.microsecondsPerBeat))
        return (Int128(timeline.beatOrigin.microBeats) + q, distance)
    }

    /// Exact `timeline.time(at:)`: `T + round((b - B) × m / 1e6)`.
    static func time(_ timeline: Timeline, at beats: Beats) -> (value: Int128, distanceFromHalf: Double) {
        let (q, distance) = roundedQuotient(
            (Int128(beats.microBeats) - Int128(timeline.beatOrigin.microBeats))
                * Int128(timeline.tempo.microsecondsPerBeat), 1_000_000)
        return (Int128(timeline.timeOrigin) + q, distance)
    }
}
