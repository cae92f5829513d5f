/// Clicks on the shared clock: a one-frame impulse of `amplitude`, the same on every channel, on the frame
/// captured nearest to every multiple of `intervalNanoseconds` of capture time (the Link session's ghost time
/// when the peer runs the beat clock, else the wall clock). Senders on different hosts of one session click at
/// the same instants, so the tracks a separate-mode receiver records of them must line up to the frame.
///
/// Each multiple clicks once, also when consecutive periods' capture times overlap; one whose nearest frame fell
/// in a gap between periods (a pause, a step of the clock) is skipped, never played late. No click while the
/// capture time is unknown (`Int64.min`).
/// Realtime-safe: yes. Thread-safe: no (one owner).
public struct ClickGenerator: Sendable {
    public let intervalNanoseconds: Int64
    public let amplitude: Float
    public let sampleRate: Int
    /// The multiple of the interval clicked last (`Int64.min`: none yet).
    private var lastClick = Int64.min

    public init(intervalNanoseconds: Int64, amplitude: Float, sampleRate: Int) {
        precondition(intervalNanoseconds > 0 && sampleRate > 0)
        self.intervalNanoseconds = intervalNanoseconds
        self.amplitude = amplitude
        self.sampleRate = sampleRate
    }

    /// Writes `frames` frames of `channels` interleaved samples whose first frame was captured at `captureTime`
    /// (ns): silence with the clicks that fall in them.
    public mutating func render(into output: UnsafeMutableBufferPointer<Float>, frames: Int, channels: Int, captureTime: Int64) {
        precondition(output.count >= frames * channels)
        for index in 0..<(frames * channels) { output[index] = 0 }
        guard captureTime != .min else { return }
        let interval = intervalNanoseconds
        // The multiple just before the period may be nearest to its first frame.
        let firstDue = Self.floorDivide(captureTime - 1, interval)
        var multiple = lastClick == .min ? firstDue : max(lastClick + 1, firstDue)
        while true {
            let ahead = (multiple * interval - captureTime) * Int64(sampleRate)
            let frame = Int(Self.floorDivide(2 * ahead + 1_000_000_000, 2_000_000_000))  // the nearest frame
            guard frame < frames else { return }
            // A click nearest to a frame before this period (its instant fell in a gap between periods) is not
            // played late.
            if frame >= 0 {
                for channel in 0..<channels { output[frame * channels + channel] = amplitude }
                lastClick = multiple
            }
            multiple += 1
        }
    }

    @inline(__always)
    static func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
        let quotient = value / divisor
        return value % divisor < 0 ? quotient - 1 : quotient
    }

}
