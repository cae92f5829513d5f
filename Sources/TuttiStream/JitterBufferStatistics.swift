/// Cumulative counters of one jitter buffer (a plain value: the owner publishes copies to other threads).
public struct JitterBufferStatistics: Hashable, Sendable {
    /// Packets accepted into the buffer (duplicates, late and invalid ones excluded).
    public var received: UInt64 = 0
    /// Packets that never arrived before the play head passed them while later packets had arrived.
    public var lost: UInt64 = 0
    /// Packets that arrived entirely after their playout time (dropped; concealed, but not counted as lost).
    public var late: UInt64 = 0
    /// Packets seen twice (dropped).
    public var duplicated: UInt64 = 0
    /// Packets that arrived after a packet with a higher sequence number (accepted).
    public var reordered: UInt64 = 0
    /// Packets rejected: wrong payload size, timestamp off the packet grid.
    public var invalid: UInt64 = 0
    /// Times the buffer ran dry while playing.
    public var underruns: UInt64 = 0
    /// Frames output as concealment (repetition or silence) instead of received audio.
    public var concealedFrames: UInt64 = 0
    /// Times the buffer re-anchored its play head (first packet, stream back after a loss of signal, jump).
    public var resynchronizations: UInt64 = 0
    /// Frames buffered ahead of the play head when the last read began.
    public var bufferedFrames: Int = 0
    /// RFC 3550 interarrival jitter, in frames.
    public var jitterFrames: Double = 0
    /// Capture-to-playout latency of the first received frame of the last read that played one, in
    /// nanoseconds (`nil` before playout starts and after a loss of signal).
    public var latencyNanoseconds: Int64?
    /// The target latency the buffer runs at now, in frames (moves in adaptive mode).
    public var targetFrames: Int = 0
    /// Times an adaptive buffer moved its target latency.
    public var latencyChanges: UInt64 = 0
    /// Frames synthesized (pattern repetition) to raise the latency, and frames skipped to lower it.
    public var stretchedFrames: UInt64 = 0
    public var skippedFrames: UInt64 = 0
    /// The buffer's latency measured against the fastest recent packet (frames, fractional), while playing:
    /// what the adaptive target and drift compensation hold steady.
    public var measuredLatencyFrames: Double?
    /// Packets the play head passed missing with nothing newer arrived yet: the stream's end, or losses not
    /// yet confirmed (they become `lost` when a newer packet arrives). Concealed, like lost ones.
    public var pendingMissing: UInt64 = 0
    /// Opus: frames recovered from the next packet's in-band FEC instead of concealed.
    public var fecRecoveredFrames: UInt64 = 0

    public init() {}
}
