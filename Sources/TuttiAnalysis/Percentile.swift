// The one percentile definition of the project's measurements (the lab benchmark's latency and buffer
// series, impulse delays, the tone-damage reference level): nearest rank.

/// Nearest-rank percentiles: the smallest value with at least `p` % of the values at or below it.
///
/// Thread-safe: pure functions, any thread.
public enum Percentile {
    /// The nearest-rank `p`-th percentile (`p` in 0...100; 0 gives the minimum) of `values`, or `nil` when
    /// there are none. `p` outside 0...100 is clamped.
    public static func nearestRank(_ p: Double, of values: [Double]) -> Double? {
        nearestRank(p, ofSorted: values.sorted())
    }

    /// The same on values already sorted in ascending order (several percentiles of one series sort once).
    public static func nearestRank(_ p: Double, ofSorted sorted: [Double]) -> Double? {
        guard !sorted.isEmpty else { return nil }
        let rank = max(1, Int((min(max(p, 0), 100) / 100 * Double(sorted.count)).rounded(.up)))
        return sorted[min(rank, sorted.count) - 1]
    }
}
