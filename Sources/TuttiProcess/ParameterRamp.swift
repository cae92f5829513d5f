/// A parameter value that glides to its target over a fixed number of frames, so that a change never clicks.
/// Linear in the value given (dB for gains: a gain glides in dB, as ears hear it). Realtime-safe: yes (no
/// allocation, no lock). Thread-safe: no (the engine thread that processes owns it).
public struct ParameterRamp: Sendable {
    public private(set) var current: Double
    public private(set) var target: Double
    private var step: Double = 0
    private var remaining = 0
    /// Frames a change takes.
    public let rampFrames: Int

    public init(value: Double, rampFrames: Int) {
        current = value
        target = value
        self.rampFrames = max(1, rampFrames)
    }

    /// Starts gliding to `value` from where it is now.
    public mutating func glide(to value: Double) {
        guard value != target else { return }
        target = value
        remaining = rampFrames
        step = (target - current) / Double(rampFrames)
    }

    /// Whether a glide is under way.
    public var isGliding: Bool { remaining > 0 }

    /// The value for the next frame.
    @inline(__always)
    public mutating func next() -> Double {
        guard remaining > 0 else { return current }
        remaining -= 1
        current = remaining == 0 ? target : current + step
        return current
    }
}
