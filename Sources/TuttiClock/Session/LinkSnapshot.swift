import Synchronization

/// What an audio thread needs of the Link session at one instant: the session clock, the transport and
/// the peer count. A plain value.
public struct LinkSnapshot: Hashable, Sendable {
    public var clock: LinkSessionClock
    public var startStop: StartStopState
    public var sessionID: SessionID
    public var peerCount: Int

    public init(clock: LinkSessionClock, startStop: StartStopState, sessionID: SessionID, peerCount: Int) {
        self.clock = clock
        self.startStop = startStop
        self.sessionID = sessionID
        self.peerCount = peerCount
    }
}

/// Publishes `LinkSnapshot`s from the clock's network thread to any number of reader threads, without
/// locks: a sequence lock over words stored in atomics (the writer bumps the sequence to odd, stores the
/// words, bumps it to even; a reader retries while the sequence is odd or changed under it).
///
/// Thread rules: `publish` from one writer thread (the network thread); `read` from any thread.
/// Realtime-safe: `read` (no allocation, no lock; it can only spin while a publish of ten words is in
/// flight, which the single writer finishes at once) and `publish`.
package final class LinkSnapshotPublisher: @unchecked Sendable {
    private let sequence = Atomic<UInt64>(0)
    private let words: UnsafeMutablePointer<Atomic<UInt64>>
    private static let wordCount = 11

    package init(_ initial: LinkSnapshot) {
        words = .allocate(capacity: Self.wordCount)
        for index in 0..<Self.wordCount { (words + index).initialize(to: Atomic(0)) }
        publish(initial)
    }

    deinit {
        words.deinitialize(count: Self.wordCount)
        words.deallocate()
    }

    /// Writer thread only.
    package func publish(_ snapshot: LinkSnapshot) {
        let start = sequence.load(ordering: .relaxed) &+ 1
        sequence.store(start, ordering: .relaxed)
        atomicMemoryFence(ordering: .releasing)
        let clock = snapshot.clock
        words[0].store(UInt64(bitPattern: clock.timeline.tempo.microsecondsPerBeat), ordering: .relaxed)
        words[1].store(UInt64(bitPattern: clock.timeline.beatOrigin.microBeats), ordering: .relaxed)
        words[2].store(UInt64(bitPattern: clock.timeline.timeOrigin), ordering: .relaxed)
        words[3].store(clock.ghostTransform.slope.bitPattern, ordering: .relaxed)
        words[4].store(UInt64(bitPattern: clock.ghostTransform.intercept), ordering: .relaxed)
        words[5].store(snapshot.startStop.isPlaying ? 1 : 0, ordering: .relaxed)
        words[6].store(UInt64(bitPattern: snapshot.startStop.beats.microBeats), ordering: .relaxed)
        words[7].store(UInt64(bitPattern: snapshot.startStop.timestamp), ordering: .relaxed)
        words[8].store(snapshot.sessionID.rawValue, ordering: .relaxed)
        words[9].store(UInt64(snapshot.peerCount), ordering: .relaxed)
        sequence.store(start &+ 1, ordering: .releasing)
    }

    /// The latest published snapshot. Any thread.
    package func read() -> LinkSnapshot {
        while true {
            let before = sequence.load(ordering: .acquiring)
            if before & 1 == 1 { continue }
            let tempo = Int64(bitPattern: words[0].load(ordering: .relaxed))
            let beatOrigin = Int64(bitPattern: words[1].load(ordering: .relaxed))
            let timeOrigin = Int64(bitPattern: words[2].load(ordering: .relaxed))
            let slope = Double(bitPattern: words[3].load(ordering: .relaxed))
            let intercept = Int64(bitPattern: words[4].load(ordering: .relaxed))
            let playing = words[5].load(ordering: .relaxed) == 1
            let startBeats = Int64(bitPattern: words[6].load(ordering: .relaxed))
            let timestamp = Int64(bitPattern: words[7].load(ordering: .relaxed))
            let session = words[8].load(ordering: .relaxed)
            let peers = Int(words[9].load(ordering: .relaxed))
            atomicMemoryFence(ordering: .acquiring)
            guard sequence.load(ordering: .relaxed) == before else { continue }
            return LinkSnapshot(
                clock: LinkSessionClock(
                    timeline: Timeline(
                        tempo: Tempo(microsecondsPerBeat: tempo), beatOrigin: Beats(microBeats: beatOrigin), timeOrigin: timeOrigin),
                    ghostTransform: GhostTransform(slope: slope, intercept: intercept)),
                startStop: StartStopState(isPlaying: playing, beats: Beats(microBeats: startBeats), timestamp: timestamp),
                sessionID: NodeID(rawValue: session), peerCount: peers)
        }
    }
}

extension LinkNode {
    /// The node's state as audio threads see it.
    package var snapshot: LinkSnapshot {
        LinkSnapshot(clock: clock, startStop: startStop, sessionID: sessionID, peerCount: peerCount)
    }
}
