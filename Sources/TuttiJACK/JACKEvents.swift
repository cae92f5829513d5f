/// What a JACK client has seen so far: cycles run, xruns, the server's current rate and buffer size and
/// how often they changed, and whether the server shut the client down.
///
/// A value snapshot of counters written by JACK's threads. Thread-safe: yes (a value).
public struct JACKEvents: Hashable, Sendable {
    /// Process cycles run.
    public var cycles: UInt64
    /// Xruns the server reported.
    public var xruns: UInt64
    /// Cycles whose JACK times were far off the callback's wake-up (a non-realtime or overloaded server):
    /// still used, but a sign that capture and playout times are only as good as the server's timeline.
    public var untrustedCycles: UInt64 = 0
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
