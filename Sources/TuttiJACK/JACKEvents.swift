/// What a JACK client has seen so far: cycles run, xruns, the server's current rate and buffer size and
/// how often they changed, and whether the server shut the client down.
///
/// A value snapshot of counters written by JACK's threads. Thread-safe: yes (a value).
public struct JACKEvents: Hashable, Sendable {
    /// Process cycles run.
    public var cycles: UInt64
    /// Xruns the server reported.
    public var xruns: UInt64
    /// Callbacks that woke more than a period plus 1 ms after their cycle started (an overloaded or
    /// non-realtime server; the cycle's times still come from the timeline, not the wake-up).
    public var lateCycles: UInt64 = 0
    /// Cycles this client did not run (the server went on without it): their frames were caught up, so
    /// the streams kept their latency, but their audio is lost.
    public var missedCycles: UInt64 = 0
    /// Times the server stalled (its cycles started 1.5 ms or more late and stayed so, as the dummy backend
    /// re-anchors after a late wake-up) and the client caught the lost time up, as missed frames.
    public var serverStalls: UInt64 = 0
    /// Times the client's timeline started again or jumped: JACK's frame counter jumped, a stall or a miss
    /// too long to catch up (over 100 ms), cycles starting early.
    public var timelineRebases: UInt64 = 0
    /// The server's sample rate now (Hz).
    public var sampleRate: Int
    /// The server's buffer size now (frames).
    public var bufferSize: Int
    /// Times the sample rate changed after the client opened.
    public var sampleRateChanges: UInt64
    /// Times the buffer size changed after the client opened.
    public var bufferSizeChanges: UInt64
    /// The server's reason, once it has shut the client down (the server stopped or threw the client out);
    /// nil while it runs.
    public var shutdownReason: String?

    public init(
        cycles: UInt64 = 0, xruns: UInt64 = 0, sampleRate: Int = 0, bufferSize: Int = 0, sampleRateChanges: UInt64 = 0,
        bufferSizeChanges: UInt64 = 0, shutdownReason: String? = nil
    ) {
        self.cycles = cycles
        self.xruns = xruns
        self.sampleRate = sampleRate
        self.bufferSize = bufferSize
        self.sampleRateChanges = sampleRateChanges
        self.bufferSizeChanges = bufferSizeChanges
        self.shutdownReason = shutdownReason
    }
}
