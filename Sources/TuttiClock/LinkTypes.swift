// The values of an Ableton Link session, in Link's own units: integer microseconds, integer micro-beats
// (1 beat = 1,000,000) and tempo as integer microseconds per beat, so every peer computes identical beats.
// Pure value types: realtime-safe and thread-safe.

/// A beat position or length in micro-beats.
public struct Beats: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var microBeats: Int64

    @inlinable public init(microBeats: Int64) { self.microBeats = microBeats }

    /// From a real number of beats, rounded half away from zero (as Link's `llround`).
    @inlinable public init(_ beats: Double) { microBeats = Int64((beats * 1e6).rounded(.toNearestOrAwayFromZero)) }

    /// As a real number of beats.
    @inlinable public var value: Double { Double(microBeats) / 1e6 }

    @inlinable public static func < (lhs: Beats, rhs: Beats) -> Bool { lhs.microBeats < rhs.microBeats }

    public var description: String { "\(value) beats" }
}

/// A tempo, carried as integer microseconds per beat (not bpm).
public struct Tempo: Hashable, Sendable, CustomStringConvertible {
    public var microsecondsPerBeat: Int64

    @inlinable public init(microsecondsPerBeat: Int64) { self.microsecondsPerBeat = microsecondsPerBeat }

    /// From beats per minute: `round(60e6 / bpm)` (120 → 500000, 90 → 666667).
    @inlinable public init(bpm: Double) {
        microsecondsPerBeat = Int64((60e6 / bpm).rounded(.toNearestOrAwayFromZero))
    }

    /// Beats per minute, as every peer reads it back from the integer (90 → 89.99995500002).
    @inlinable public var bpm: Double { 60e6 / Double(microsecondsPerBeat) }

    public var description: String { "\(bpm) bpm" }
}

/// A session timeline: the beat at a time, given as tempo, beat origin and time origin (ghost microseconds
/// for the session timeline).
public struct Timeline: Hashable, Sendable {
    public var tempo: Tempo
    public var beatOrigin: Beats
    /// Microseconds on the clock the timeline is on (ghost time for the session timeline).
    public var timeOrigin: Int64

    @inlinable public init(tempo: Tempo, beatOrigin: Beats, timeOrigin: Int64) {
        self.tempo = tempo
        self.beatOrigin = beatOrigin
        self.timeOrigin = timeOrigin
    }
}

/// The session's transport: playing or stopped, from which session beat, decided at which ghost time.
/// The newest timestamp wins.
public struct StartStopState: Hashable, Sendable {
    public var isPlaying: Bool
    public var beats: Beats
    /// Ghost microseconds at which this state was set.
    public var timestamp: Int64

    @inlinable public init(isPlaying: Bool, beats: Beats, timestamp: Int64) {
        self.isPlaying = isPlaying
        self.beats = beats
        self.timestamp = timestamp
    }

    /// What a peer assumes when a message carries no start/stop entry (Link 1.x peers): stopped at 0.
    public static let `default` = StartStopState(isPlaying: false, beats: Beats(microBeats: 0), timestamp: 0)
}

/// A Link peer's 8-byte identity (Link fills it with random printable ASCII, 33…126). A session's id is
/// the NodeID of the peer that founded it.
public struct NodeID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The 8 bytes in wire order, as a big-endian integer: comparing two values compares the bytes
    /// lexicographically, which is how sessions break ties.
    public var rawValue: UInt64

    @inlinable public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// From exactly 8 bytes in wire order.
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 8 else { return nil }
        rawValue = bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// A new random identity of printable ASCII bytes, as Link draws them.
    public static func random<G: RandomNumberGenerator>(using generator: inout G) -> NodeID {
        var value: UInt64 = 0
        for _ in 0..<8 { value = value << 8 | UInt64(UInt8.random(in: 33...126, using: &generator)) }
        return NodeID(rawValue: value)
    }

    /// The 8 bytes in wire order.
    public var bytes: [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: rawValue >> (56 - 8 * $0)) } }

    @inlinable public static func < (lhs: NodeID, rhs: NodeID) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String {
        let bytes = bytes
        return bytes.allSatisfy({ (33...126).contains($0) })
            ? String(decoding: bytes, as: UTF8.self) : bytes.map { String($0, radix: 16) }.joined()
    }
}

/// A session's identity: the founder's NodeID.
public typealias SessionID = NodeID

/// Maps a peer's host clock to the session's ghost clock: `ghost = round(slope × host) + intercept`, in
/// microseconds. The slope is 1 in practice; a founder's intercept is minus its host time at founding,
/// a joiner's the measured offset.
public struct GhostTransform: Hashable, Sendable {
    public var slope: Double
    public var intercept: Int64

    @inlinable public init(slope: Double = 1, intercept: Int64) {
        self.slope = slope
        self.intercept = intercept
    }
}
