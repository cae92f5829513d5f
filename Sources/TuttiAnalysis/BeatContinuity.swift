// The continuity of one peer's beat timeline from its samples (the Link lab tests' re-founding check;
// formerly `scripts/link/lablog.py jumps`).

/// How continuous a peer's own beat timeline is: for each pair of consecutive samples, the beat advance minus
/// the advance the earlier sample's tempo predicts ((t2 − t1) · bpm / 60e9), in microseconds at that tempo.
///
/// Thread-safe: a value.
public struct BeatContinuity: Hashable, Sendable {
    /// Samples measured.
    public var n: Int
    /// The jump of largest magnitude, signed, in microseconds (0 with fewer than two samples).
    public var worstJumpMicroseconds: Double
    /// When the sample after the worst jump was taken (ns), `nil` with fewer than two samples.
    public var worstJumpTime: Int?
    /// The longest time between consecutive samples, nanoseconds.
    public var longestGap: Int
    /// The distinct tempos of the samples, ascending.
    public var tempos: [Double]

    /// The continuity of `samples` (in any order; `phase` holds the beat).
    public init(_ samples: [LinkTimelineSample]) {
        let sorted = samples.sorted { ($0.time, $0.phase, $0.tempo) < ($1.time, $1.phase, $1.tempo) }
        n = sorted.count
        worstJumpMicroseconds = 0
        longestGap = 0
        for (earlier, later) in zip(sorted, sorted.dropFirst()) {
            let expected = Double(later.time - earlier.time) * earlier.tempo / 60e9
            let jump = (later.phase - earlier.phase - expected) * 60e6 / earlier.tempo
            if abs(jump) > abs(worstJumpMicroseconds) {
                worstJumpMicroseconds = jump
                worstJumpTime = later.time
            }
            longestGap = max(longestGap, later.time - earlier.time)
        }
        tempos = Set(sorted.map(\.tempo)).sorted()
    }
}
