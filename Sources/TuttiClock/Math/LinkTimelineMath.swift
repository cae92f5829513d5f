// Ableton Link's timeline, ghost-clock, tempo-range and phase arithmetic (protocol reference 6.4, 8.1 to 8.4),
// on the value types of LinkTypes.swift. Everything is integer microseconds and integer micro-beats with the
// double steps in Link's order and Link's rounding (half away from zero), so a Tutti peer computes the same
// beat as a Link peer to the micro-beat. No clock is read: every time is passed in.

// MARK: - Tempo range (6.4)

extension Tempo {
    /// The tempo range Link allows, in beats per minute: it clamps every locally set tempo and every received
    /// timeline's tempo to it, and a compatible peer must never send a tempo outside it.
    package static let linkBPMRange: ClosedRange<Double> = 20...999

    /// The slowest tempo Link allows: 20 bpm = 3,000,000 µs per beat.
    package static let linkSlowest = Tempo(microsecondsPerBeat: 3_000_000)

    /// The fastest tempo Link allows: 999 bpm, sent as 60,060 µs per beat (it reads back as 999.000999 bpm,
    /// which Link clamps to 999 and converts back to the same 60,060).
    package static let linkFastest = Tempo(microsecondsPerBeat: 60_060)

    /// This tempo clamped as Link clamps it: the bpm value clamped to `linkBPMRange`, converted back with
    /// `round(60e6 / bpm)`. Every tempo already in range (60,060 ... 3,000,000 µs per beat) comes back
    /// unchanged; zero or negative µs per beat (nonsense from the wire) clamp to 999 and 20 bpm respectively.
    /// Realtime-safe: yes. Thread-safe: a value.
    package var clampedToLinkRange: Tempo {
        let bpm = bpm  // 60e6 / m: +inf for 0, negative for negative m
        return Tempo(bpm: min(max(bpm, Self.linkBPMRange.lowerBound), Self.linkBPMRange.upperBound))
    }
}

// MARK: - Timeline (8.2)

extension Timeline {
    /// The beat at `time` (8.2): `beatOrigin + round(double(time - timeOrigin) / double(µs per beat) × 1e6)`.
    ///
    /// `time` is on the timeline's clock: ghost microseconds for the session timeline. Exact to Link for
    /// |values| below 2^52; saturates instead of trapping for absurd ones (including a zero tempo).
    /// Realtime-safe: yes. Thread-safe: a value.
    package func beats(at time: Int64) -> Beats {
        let elapsed = LinkArithmetic.difference(time, timeOrigin)
        let delta = LinkArithmetic.round((elapsed / Double(tempo.microsecondsPerBeat)) * 1e6)
        return Beats(microBeats: LinkArithmetic.add(beatOrigin.microBeats, delta))
    }

    /// The time of `beats` (8.2): `timeOrigin + round(double(beats - beatOrigin) / 1e6 × double(µs per beat))`.
    ///
    /// The inverse of `beats(at:)` up to rounding: `time(at: beats(at: t))` is within
    /// `0.5 + µs per beat / 2e6` µs of `t`. Realtime-safe: yes. Thread-safe: a value.
    package func time(at beats: Beats) -> Int64 {
        let delta = LinkArithmetic.difference(beats.microBeats, beatOrigin.microBeats)
        let elapsed = LinkArithmetic.round((delta / 1e6) * Double(tempo.microsecondsPerBeat))
        return LinkArithmetic.add(timeOrigin, elapsed)
    }

    /// The phase-encoded beat at `time` (8.4), what a Link app shows as "the beat" on *its own* timeline:
    /// with `b = beats(at: time)`, the value nearest `b` (at most `quantum / 2` away, exact half-way going
    /// down) whose phase equals the phase of `b - beatOrigin`.
    ///
    /// Only meaningful on a timeline whose `beatOrigin` sits on the quantum grid (Link's app timeline, 8.5).
    /// Do not use it on the session timeline: session phase is `phase` of the session beat itself
    /// (see `LinkSessionClock`). Realtime-safe: yes. Thread-safe: a value.
    package func phaseEncodedBeats(at time: Int64, quantum: Beats) -> Beats {
        let b = beats(at: time)
        let fromOrigin = Beats(microBeats: LinkArithmetic.subtract(b.microBeats, beatOrigin.microBeats))
        return b.closestPhaseMatch(to: fromOrigin, quantum: quantum)
    }

    /// The time at a phase-encoded beat (8.4), the inverse of `phaseEncodedBeats(at:quantum:)`: with
    /// `f = beats - beatOrigin`, `base = f - phase(f)`, `inv = closestPhaseMatch(q - phase(f), q - phase(beats))`,
    /// the time of `beatOrigin + base + q - inv`. It rounds up at exactly half-way, so the round trip is exact
    /// up to the µs rounding of `beats(at:)`. Realtime-safe: yes. Thread-safe: a value.
    package func time(atPhaseEncodedBeats beats: Beats, quantum: Beats) -> Int64 {
        let q = quantum.microBeats > 0 ? quantum.microBeats : 0
        let f = LinkArithmetic.subtract(beats.microBeats, beatOrigin.microBeats)
        let phaseOfF = Beats(microBeats: f).phase(quantum: quantum).microBeats
        let phaseOfBeats = beats.phase(quantum: quantum).microBeats
        let base = LinkArithmetic.subtract(f, phaseOfF)
        let inv = Beats(microBeats: q - phaseOfF)
            .closestPhaseMatch(to: Beats(microBeats: q - phaseOfBeats), quantum: quantum).microBeats
        let position = LinkArithmetic.add(LinkArithmetic.add(beatOrigin.microBeats, base), q - inv)
        return time(at: Beats(microBeats: position))
    }
}

// MARK: - Ghost transform (8.3, 6.2)

extension GhostTransform {
    /// A founder's transform (6.2): ghost time 0 at the host time the peer enabled (or re-founded), i.e.
    /// slope 1, intercept `-hostTimeAtEnable`. A peer must never start its ghost clock anywhere else, or it
    /// would win every session comparison (6.3) and take over existing Link sessions.
    /// Realtime-safe: yes. Thread-safe: a value.
    package static func founder(hostTimeAtEnable: Int64) -> GhostTransform {
        GhostTransform(slope: 1, intercept: LinkArithmetic.subtract(0, hostTimeAtEnable))
    }

    /// A joiner's transform: the measured offset (`ghost = host + offset`, 5.3).
    /// Realtime-safe: yes. Thread-safe: a value.
    package static func measured(offset: Int64) -> GhostTransform { GhostTransform(slope: 1, intercept: offset) }

    /// Ghost time at host time `host` (8.3): `round(slope × double(host)) + intercept`.
    /// Realtime-safe: yes. Thread-safe: a value.
    package func ghost(fromHost host: Int64) -> Int64 {
        LinkArithmetic.add(LinkArithmetic.round(slope * Double(host)), intercept)
    }

    /// Host time at ghost time `ghost` (8.3): `round(double(ghost - intercept) / slope)`. With slope 0 (Link's
    /// internal failure sentinel) the result saturates instead of trapping; never use such a transform.
    /// Realtime-safe: yes. Thread-safe: a value.
    package func host(fromGhost ghost: Int64) -> Int64 {
        LinkArithmetic.round(LinkArithmetic.difference(ghost, intercept) / slope)
    }
}

// MARK: - Phase and quantum (8.4)

extension Beats {
    /// The phase of this beat value in a cycle of `quantum` beats (8.4): the value in `[0, quantum)` congruent
    /// to it, correct for negative beats (phase(-0.1, 1) = 0.9, no mirroring around 0). A quantum of zero or
    /// less means "no cycle" and gives 0 (Link defines only quantum 0; Tutti treats a negative one the same).
    ///
    /// Equal to Link's `(x + n·q) mod q` with `n = (|x| + q) div q`, computed without that formula's overflow
    /// at the Int64 bounds. Realtime-safe: yes. Thread-safe: a value.
    package func phase(quantum: Beats) -> Beats {
        let q = quantum.microBeats
        guard q > 0 else { return Beats(microBeats: 0) }
        let r = microBeats % q
        return Beats(microBeats: r < 0 ? r + q : r)
    }

    /// The smallest value at or after this one with the phase of `target` (8.4):
    /// `self + ((phase(target) - phase(self) + q) mod q)`. With no quantum, `self`.
    /// Realtime-safe: yes. Thread-safe: a value.
    package func nextPhaseMatch(to target: Beats, quantum: Beats) -> Beats {
        let q = quantum.microBeats
        guard q > 0 else { return self }
        let step = (target.phase(quantum: quantum).microBeats - phase(quantum: quantum).microBeats + q) % q
        return Beats(microBeats: LinkArithmetic.add(microBeats, step))
    }

    /// The value nearest this one with the phase of `target` (8.4):
    /// `nextPhaseMatch(self - round(q / 2), target)`, so exactly half-way resolves downward. With no quantum,
    /// `self`. Realtime-safe: yes. Thread-safe: a value.
    package func closestPhaseMatch(to target: Beats, quantum: Beats) -> Beats {
        let q = quantum.microBeats
        guard q > 0 else { return self }
        let half = LinkArithmetic.round(0.5 * Double(q))
        return Beats(microBeats: LinkArithmetic.subtract(microBeats, half)).nextPhaseMatch(to: target, quantum: quantum)
    }
}
