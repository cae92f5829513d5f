/// What a stream asks of the device that plays it alone, after a period (`StreamReceiver.render`'s
/// `deviceDelayLimitFrames`), in frames of the device's rate.
public enum DeviceTimingRequest: Hashable, Sendable {
    case none
    /// The stream starts: this period played silence, and the next should come this many frames later than one
    /// period after it, so that the reads come just as the packets have waited their slack
    /// (`LatencyPolicy.phaseDelayFrames`). The device's output gets as many frames of silence.
    case startLater(frames: Int)
    /// The stream plays: the next period should come this many frames later (negative: earlier) than one
    /// period after this one, so that the reads keep their phase against the packets while the two clocks
    /// drift apart (`LatencyPolicy.deviceMove`). The device's output gets nothing added or taken.
    case follow(frames: Int)
}
