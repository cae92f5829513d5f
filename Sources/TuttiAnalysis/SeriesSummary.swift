// The summary of a measured series the lab benchmark reports: count, extremes, mean and tail percentiles.

/// Count, minimum, median, 95th and 99th percentile (nearest rank, `Percentile`), maximum and mean of a
/// series. An empty series has `n` 0 and every other figure `nil` (encoded as `null`).
///
/// Thread-safe: a value.
public struct SeriesSummary: Hashable, Sendable, Codable {
    public var n: Int
    public var min: Double?
    public var median: Double?
    public var p95: Double?
    public var p99: Double?
    public var max: Double?
    public var mean: Double?

    /// The summary of `values` (in any order).
    public init(_ values: [Double]) {
        let sorted = values.sorted()
        n = sorted.count
        min = sorted.first
        median = Percentile.nearestRank(50, ofSorted: sorted)
        p95 = Percentile.nearestRank(95, ofSorted: sorted)
        p99 = Percentile.nearestRank(99, ofSorted: sorted)
        max = sorted.last
        mean = sorted.isEmpty ? nil : sorted.reduce(0, +) / Double(sorted.count)
    }

    private enum CodingKeys: String, CodingKey { case n, min, median, p95, p99, max, mean }

    /// Encodes every key, a missing figure as `null`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(n, forKey: .n)
        try container.encode(min, forKey: .min)
        try container.encode(median, forKey: .median)
        try container.encode(p95, forKey: .p95)
        try container.encode(p99, forKey: .p99)
        try container.encode(max, forKey: .max)
        try container.encode(mean, forKey: .mean)
    }
}
