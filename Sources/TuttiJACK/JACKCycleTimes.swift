import TuttiCore

/// One process cycle's timing, as `jack_get_cycle_times` reports it: the frame counter at the cycle's
/// first frame, and the (DLL-filtered) JACK times of this cycle's and the next cycle's start.
///
/// Pure value. Realtime-safe: yes. Thread-safe: yes.
public struct JACKCycleTimes: Hashable, Sendable {
    /// The JACK frame counter at the cycle's first frame (wraps at 2³²).
    public var currentFrames: UInt32
    /// JACK time (µs) of the cycle's first frame.
    public var currentMicroseconds: UInt64
    /// JACK time (µs) at which the next cycle's first frame is expected.
    public var nextMicroseconds: UInt64
    /// Frames in this cycle (the buffer size).
    public var frames: Int

    @inlinable
    public init(currentFrames: UInt32, currentMicroseconds: UInt64, nextMicroseconds: UInt64, frames: Int) {
        self.currentFrames = currentFrames
        self.currentMicroseconds = currentMicroseconds
        self.nextMicroseconds = nextMicroseconds
        self.frames = frames
    }

    /// The JACK time (µs) of `frame`, interpolated along this cycle's filtered period as
    /// `jack_frames_to_time` does; frames before the cycle, or after it, extrapolate. Frame counters
    /// compare wrap-aware (a frame up to 2³¹ frames away either side).
    @inlinable
    public func microseconds(ofFrame frame: UInt32) -> UInt64 {
        let delta = Int64(Int32(bitPattern: frame &- currentFrames))
        let period = Int64(truncatingIfNeeded: nextMicroseconds &- currentMicroseconds)
        guard frames > 0 else { return currentMicroseconds }
        let offset = delta * period / Int64(frames)
        return UInt64(truncatingIfNeeded: Int64(truncatingIfNeeded: currentMicroseconds) &+ offset)
    }

    /// Host time of the cycle's first frame and of the next cycle's first frame, through `mapping`.
    @inlinable
    public func hostTimes(_ mapping: JACKClockMapping) -> (start: HostTime, end: HostTime) {
        (mapping.hostTime(ofJACKMicroseconds: currentMicroseconds), mapping.hostTime(ofJACKMicroseconds: nextMicroseconds))
    }

    /// Host time of the frame `offset` frames into a cycle running from `start` to `end` (host times)
    /// over `frames` frames: linear along the filtered period, so consecutive chunks of one cycle abut.
    @inlinable
    public static func hostTime(atFrameOffset offset: Int, frames: Int, start: HostTime, end: HostTime) -> HostTime {
        guard frames > 0 else { return start }
        return HostTime(nanoseconds: start.nanoseconds &+ (end.nanoseconds &- start.nanoseconds) &* Int64(offset) / Int64(frames))
    }

    /// Whether the cycle's host times describe the cycle the callback runs in: it woke no earlier than 1 ms
    /// before the cycle's start and no later than two nominal periods plus 2 ms after it, and the filtered
    /// period is within 10 % of the nominal one (`frames` at `sampleRate`).
    ///
    /// With a sound card and a realtime server they always do. A non-realtime server on a loaded machine
    /// (the dummy backend) keeps a nominal timeline its callbacks run up to tens of milliseconds off, early
    /// or late. Its times are still used, not the wake-up: every client of the server shares them, so a
    /// sender's capture times and a receiver's playout times on one server stay consistent with each other,
    /// while wake-ups differ from client to client. Implausible cycles are counted for the log.
    public static func isPlausible(start: HostTime, end: HostTime, wake: HostTime, frames: Int, sampleRate: Int) -> Bool {
        guard frames > 0, sampleRate > 0 else { return true }
        let nominal = Int64(frames) * 1_000_000_000 / Int64(sampleRate)
        let sinceStart = wake.nanoseconds &- start.nanoseconds
        let period = end.nanoseconds &- start.nanoseconds
        return sinceStart >= -1_000_000 && sinceStart <= 2 * nominal + 2_000_000 && abs(period - nominal) <= nominal / 10
    }
}
