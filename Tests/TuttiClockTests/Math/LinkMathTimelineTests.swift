import TuttiClock
import TuttiTesting
import XCTest

/// Timeline, ghost-transform and phase maths against exact 128-bit integer arithmetic: round trips across
/// Link's whole tempo range, 24 hours of session time without precision loss, and beat/phase continuity
/// across tempo changes made with `changingTempo`.
final class LinkMathTimelineTests: XCTestCase {
    private static let day: Int64 = 86_400_000_000
    private static let hour: Int64 = 3_600_000_000

    /// How close to an exact half a value of this magnitude may be for Link's two double steps (each exact
    /// to half an ulp, 2^-53 relative) to round it the other way: a few ulps of the value.
    private static func doubleSlack(_ value: Int128) -> Double { max(1e-9, Double(value < 0 ? -value : value) * 1e-15) }

    // MARK: 24 hours against exact arithmetic

    /// Every 1 ms of a 24-hour run (plus the hour before the time origin) at 133 bpm (451128 µs/beat, not a
    /// round number), on a host clock 16 days into its uptime: the beat equals the exact rational beat
    /// rounded half away from zero, except within 1e-6 micro-beat of an exact half (none occur here), where the double
    /// formula may round the other way (by 1 micro-beat) as Link's does. The ghost transform is exact.
    func testTwentyFourHoursEveryMillisecondMatchesExactArithmetic() {
        let m: Int64 = 451_128
        let timeline = Timeline(
            tempo: Tempo(microsecondsPerBeat: m), beatOrigin: Beats(microBeats: 17_492_028), timeOrigin: 8_980_643)
        let hostBase: Int64 = 1_382_400_000_000  // 16 days of uptime
        let transform = GhostTransform.founder(hostTimeAtEnable: hostBase - 1_000_000)
        let clock = LinkSessionClock(timeline: timeline, ghostTransform: transform)

        // Exact (t - T) × 1e6 = q × m + r with 0 <= r < m, advanced incrementally by 1 ms = 1e9 / m.
        let step: Int64 = 1000
        let stepQ = step * 1_000_000 / m
        let stepR = step * 1_000_000 % m
        var t = timeline.timeOrigin - Self.hour
        var numerator = (t - timeline.timeOrigin) * 1_000_000
        var q = numerator / m
        var r = numerator % m
        if r < 0 {
            q -= 1
            r += m
        }
        var samples = 0
        var nearTies = 0
        var tieDifferences = 0
        let end = timeline.timeOrigin + Self.day
        while t <= end {
            let twiceR = 2 * r
            let exactDelta = numerator >= 0 ? q + (twiceR >= m ? 1 : 0) : q + (twiceR > m ? 1 : 0)
            let exact = timeline.beatOrigin.microBeats + exactDelta
            let host = t - transform.intercept
            let got = clock.beats(atHostTime: host).microBeats
            if got != exact {
                let nearTie = abs(Double(twiceR - m)) / Double(2 * m) < 1e-6
                if !nearTie || abs(got - exact) > 1 {
                    XCTFail("t = \(t): \(got) micro-beats, exact \(exact)")
                    return
                }
                tieDifferences += 1
            }
            if twiceR == m { nearTies += 1 }
            if samples % 1000 == 0 && (clock.ghostTime(atHostTime: host) != t || clock.hostTime(atGhostTime: t) != host) {
                XCTFail("ghost transform not exact at t = \(t)")
                return
            }
            samples += 1
            t += step
            numerator += step * 1_000_000
            q += stepQ
            r += stepR
            if r >= m {
                q += 1
                r -= m
            }
        }
        XCTAssertEqual(samples, 90_000_001)
        // At 451128 µs/beat no instant is an exact half micro-beat, and the doubles never lose a micro-beat.
        XCTAssertEqual(nearTies, 0)
        XCTAssertEqual(tieDifferences, 0)
    }

    /// Every integer tempo from 20 to 999 bpm (and the tempos of 8.1), each at 1,000 seeded instants and as
    /// many beat values within ±24 h of the origin, on origins far from zero: beats and times equal the exact
    /// values except within a few double ulps of an exact half (the two double steps of Link's formula may
    /// round such a value either way), where they may differ by 1.
    func testEveryTempoFrom20To999BPMMatchesExactArithmeticOverADay() {
        var generator = SeededGenerator(seed: 0x7E4D_0_20_999)
        var tempos = (20...999).map { Tempo(bpm: Double($0)) }
        tempos += [90, 95.5, 133, 140].map { Tempo(bpm: $0) }
        var checked = 0
        var beatTieDifferences = 0
        var timeTieDifferences = 0
        for tempo in tempos {
            let timeline = Timeline(
                tempo: tempo,
                beatOrigin: Beats(microBeats: Int64.random(in: -10_000_000_000...10_000_000_000, using: &generator)),
                timeOrigin: Int64.random(in: -1_000_000_000_000...1_000_000_000_000, using: &generator))
            for _ in 0..<1000 {
                let t = timeline.timeOrigin + Int64.random(in: -Self.day...Self.day, using: &generator)
                let exact = LinkMathExact.beats(timeline, at: t)
                let got = Int128(timeline.beats(at: t).microBeats)
                if got != exact.value {
                    guard
                        exact.distanceFromHalf < Self.doubleSlack(exact.value - Int128(timeline.beatOrigin.microBeats)),
                        abs(got - exact.value) <= 1
                    else {
                        return XCTFail(
                            "\(tempo): beats at \(t) = \(got), exact \(exact.value) \(exact.distanceFromHalf)")
                    }
                    beatTieDifferences += 1
                }
                let beats = Beats(
                    microBeats: timeline.beatOrigin.microBeats
                        + Int64.random(in: -1_500_000_000_000...1_500_000_000_000, using: &generator) / 1000)
                let exactTime = LinkMathExact.time(timeline, at: beats)
                let gotTime = Int128(timeline.time(at: beats))
                if gotTime != exactTime.value {
                    guard exactTime.distanceFromHalf < Self.doubleSlack(exactTime.value - Int128(timeline.timeOrigin)),
                        abs(gotTime - exactTime.value) <= 1
                    else {
                        return XCTFail("\(tempo): time at \(beats.microBeats) = \(gotTime), exact \(exactTime.value)")
                    }
                    timeTieDifferences += 1
                }
                checked += 2
            }
        }
        XCTAssertEqual(checked, 984 * 2000)
        // Measured with this seed: 68 of the 984,000 beats and 180 of the 984,000 times sit at (or within a few
        // ulps of) an exact half and come out 1 away from the exact rounding, as Link's doubles do; none else.
        XCTAssertEqual(beatTieDifferences, 68)
        XCTAssertEqual(timeTieDifferences, 180)
    }

    /// Exact half-way points do occur (150 bpm: an odd number of µs is x.5 micro-beats); Link rounds them as
    /// its doubles fall, and so do we: never more than 1 micro-beat from the exact rounding.
    func testExactHalfMicroBeatsRoundWithinOne() {
        let timeline = Timeline(tempo: Tempo(bpm: 150), beatOrigin: Beats(microBeats: 0), timeOrigin: 0)
        var ties = 0
        var differing = 0
        for t in Int64(-20_001)...20_001 where t % 2 != 0 {
            let exact = LinkMathExact.beats(timeline, at: t)
            XCTAssertEqual(exact.distanceFromHalf, 0)
            ties += 1
            let got = Int128(timeline.beats(at: t).microBeats)
            if got != exact.value { differing += 1 }
            XCTAssertLessThanOrEqual(abs(got - exact.value), 1)
        }
        XCTAssertEqual(ties, 20_002)
        // Measured: for 290 of these 20,002 exact halves Link's double steps land just below .5 and round
        // toward zero; Link computes the same doubles, so we pin the count.
        XCTAssertEqual(differing, 290)
    }

    // MARK: Round trips

    /// beats → time → beats and time → beats → time across tempos 20...999 bpm: within the rounding of one
    /// step (`round(0.5 × 1e6 / m)` micro-beats, `round(0.5 × m / 1e6)` µs: 0 µs above 60 bpm).
    func testRoundTripsBetweenBeatsAndTimeAcrossTempos() {
        var generator = SeededGenerator(seed: 0xB0A7)
        for bpm in stride(from: 20.0, through: 999.0, by: 0.5) {
            let tempo = Tempo(bpm: bpm)
            let m = tempo.microsecondsPerBeat
            let timeline = Timeline(
                tempo: tempo,
                beatOrigin: Beats(microBeats: Int64.random(in: -1_000_000_000...1_000_000_000, using: &generator)),
                timeOrigin: Int64.random(in: -10_000_000_000...10_000_000_000, using: &generator))
            let timeBound = Int64((0.5 * Double(m) / 1e6).rounded(.toNearestOrAwayFromZero))
            let beatBound = Int64((0.5 * 1e6 / Double(m)).rounded(.up))
            for _ in 0..<200 {
                let t = timeline.timeOrigin + Int64.random(in: -Self.day...Self.day, using: &generator)
                let back = timeline.time(at: timeline.beats(at: t))
                XCTAssertLessThanOrEqual(abs(back - t), timeBound, "\(bpm) bpm, t = \(t)")
                let b = Beats(
                    microBeats: timeline.beatOrigin.microBeats + Int64.random(
                        in: -1_000_000_000_000...1_000_000_000_000, using: &generator) / 100)
                let beatsBack = timeline.beats(at: timeline.time(at: b))
                XCTAssertLessThanOrEqual(abs(beatsBack.microBeats - b.microBeats), beatBound, "\(bpm) bpm, b = \(b)")
            }
        }
    }

    /// The phase-encoded beat and its inverse (8.4) round-trip on random timelines and quanta: the time
    /// comes back within the timeline's own time round trip, and the encoded beat has the phase of
    /// `beats - beatOrigin` and lies within q/2 of the beat.
    func testPhaseEncodedBeatsRoundTrip() {
        var generator = SeededGenerator(seed: 0x9_4A5E)
        for _ in 0..<20_000 {
            let tempo = Tempo(microsecondsPerBeat: Int64.random(in: 60_060...3_000_000, using: &generator))
            let timeline = Timeline(
                tempo: tempo,
                beatOrigin: Beats(microBeats: Int64.random(in: -100_000_000...100_000_000, using: &generator)),
                timeOrigin: Int64.random(in: -100_000_000...100_000_000, using: &generator))
            let quantum = Beats(microBeats: Int64.random(in: 1...16_000_000, using: &generator))
            let t = Int64.random(in: -1_000_000_000...1_000_000_000, using: &generator)
            let b = timeline.beats(at: t)
            let encoded = timeline.phaseEncodedBeats(at: t, quantum: quantum)
            let fromOrigin = Beats(microBeats: b.microBeats - timeline.beatOrigin.microBeats)
            XCTAssertEqual(encoded.phase(quantum: quantum), fromOrigin.phase(quantum: quantum))
            XCTAssertLessThanOrEqual(abs(encoded.microBeats - b.microBeats), (quantum.microBeats + 1) / 2)
            let back = timeline.time(atPhaseEncodedBeats: encoded, quantum: quantum)
            let timeBound = Int64((0.5 * Double(tempo.microsecondsPerBeat) / 1e6).rounded(.toNearestOrAwayFromZero))
            XCTAssertLessThanOrEqual(abs(back - t), timeBound, "\(timeline) q \(quantum.microBeats) t \(t)")
        }
    }

    func testPhaseIsEuclideanForNegativeBeats() {
        var generator = SeededGenerator(seed: 0xE0C1)
        for _ in 0..<100_000 {
            let x = Int64.random(in: -10_000_000_000...10_000_000_000, using: &generator)
            let q = Int64.random(in: 1...100_000_000, using: &generator)
            // Link's own formula, evaluated in 128 bits: n = (|x| + q) div q; (x + n q) mod q.
            let n = (Int128(abs(x)) + Int128(q)) / Int128(q)
            let linkPhase = (Int128(x) + n * Int128(q)) % Int128(q)
            let phase = Beats(microBeats: x).phase(quantum: Beats(microBeats: q)).microBeats
            XCTAssertEqual(Int128(phase), linkPhase)
            let target = Beats(microBeats: Int64.random(in: -10_000_000_000...10_000_000_000, using: &generator))
            let next = Beats(microBeats: x).nextPhaseMatch(to: target, quantum: Beats(microBeats: q))
            XCTAssertGreaterThanOrEqual(next.microBeats, x)
            XCTAssertLessThan(next.microBeats - x, q)
            XCTAssertEqual(next.phase(quantum: Beats(microBeats: q)), target.phase(quantum: Beats(microBeats: q)))
            let closest = Beats(microBeats: x).closestPhaseMatch(to: target, quantum: Beats(microBeats: q))
            XCTAssertEqual(closest.phase(quantum: Beats(microBeats: q)), target.phase(quantum: Beats(microBeats: q)))
            XCTAssertLessThanOrEqual(abs(closest.microBeats - x), (q + 1) / 2)
        }
    }

    // MARK: Tempo changes: beat and phase continuous

    /// A 24-hour session with a tempo change about every minute (seeded tempos across 20...999 bpm), each made
    /// with `changingTempo` at "now": the beat (and so the phase, for any quantum) is exactly continuous at
    /// every change, every new timeline supersedes the previous one, and the beat never goes backwards
    /// (checked every 1 ms of the run for the first hour and every 7 ms after it).
    func testTempoChangesKeepBeatAndPhaseContinuousForADay() {
        var generator = SeededGenerator(seed: 0x7E_3B0)
        let quanta = [1, 3, 4, 7].map { Beats(microBeats: $0 * 1_000_000) }
        var timeline = Timeline(tempo: Tempo(bpm: 120), beatOrigin: Beats(microBeats: 882), timeOrigin: 0)
        var t: Int64 = 0
        var lastBeats = timeline.beats(at: 0)
        var changes = 0
        var nextChange = Int64.random(in: 1_000_000...119_000_000, using: &generator)
        while t <= Self.day {
            if t >= nextChange {
                let old = timeline
                let bpm = Double(Int.random(in: 20_000...999_000, using: &generator)) / 1000
                timeline = old.changingTempo(to: Tempo(bpm: bpm), keepingBeatsContinuousAt: t, committedAt: t)
                if timeline != old {
                    XCTAssertEqual(timeline.beats(at: t), old.beats(at: t), "beat at change \(changes)")
                    for q in quanta {
                        XCTAssertEqual(timeline.beats(at: t).phase(quantum: q), old.beats(at: t).phase(quantum: q))
                    }
                    XCTAssertTrue(timeline.supersedes(old))
                    XCTAssertEqual(timeline.timeOrigin, t)
                    changes += 1
                }
                nextChange = t + Int64.random(in: 1_000_000...119_000_000, using: &generator)
            }
            let b = timeline.beats(at: t)
            if b < lastBeats { return XCTFail("beats went backwards at \(t)") }
            lastBeats = b
            t += t < Self.hour ? 1000 : 7000
        }
        XCTAssertGreaterThan(changes, 1400)
    }

    /// A change anchored away from the commit time (8.5's general form): the beat at the anchor stays put
    /// (within `round(0.5e6 / m)` micro-beats of rounding), the timeline still supersedes, and the phase at
    /// the anchor is continuous to the same bound.
    func testTempoChangeAnchoredAtAnotherTimeKeepsTheBeatThere() {
        var generator = SeededGenerator(seed: 0xA0C4)
        for _ in 0..<20_000 {
            let old = Timeline(
                tempo: Tempo(microsecondsPerBeat: Int64.random(in: 60_060...3_000_000, using: &generator)),
                beatOrigin: Beats(microBeats: Int64.random(in: -1_000_000_000...1_000_000_000, using: &generator)),
                timeOrigin: Int64.random(in: -1_000_000_000...1_000_000_000, using: &generator))
            let now = old.timeOrigin + Int64.random(in: -10_000_000...100_000_000, using: &generator)
            let anchor = now + Int64.random(in: -4_000_000...4_000_000, using: &generator)
            let newTempo = Tempo(microsecondsPerBeat: Int64.random(in: 60_060...3_000_000, using: &generator))
            let new = old.changingTempo(to: newTempo, keepingBeatsContinuousAt: anchor, committedAt: now)
            if newTempo == old.tempo {
                XCTAssertEqual(new, old)
                continue
            }
            let bound = Int64((0.5e6 / Double(newTempo.microsecondsPerBeat)).rounded(.toNearestOrAwayFromZero))
            XCTAssertLessThanOrEqual(abs(new.beats(at: anchor).microBeats - old.beats(at: anchor).microBeats), bound)
            XCTAssertTrue(new.supersedes(old))
            XCTAssertEqual(new.beatOrigin, max(old.beats(at: now), Beats(microBeats: old.beatOrigin.microBeats + 1)))
            XCTAssertEqual(new.tempo, newTempo)
        }
    }

    /// A change committed exactly at the time origin (current beat == origin) or before it: the new origin is
    /// the old one plus 1 micro-beat, so receivers still adopt it (6.4).
    func testTempoChangeAtTheOriginStillWinsByOneMicroBeat() {
        let old = Timeline(tempo: Tempo(bpm: 120), beatOrigin: Beats(microBeats: 1_000_000), timeOrigin: 5_000_000)
        let atOrigin = old.changingTempo(
            to: Tempo(bpm: 150), keepingBeatsContinuousAt: 5_000_000, committedAt: 5_000_000)
        XCTAssertEqual(atOrigin.beatOrigin.microBeats, 1_000_001)
        XCTAssertEqual(atOrigin.timeOrigin, 5_000_000)  // + round(1e-6 × 400000 µs) = + 0
        XCTAssertTrue(atOrigin.supersedes(old))
        XCTAssertEqual(atOrigin.beats(at: 5_000_000).microBeats, 1_000_001)
        let before = old.changingTempo(to: Tempo(bpm: 60), keepingBeatsContinuousAt: 4_000_000, committedAt: 4_000_000)
        XCTAssertEqual(before.beatOrigin.microBeats, 1_000_001)
        XCTAssertTrue(before.supersedes(old))
        XCTAssertEqual(before.timeOrigin, 6_000_001)  // where the new 60 bpm line reaches beat 1.000001
        XCTAssertEqual(before.beats(at: 4_000_000), old.beats(at: 4_000_000))  // -1 beat, kept
    }

    func testUnchangedTempoOrLineKeepsTheTimeline() {
        let old = Timeline(tempo: Tempo(bpm: 133), beatOrigin: Beats(microBeats: 4_000_000), timeOrigin: 1_000)
        XCTAssertEqual(
            old.changingTempo(to: Tempo(bpm: 133), keepingBeatsContinuousAt: 9_000_000, committedAt: 9_000_000), old)
        XCTAssertEqual(
            old.replacingLine(
                tempo: old.tempo, passingThrough: old.beats(at: 7_777_777), at: 7_777_777, committedAt: 9_000_000),
            old)
        // Out-of-range tempos are clamped first: 1000 bpm is 999 bpm; 10 bpm is 20 bpm.
        XCTAssertEqual(
            old.changingTempo(to: Tempo(bpm: 1000), keepingBeatsContinuousAt: 0, committedAt: 0).tempo, .linkFastest)
        XCTAssertEqual(
            old.changingTempo(to: Tempo(bpm: 10), keepingBeatsContinuousAt: 0, committedAt: 0).tempo, .linkSlowest)
        let fastest = Timeline(tempo: .linkFastest, beatOrigin: Beats(microBeats: 0), timeOrigin: 0)
        XCTAssertEqual(
            fastest.changingTempo(to: Tempo(bpm: 2000), keepingBeatsContinuousAt: 5, committedAt: 5), fastest)
    }

    // MARK: Received timelines (6.4)

    func testReceivedTimelineReplacesOnlyWithAStrictlyLargerBeatOrigin() {
        // The forged ALIVEs of 6.4, against a running session timeline.
        let current = Timeline(
            tempo: Tempo(bpm: 120), beatOrigin: Beats(microBeats: 11_887_766), timeOrigin: 5_943_443)
        func forged(originDelta: Int64, bpm: Double) -> Timeline {
            Timeline(
                tempo: Tempo(bpm: bpm), beatOrigin: Beats(microBeats: current.beatOrigin.microBeats + originDelta),
                timeOrigin: current.timeOrigin)
        }
        XCTAssertFalse(forged(originDelta: -1, bpm: 77).supersedes(current))
        XCTAssertFalse(forged(originDelta: 0, bpm: 66).supersedes(current))
        XCTAssertTrue(forged(originDelta: 1, bpm: 77).supersedes(current))
        XCTAssertFalse(current.supersedes(current))
    }

    // MARK: Session clock (8.3, 8.4)

    func testFounderGhostClockStartsAtZeroAndPhaseIsAnchoredAtSessionBeatZero() {
        let enable: Int64 = 1_377_197_930
        let clock = LinkSessionClock.founded(
            hostTimeAtEnable: enable, tempo: Tempo(bpm: 120), beatOrigin: Beats(microBeats: 882))
        XCTAssertEqual(clock.ghostTransform, GhostTransform(slope: 1, intercept: -enable))
        XCTAssertEqual(clock.ghostTime(atHostTime: enable), 0)
        XCTAssertEqual(clock.hostTime(atGhostTime: 0), enable)
        XCTAssertEqual(clock.beats(atHostTime: enable).microBeats, 882)
        XCTAssertEqual(clock.beats(atHostTime: enable + 1_000_000).microBeats, 2_000_882)
        // Phase is of the session beat itself, not of beats since the origin.
        XCTAssertEqual(clock.phase(atHostTime: enable + 1_000_000, quantum: Beats(4)).microBeats, 2_000_882)
        XCTAssertEqual(clock.phase(atHostTime: enable + 2_000_000, quantum: Beats(4)).microBeats, 882)
        // The next bar (phase 0, quantum 4) after 1 s is session beat 4, at host enable + 2 s - 441 µs.
        let bar = clock.nextBeats(matchingPhaseOf: Beats(0), quantum: Beats(4), atOrAfterHostTime: enable + 1_000_000)
        XCTAssertEqual(bar, Beats(4))
        XCTAssertEqual(clock.hostTime(atBeats: bar), enable + 2_000_000 - 441)
        XCTAssertEqual(clock.phase(atHostTime: clock.hostTime(atBeats: bar), quantum: Beats(4)).microBeats, 0)
    }

    /// Two peers of one session with different host clocks (a founder, a joiner with the measured offset) read
    /// the same beat and phase at the same instant, also after a tempo change made by either of them.
    func testTwoPeersAgreeOnBeatAndPhaseAcrossATempoChange() {
        let founderHostAtEnable: Int64 = 9_000_000_000
        let joinerMinusFounderHost: Int64 = -4_321_987_654  // the joiner's host clock reads this much less
        var founder = LinkSessionClock.founded(hostTimeAtEnable: founderHostAtEnable, tempo: Tempo(bpm: 120))
        let joinerOffset = founder.ghostTransform.intercept - joinerMinusFounderHost
        var joiner = LinkSessionClock(timeline: founder.timeline, ghostTransform: .measured(offset: joinerOffset))
        let quantum = Beats(4)
        func check(_ founderHost: Int64, file: StaticString = #filePath, line: UInt = #line) {
            let joinerHost = founderHost + joinerMinusFounderHost
            XCTAssertEqual(
                founder.beats(atHostTime: founderHost), joiner.beats(atHostTime: joinerHost), file: file, line: line)
            XCTAssertEqual(
                founder.phase(atHostTime: founderHost, quantum: quantum),
                joiner.phase(atHostTime: joinerHost, quantum: quantum),
                file: file, line: line)
        }
        check(founderHostAtEnable + 10_000_000)
        // The joiner changes tempo to 95.5 bpm 12.3456 s in; the founder adopts the timeline it announces.
        let changeAt = founderHostAtEnable + 12_345_600 + joinerMinusFounderHost
        let before = joiner.beats(atHostTime: changeAt)
        let phaseBefore = joiner.phase(atHostTime: changeAt, quantum: quantum)
        joiner = joiner.changingTempo(
            to: Tempo(bpm: 95.5), keepingBeatsContinuousAtHostTime: changeAt, committedAtHostTime: changeAt)
        XCTAssertEqual(joiner.beats(atHostTime: changeAt), before)
        XCTAssertEqual(joiner.phase(atHostTime: changeAt, quantum: quantum), phaseBefore)
        XCTAssertTrue(joiner.timeline.supersedes(founder.timeline))
        founder.timeline = joiner.timeline
        for offset in stride(from: Int64(12_000_000), through: 60_000_000, by: 777_777) {
            check(founderHostAtEnable + offset)
        }
        XCTAssertEqual(joiner.timeline.tempo.microsecondsPerBeat, 628_272)
    }

    func testForcingBeatsMovesSessionBeatZeroAndSupersedes() {
        let clock = LinkSessionClock.founded(hostTimeAtEnable: 1_000, tempo: Tempo(bpm: 120))
        let forced = clock.forcingBeats(Beats(8), atHostTime: 3_001_000, committedAtHostTime: 2_001_000)
        XCTAssertEqual(forced.beats(atHostTime: 3_001_000), Beats(8))
        XCTAssertTrue(forced.timeline.supersedes(clock.timeline))
        XCTAssertEqual(forced.timeline.beatOrigin, clock.beats(atHostTime: 2_001_000))
        XCTAssertEqual(clock.forcingBeats(Beats(6), atHostTime: 3_001_000, committedAtHostTime: 2_001_000), clock)
    }

    func testRefoundingKeepsTempoAndBeatsAndRestartsGhostAtZero() {
        let clock = LinkSessionClock(
            timeline: Timeline(
                tempo: Tempo(bpm: 100), beatOrigin: Beats(microBeats: 11_887_766), timeOrigin: 5_943_443),
            ghostTransform: .measured(offset: -1_086_986_185))
        let host: Int64 = 1_096_000_000
        let refounded = clock.refounded(atHostTime: host)
        XCTAssertEqual(refounded.ghostTime(atHostTime: host), 0)
        XCTAssertEqual(refounded.timeline.timeOrigin, 0)
        XCTAssertEqual(refounded.timeline.tempo, clock.timeline.tempo)
        XCTAssertEqual(refounded.beats(atHostTime: host), clock.beats(atHostTime: host))
        XCTAssertEqual(
            refounded.beats(atHostTime: host + 600_000).microBeats, clock.beats(atHostTime: host).microBeats + 1_000_000
        )
    }

    /// Absurd values (a hostile peer's timeline) saturate instead of trapping.
    func testAbsurdValuesSaturateInsteadOfTrapping() {
        let hostile = Timeline(
            tempo: Tempo(microsecondsPerBeat: 1), beatOrigin: Beats(microBeats: .max), timeOrigin: .min)
        XCTAssertEqual(hostile.beats(at: .max).microBeats, .max)
        XCTAssertEqual(hostile.time(at: Beats(microBeats: .min)), .min)
        let zeroTempo = Timeline(tempo: Tempo(microsecondsPerBeat: 0), beatOrigin: Beats(microBeats: 0), timeOrigin: 0)
        XCTAssertEqual(zeroTempo.beats(at: 1).microBeats, .max)
        XCTAssertEqual(zeroTempo.beats(at: -1).microBeats, .min)
        XCTAssertEqual(zeroTempo.beats(at: 0).microBeats, 0)  // 0 / 0 is NaN, taken as 0
        _ = hostile.phaseEncodedBeats(at: .max, quantum: Beats(4))
        _ = hostile.time(atPhaseEncodedBeats: Beats(microBeats: .min), quantum: Beats(4))
        XCTAssertEqual(
            Beats(microBeats: .max).nextPhaseMatch(to: Beats(microBeats: 1), quantum: Beats(4)).microBeats, .max)
        XCTAssertEqual(Beats(microBeats: .min).phase(quantum: Beats(microBeats: 3)).microBeats, 1)  // -2^63 ≡ 1 mod 3
        XCTAssertEqual(GhostTransform(slope: 1, intercept: .max).ghost(fromHost: .max), .max)
        XCTAssertEqual(GhostTransform(slope: 0, intercept: 0).host(fromGhost: 5), .max)
        XCTAssertEqual(GhostTransform.founder(hostTimeAtEnable: .min).intercept, .max)
        _ = hostile.changingTempo(to: Tempo(bpm: 120), keepingBeatsContinuousAt: .max, committedAt: .min)
    }
}
