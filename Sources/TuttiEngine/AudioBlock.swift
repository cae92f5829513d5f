/// An application's own audio in a peer's engine, as the Audiobus SDK's send, receive and process blocks: a
/// closure the engine calls once per period of the port's engine clock, on that clock's thread, with the
/// period's samples (`frames × channels`, interleaved) and their capture time on the peer's capture clock (in
/// nanoseconds: Link ghost time when the peer runs the shared beat clock, else the wall clock).
///
/// - A **source** (`AudioSource.block`) writes the period it is given; the capture time is the period's.
/// - A **sink** (`AudioSink.block`) reads the port's mix; the capture time is that of the mix's first frame
///   (the first stream's that has one), `Int64.min` while nothing plays.
/// - A **filter** (`PortConfiguration.Role.filterBlock`) changes the port's mix in place before it is sent
///   on; the capture time is the mix's, as for a sink. `latencyFrames` is how far its output lags its input:
///   the port reports it and subtracts it from the capture time it sends on.
///
/// Realtime contract (as the engine's own period loop): the block runs on an audio thread and must not
/// allocate, lock, log, wait or make system calls, and must return well within the period. It is called
/// with the same buffer every period: keep no pointer to it. The engine's allocation check runs a source, a
/// filter and a sink block through the period loop and requires 0 allocations per period.
///
/// Thread-safe: the block itself is called from one engine thread at a time; the object is immutable.
public final class AudioBlock: @unchecked Sendable, Hashable, CustomStringConvertible {
    /// The block: `samples` (at least `frames × channels`), `frames`, `channels`, `captureTime` (ns).
    public typealias Body =
        @Sendable (
            _ samples: UnsafeMutableBufferPointer<Float>, _ frames: Int, _ channels: Int, _ captureTime: Int64
        ) -> Void

    /// How the application names it (in `tutti ls` and the log).
    public let name: String
    /// A filter's processing latency in frames (0 for sources and sinks).
    public let latencyFrames: Int
    let body: Body

    /// Any thread.
    public init(name: String, latencyFrames: Int = 0, _ body: @escaping Body) {
        precondition(latencyFrames >= 0)
        self.name = name
        self.latencyFrames = latencyFrames
        self.body = body
    }

    /// Calls the block. Engine thread only.
    @inline(__always)
    func callAsFunction(_ samples: UnsafeMutableBufferPointer<Float>, frames: Int, channels: Int, captureTime: Int64) {
        body(samples, frames, channels, captureTime)
    }

    public static func == (lhs: AudioBlock, rhs: AudioBlock) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
    public var description: String { "app \(name)" }
}
