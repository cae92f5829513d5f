// Round-trip delays of the lab benchmark's probe (scripts/bench/jack_impulse.c): where each impulse it
// played came back in its recording.

/// The delay of each impulse of a periodic train: an impulse played at frame p is found at the first
/// recorded frame r ≥ p whose |sample| exceeds `threshold`, then moved to the largest sample of the next
/// 16 frames (resampling spreads it), within one interval. The delay is r − p frames. An impulse not found
/// while its whole interval was recorded is counted missing.
///
/// Thread-safe: a value; `init` is a pure function any thread may call.
public struct ImpulseDelays: Hashable, Sendable {
    /// The delay of every impulse found, in frames, in play order.
    public var delayFrames: [Int]
    /// Impulses whose whole interval was recorded but that were not found.
    public var missing: Int

    /// Finds the impulses played every `intervalFrames` from `firstFrame` in `recording` (one channel).
    public init(recording: [Float], firstFrame: Int, intervalFrames: Int, threshold: Float = 0.3) {
        precondition(intervalFrames > 0 && firstFrame >= 0, "impulses are played forward in time")
        delayFrames = []
        missing = 0
        let frames = recording.count
        for played in stride(from: firstFrame, to: frames, by: intervalFrames) {
            let end = min(frames, played + intervalFrames)
            guard let first = (played..<end).first(where: { abs(recording[$0]) > threshold }) else {
                if played + intervalFrames <= frames { missing += 1 }
                continue
            }
            let window = first..<min(end, first + 16)
            let found = window.max { abs(recording[$0]) < abs(recording[$1]) } ?? first
            delayFrames.append(found - played)
        }
    }
}
