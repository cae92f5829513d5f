// The pure rules of a Link session (protocol reference 6.2 to 6.5, 8.3 to 8.5): how a timeline is replaced,
// how a local tempo or phase change becomes a new timeline that wins at every receiver, the session clock a
// peer reads beats and phase from at host time, start/stop acceptance, and the comparison that decides
// which of two meeting sessions survives. The session state machine (peers, joining, announcing) builds on
// these; nothing here reads a clock or holds state beyond its values.

// MARK: - Timeline updates inside a session (6.4) and re-founding (6.2)

extension Timeline {
    /// Link's receive rule (6.4): a timeline received from a peer of our session (or seen for another
    /// session) replaces the current one only if its beat origin is **strictly greater**; an equal or smaller
    /// origin is ignored, whatever its tempo. Realtime-safe: yes. Thread-safe: a value.
    package func supersedes(_ current: Timeline) -> Bool { beatOrigin > current.beatOrigin }

    /// The timeline this peer stores and announces when it moves the session's line locally (6.4, 8.5): the
    /// new line has `tempo` (clamped to Link's 20...999 bpm) and passes through `beats` at `time`; the
    /// change is committed at `now`.
    ///
    /// As Link does it: the new beat origin is `max(beats(at: now), beatOrigin + 1 micro-beat)` on the
    /// current line, so the result always `supersedes` the current timeline at every receiver, even when the
    /// change falls on the current origin; the new time origin is where the new line reaches that beat.
    /// When the line does not change (same tempo, and `beats` already falls at `time`), returns `self`
    /// unchanged, so nothing needs announcing. Times are on the timeline's clock (ghost µs).
    /// Realtime-safe: yes. Thread-safe: a value.
    package func replacingLine(tempo: Tempo, passingThrough beats: Beats, at time: Int64, committedAt now: Int64)
        -> Timeline
    {
        let newTempo = tempo.clampedToLinkRange
        if newTempo == self.tempo && self.beats(at: time) == beats { return self }
        let newOrigin = max(self.beats(at: now), Beats(microBeats: LinkArithmetic.add(beatOrigin.microBeats, 1)))
        let newLine = Timeline(tempo: newTempo, beatOrigin: beats, timeOrigin: time)
        return Timeline(tempo: newTempo, beatOrigin: newOrigin, timeOrigin: newLine.time(at: newOrigin))
    }

    /// The timeline for a local tempo change (6.4): `tempo` (clamped to 20...999 bpm) from `anchor` on, with
    /// the beat at `anchor` kept where it is (so the beat and the phase are continuous there), committed at
    /// `now` (normally `anchor == now`). With `anchor == now` and the usual case, the new timeline is
    /// `(tempo, beats(at: now), now)` exactly. Returns `self` if the clamped tempo is unchanged.
    /// Realtime-safe: yes. Thread-safe: a value.
    package func changingTempo(to tempo: Tempo, keepingBeatsContinuousAt anchor: Int64, committedAt now: Int64)
        -> Timeline
    {
        let newTempo = tempo.clampedToLinkRange
        if newTempo == self.tempo { return self }
        return replacingLine(tempo: newTempo, passingThrough: beats(at: anchor), at: anchor, committedAt: now)
    }

    /// The timeline of a (re-)founded session (6.2): same tempo, beats continuous, ghost time 0 at the
    /// founding instant: `(tempo, beats(at: ghostNow), 0)`, where `ghostNow` is the founding instant on this
    /// (the previous) timeline's clock. Realtime-safe: yes. Thread-safe: a value.
    package func refounded(atTime ghostNow: Int64) -> Timeline {
        Timeline(tempo: tempo, beatOrigin: beats(at: ghostNow), timeOrigin: 0)
    }
}

// MARK: - Session clock: beats and phase at host time (8.3, 8.4)

/// What a peer reads the shared beat clock from: the session timeline (on ghost time) and this peer's ghost
/// transform (host to ghost). Every query takes a host time in microseconds.
///
/// Phase is Link's session phase: `session beats mod quantum`, the grid anchored at session beat 0. This
/// is the phase every Link app in the session shows. Beat *values* are session beats; Link apps label beats
/// on their own app timelines (8.5), which differ from session beats by a multiple of their quantum, so only
/// the phase is comparable across peers. Realtime-safe: yes, every method. Thread-safe: a value.
public struct LinkSessionClock: Hashable, Sendable {
    /// The session timeline (time origin in ghost microseconds).
    public var timeline: Timeline
    /// This peer's host-to-ghost transform for the session.
    public var ghostTransform: GhostTransform

    public init(timeline: Timeline, ghostTransform: GhostTransform) {
        self.timeline = timeline
        self.ghostTransform = ghostTransform
    }

    /// A newly founded session (6.2): ghost time 0 at `hostTimeAtEnable`, the timeline
    /// `(tempo, beatOrigin, 0)` (Link carries the beats of the previous timeline over as `beatOrigin`).
    package static func founded(
        hostTimeAtEnable: Int64, tempo: Tempo, beatOrigin: Beats = Beats(microBeats: 0)
    ) -> LinkSessionClock {
        LinkSessionClock(
            timeline: Timeline(tempo: tempo.clampedToLinkRange, beatOrigin: beatOrigin, timeOrigin: 0),
            ghostTransform: .founder(hostTimeAtEnable: hostTimeAtEnable))
    }

    /// The session re-founded at host time `hostNow` (6.2: enable, or the last peer left): ghost 0 now,
    /// tempo kept, beats continuous. (The caller also draws a new NodeID/SessionID and resets start/stop.)
    package func refounded(atHostTime hostNow: Int64) -> LinkSessionClock {
        LinkSessionClock(
            timeline: timeline.refounded(atTime: ghostTransform.ghost(fromHost: hostNow)),
            ghostTransform: .founder(hostTimeAtEnable: hostNow))
    }

    /// Ghost time at `hostTime`.
    public func ghostTime(atHostTime hostTime: Int64) -> Int64 { ghostTransform.ghost(fromHost: hostTime) }

    /// Host time at `ghostTime`.
    public func hostTime(atGhostTime ghostTime: Int64) -> Int64 { ghostTransform.host(fromGhost: ghostTime) }

    /// The session beat at `hostTime`: `timeline.beats(at: ghost(hostTime))` (8.3).
    public func beats(atHostTime hostTime: Int64) -> Beats { timeline.beats(at: ghostTime(atHostTime: hostTime)) }

    /// The session phase at `hostTime` for `quantum` (8.4): `phase(session beats, quantum)`, in `[0, quantum)`.
    public func phase(atHostTime hostTime: Int64, quantum: Beats) -> Beats {
        beats(atHostTime: hostTime).phase(quantum: quantum)
    }

    /// The host time at which the session reaches `beats` (rounded to the µs, so it may read a micro-beat
    /// short of `beats` when converted back).
    public func hostTime(atBeats beats: Beats) -> Int64 { hostTime(atGhostTime: timeline.time(at: beats)) }

    /// The first session beat at or after the beat at `hostTime` whose phase equals the phase of `target`
    /// (quantized launch: "next bar" is `target` 0 with quantum 4). Its time is `hostTime(atBeats:)`.
    public func nextBeats(matchingPhaseOf target: Beats, quantum: Beats, atOrAfterHostTime hostTime: Int64) -> Beats {
        beats(atHostTime: hostTime).nextPhaseMatch(to: target, quantum: quantum)
    }

    /// The session clock after a local tempo change (6.4): `tempo` from `anchorHostTime` on, the beat at the
    /// anchor kept (beat and phase continuous), committed at `nowHostTime`. The new timeline supersedes the
    /// old one at every receiver; it is unchanged if the clamped tempo is.
    package func changingTempo(
        to tempo: Tempo, keepingBeatsContinuousAtHostTime anchorHostTime: Int64, committedAtHostTime nowHostTime: Int64
    ) -> LinkSessionClock {
        var result = self
        result.timeline = timeline.changingTempo(
            to: tempo, keepingBeatsContinuousAt: ghostTime(atHostTime: anchorHostTime),
            committedAt: ghostTime(atHostTime: nowHostTime))
        return result
    }

    /// The session clock after forcing session beat `beats` to fall at `hostTime` (tempo kept), committed at
    /// `nowHostTime`: this moves session beat 0 and so changes every peer's phase (Link's forceBeatAtTime in
    /// session terms, 8.5). Unchanged if `beats` already falls there.
    package func forcingBeats(_ beats: Beats, atHostTime hostTime: Int64, committedAtHostTime nowHostTime: Int64)
        -> LinkSessionClock
    {
        var result = self
        result.timeline = timeline.replacingLine(
            tempo: timeline.tempo, passingThrough: beats, at: ghostTime(atHostTime: hostTime),
            committedAt: ghostTime(atHostTime: nowHostTime))
        return result
    }

    /// A local start/stop change (6.5): playing or stopped from the session beat at `eventHostTime` (the app's
    /// requested time), stamped with the ghost time of the commit `nowHostTime`. Apply it only if it
    /// `supersedes` the current state.
    package func startStop(isPlaying: Bool, atHostTime eventHostTime: Int64, committedAtHostTime nowHostTime: Int64)
        -> StartStopState
    {
        StartStopState(
            isPlaying: isPlaying, beats: beats(atHostTime: eventHostTime),
            timestamp: ghostTime(atHostTime: nowHostTime))
    }

    /// The host time of a start/stop state's event on the *current* timeline (6.5):
    /// `host(timeline.time(at: state.beats))`, so a pending quantized start moves if the tempo changes first.
    public func hostTime(of state: StartStopState) -> Int64 { hostTime(atBeats: state.beats) }
}

// MARK: - Start/stop state (6.5)

extension StartStopState {
    /// The newest timestamp wins (6.5): this state replaces `current` only if its ghost timestamp is strictly
    /// greater. Link applies this to local changes too. Realtime-safe: yes. Thread-safe: a value.
    package func supersedes(_ current: StartStopState) -> Bool { timestamp > current.timestamp }

    /// Link's rule for a start/stop state announced by a peer (6.5): adopt it (then re-announce it, even with
    /// start/stop sync off) only if the sender is in our session and its timestamp is strictly newer than
    /// ours, and only if the (sender session, state) pair is new to the peer table: Link evaluates a pair
    /// once, when it first appears (`pairAlreadyHeld` false).
    ///
    /// That last condition is why **late joiners stay stopped** as Link apps do: a joiner first saw the
    /// running state while it was still in its own session (rejected: other session), switched sessions
    /// (start/stop reset to `.default`) and never evaluates the unchanged pair again; it starts at the next
    /// change. A Tutti peer that prefers to pick up the running state passes `pairAlreadyHeld: false`
    /// after joining (still wire-compatible; it only changes Tutti's own behaviour, ambiguity 14.3).
    /// Realtime-safe: yes. Thread-safe: a value.
    package func adoptsAnnounced(
        _ announced: StartStopState, senderSession: SessionID, ownSession: SessionID, pairAlreadyHeld: Bool
    ) -> Bool {
        !pairAlreadyHeld && senderSession == ownSession && announced.supersedes(self)
    }

    /// The state after the peer moves from session `old` to session `new` (6.3, 6.5): reset to `.default`
    /// (stopped at beat 0, timestamp 0) if the session changed, otherwise unchanged.
    /// Realtime-safe: yes. Thread-safe: a value.
    package func afterSwitchingSession(from old: SessionID, to new: SessionID) -> StartStopState {
        old == new ? self : .default
    }
}

// MARK: - Meeting another session (6.3)

/// Link's decision when this peer has measured another session's ghost clock (6.3 step 4).
///
/// `ghostDiff = other.ghost(h) - own.ghost(h)` at one host instant `h` (with slope 1: the difference of the
/// intercepts). **Join** if `ghostDiff > 500 ms` (the other session's ghost clock reads later: it is older),
/// or if `|ghostDiff| < 500 ms` and the other SessionID is smaller (byte-wise, i.e. as a big-endian u64);
/// otherwise **stay**. Exactly ±500 ms stays. Must be exact, band and tie-break included, or two peers can
/// both stay (two sessions forever) or both move (flip-flop). Realtime-safe: yes. Thread-safe: pure.
package enum LinkSessionComparison {
    /// The band within which the SessionID decides: 500,000 µs.
    package static let bandMicroseconds: Int64 = 500_000

    /// What to do about the other session.
    package enum Decision: Hashable, Sendable {
        /// Make the other session ours (GhostTransform := the measured one).
        case join
        /// Keep our session (and keep the measurement: that session is not measured again while listed).
        case stay
    }

    /// The other session's ghost clock minus ours at host time `hostTime`, in µs (saturating).
    package static func ghostDifference(
        otherTransform: GhostTransform, ownTransform: GhostTransform, atHostTime hostTime: Int64
    ) -> Int64 {
        LinkArithmetic.subtract(otherTransform.ghost(fromHost: hostTime), ownTransform.ghost(fromHost: hostTime))
    }

    /// Link's decision from a ghost-clock difference (other minus own, µs). The same session never "joins".
    package static func decide(ghostDifference diff: Int64, otherSession: SessionID, ownSession: SessionID) -> Decision {
        guard otherSession != ownSession else { return .stay }
        if diff > bandMicroseconds { return .join }
        if diff > -bandMicroseconds && diff < bandMicroseconds && otherSession < ownSession { return .join }
        return .stay
    }

    /// Link's decision from the measured transform of the other session and ours, compared at `hostTime`.
    package static func decide(
        otherSession: SessionID, otherTransform: GhostTransform, ownSession: SessionID,
        ownTransform: GhostTransform, atHostTime hostTime: Int64
    ) -> Decision {
        decide(
            ghostDifference: ghostDifference(
                otherTransform: otherTransform, ownTransform: ownTransform, atHostTime: hostTime),
            otherSession: otherSession, ownSession: ownSession)
    }
}
