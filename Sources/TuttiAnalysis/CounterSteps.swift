// What a cumulative counter printed now and then (JackTrip's `-I` lines) increased by over a window.

/// The increase of a cumulative counter sampled in order: the sum of its steps from sample to sample,
/// where a counter that went down was reset and its new value is the step (JackTrip resets its counters
/// when its buffer restarts).
///
/// Thread-safe: a pure function, any thread.
public enum CounterSteps {
    /// The increase over `samples` (0 for fewer than two).
    public static func increase(_ samples: [Int]) -> Int {
        zip(samples, samples.dropFirst()).reduce(0) { total, pair in total + (pair.1 >= pair.0 ? pair.1 - pair.0 : pair.1) }
    }
}
