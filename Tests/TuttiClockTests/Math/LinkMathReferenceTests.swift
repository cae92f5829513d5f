import TuttiClock
import XCTest

/// Every reference value of the protocol reference's math sections (8.1, 8.2, 8.4), the tempo changes and
/// start/stop values seen on the wire (6.4, 6.5), and the measurement example of 5.4.
final class LinkMathReferenceTests: XCTestCase {
    private func beats(_ value: Double) -> Beats { Beats(value) }

    // MARK: 8.1 units

    func testTempoFromBPMMatchesReferenceValues() {
        let expected: [(Double, Int64)] = [
            (120, 500_000), (90, 666_667), (140, 428_571), (133, 451_128), (111, 540_541), (95.5, 628_272),
            (150, 400_000), (999, 60_060), (20, 3_000_000),
        ]
        for (bpm, micros) in expected {
            XCTAssertEqual(Tempo(bpm: bpm).microsecondsPerBeat, micros, "\(bpm) bpm")
        }
    }

    func testTempoReadsBackAsEveryPeerSeesIt() {
        let expected: [(Int64, Double)] = [
            (666_667, 89.99995500002), (428_571, 140.00014000014), (451_128, 132.9999468000213),
            (628_272, 95.50003820001528), (400_000, 150), (500_000, 120), (3_000_000, 20),
        ]
        for (micros, bpm) in expected {
            XCTAssertEqual(Tempo(microsecondsPerBeat: micros).bpm, bpm, accuracy: 1e-10, "\(micros) µs/beat")
        }
        XCTAssertEqual(Tempo(microsecondsPerBeat: 400_000).bpm, 150)  // exact
        XCTAssertEqual(Tempo(microsecondsPerBeat: 60_060).bpm, 999.000999000999, accuracy: 1e-9)
    }

    func testTempoClampToLinkRange() {
        // 999 bpm reads back as 999.000999, clamps to 999 and converts back to the same 60060.
        XCTAssertEqual(Tempo(microsecondsPerBeat: 60_060).clampedToLinkRange.microsecondsPerBeat, 60_060)
        XCTAssertEqual(Tempo(microsecondsPerBeat: 3_000_000).clampedToLinkRange.microsecondsPerBeat, 3_000_000)
        XCTAssertEqual(Tempo(bpm: 1000).clampedToLinkRange, Tempo.linkFastest)
        XCTAssertEqual(Tempo(microsecondsPerBeat: 60_059).clampedToLinkRange, Tempo.linkFastest)
        XCTAssertEqual(Tempo(bpm: 19.99).clampedToLinkRange, Tempo.linkSlowest)
        XCTAssertEqual(Tempo(microsecondsPerBeat: 3_000_001).clampedToLinkRange, Tempo.linkSlowest)
        XCTAssertEqual(Tempo(microsecondsPerBeat: 0).clampedToLinkRange, Tempo.linkFastest)
        XCTAssertEqual(Tempo(microsecondsPerBeat: -5).clampedToLinkRange, Tempo.linkSlowest)
        XCTAssertEqual(Tempo.linkFastest.microsecondsPerBeat, Tempo(bpm: 999).microsecondsPerBeat)
        XCTAssertEqual(Tempo.linkSlowest.microsecondsPerBeat, Tempo(bpm: 20).microsecondsPerBeat)
        // Every tempo in range is its own clamp (so a received in-range tempo is never altered).
        for micros in Int64(60_060)...3_000_000
        where Tempo(microsecondsPerBeat: micros).clampedToLinkRange.microsecondsPerBeat != micros {
            XCTFail("\(micros) µs/beat changed by the clamp")
            break
        }
    }

    // MARK: 8.2 timeline

    func testTimelineWorkedExampleFromCapture() {
        let timeline = Timeline(
            tempo: Tempo(microsecondsPerBeat: 400_000), beatOrigin: Beats(microBeats: 17_492_028), timeOrigin: 8_980_643
        )
        XCTAssertEqual(timeline.beats(at: 11_009_657).microBeats, 22_564_563)
        XCTAssertEqual(timeline.time(at: Beats(microBeats: 22_564_563)), 11_009_657)
        // 6.5: the second start/stop value Link put on the wire for the same timeline.
        XCTAssertEqual(timeline.beats(at: 13_000_269).microBeats, 27_541_093)
        XCTAssertEqual(timeline.time(at: Beats(microBeats: 27_541_093)), 13_000_269)
        XCTAssertEqual(timeline.beats(at: 8_980_643), timeline.beatOrigin)
        XCTAssertEqual(timeline.time(at: timeline.beatOrigin), 8_980_643)
    }

    func testStartStopStateFromCaptureEqualsTimelineAtTimestamp() {
        let timeline = Timeline(
            tempo: Tempo(microsecondsPerBeat: 400_000), beatOrigin: Beats(microBeats: 17_492_028), timeOrigin: 8_980_643
        )
        // A founder (intercept -hostAtEnable) sets playing "now": beats = timeline at the timestamp.
        let clock = LinkSessionClock(timeline: timeline, ghostTransform: .founder(hostTimeAtEnable: 1_377_197_930))
        let state = clock.startStop(
            isPlaying: true, atHostTime: 1_377_197_930 + 11_009_657, committedAtHostTime: 1_377_197_930 + 11_009_657)
        XCTAssertEqual(
            state, StartStopState(isPlaying: true, beats: Beats(microBeats: 22_564_563), timestamp: 11_009_657))
        XCTAssertEqual(clock.hostTime(of: state), 1_377_197_930 + 11_009_657)
    }

    // MARK: 6.4 tempo changes seen on the wire

    func testTempoChangeTo140FromCaptureIsReproducedExactly() {
        // Capture 1: the 100 bpm timeline B announced (#378), then A set 140 bpm at ghost 8000001 (#458).
        let at100 = Timeline(
            tempo: Tempo(microsecondsPerBeat: 600_000), beatOrigin: Beats(microBeats: 11_887_766), timeOrigin: 5_943_443
        )
        let at140 = at100.changingTempo(
            to: Tempo(bpm: 140), keepingBeatsContinuousAt: 8_000_001, committedAt: 8_000_001)
        XCTAssertEqual(
            at140,
            Timeline(
                tempo: Tempo(microsecondsPerBeat: 428_571), beatOrigin: Beats(microBeats: 15_315_363),
                timeOrigin: 8_000_001))
        XCTAssertTrue(at140.supersedes(at100))
    }

    func testTempoChangeTo100FromCaptureIsWithinTwoMicroBeats() {
        // Capture 1 #378: the session ran (500000, 882, 0); B set 100 bpm and announced (600000, 11887766,
        // 5943443). The session line gives 11887768 there; Link's app-timeline round trip lost 2 micro-beats.
        let at120 = Timeline(
            tempo: Tempo(microsecondsPerBeat: 500_000), beatOrigin: Beats(microBeats: 882), timeOrigin: 0)
        XCTAssertEqual(at120.beats(at: 5_943_443).microBeats, 11_887_768)
        let at100 = at120.changingTempo(
            to: Tempo(bpm: 100), keepingBeatsContinuousAt: 5_943_443, committedAt: 5_943_443)
        XCTAssertEqual(at100.tempo.microsecondsPerBeat, 600_000)
        XCTAssertEqual(at100.timeOrigin, 5_943_443)
        XCTAssertEqual(at100.beatOrigin.microBeats, 11_887_768)
        XCTAssertLessThanOrEqual(abs(at100.beatOrigin.microBeats - 11_887_766), 2)
    }

    // MARK: 8.4 phase and quantum, the whole reference table

    func testPhaseReferenceValues() {
        XCTAssertEqual(beats(-0.1).phase(quantum: beats(1)), beats(0.9))
        XCTAssertEqual(beats(-2.3).phase(quantum: beats(1)), beats(0.7))
        XCTAssertEqual(beats(-9.5).phase(quantum: beats(2.3)), beats(2.0))
        XCTAssertEqual(beats(-1).phase(quantum: beats(1)), beats(0))
    }

    func testNextPhaseMatchReferenceValues() {
        XCTAssertEqual(beats(2.3).nextPhaseMatch(to: beats(-0.1), quantum: beats(2)), beats(3.9))
        XCTAssertEqual(beats(-9.5).nextPhaseMatch(to: beats(0.1), quantum: beats(2)), beats(-7.9))
        XCTAssertEqual(beats(-2.3).nextPhaseMatch(to: beats(0.1), quantum: beats(9.5)), beats(0.1))
    }

    func testPhaseEncodedBeatReferenceValuesAndTheirInverse() {
        let at120 = Timeline(tempo: Tempo(bpm: 120), beatOrigin: beats(1), timeOrigin: 0)
        let at60 = Timeline(tempo: Tempo(bpm: 60), beatOrigin: beats(-9.5), timeOrigin: 2_000_000)
        let table: [(Timeline, Int64, Double, Double, String)] = [
            (at120, 1_000_000, 2.2, 2.0, "120 bpm, t = 1 s, q = 2.2"),
            (at120, 1_000_000, 1.8, 3.8, "120 bpm, t = 1 s, q = 1.8"),
            (at120, 1_000_000, 2, 2.0, "120 bpm, t = 1 s, q = 2 (half-way goes down)"),
            (at120, -2_000_000, 4, -4.0, "120 bpm, t = -2 s, q = 4"),
            (at120, -3_000_000, 4, -6.0, "120 bpm, t = -3 s, q = 4"),
            (at120, 3_200_000, 3, 6.4, "120 bpm, t = 3.2 s, q = 3"),
            (at60, 0, 3, -11.0, "60 bpm, t = 0, q = 3"),
            (at60, 1_500_000, 2.4, -10.1, "60 bpm, t = 1.5 s, q = 2.4"),
        ]
        for (timeline, time, quantum, expected, name) in table {
            let encoded = timeline.phaseEncodedBeats(at: time, quantum: beats(quantum))
            XCTAssertEqual(encoded, beats(expected), name)
            XCTAssertEqual(
                timeline.time(atPhaseEncodedBeats: encoded, quantum: beats(quantum)), time, "inverse, " + name)
        }
    }

    func testPhaseWithoutQuantum() {
        XCTAssertEqual(beats(-3.7).phase(quantum: beats(0)), beats(0))
        XCTAssertEqual(beats(-3.7).nextPhaseMatch(to: beats(1.2), quantum: beats(0)), beats(-3.7))
        XCTAssertEqual(beats(-3.7).closestPhaseMatch(to: beats(1.2), quantum: beats(0)), beats(-3.7))
        let timeline = Timeline(tempo: Tempo(bpm: 120), beatOrigin: beats(1), timeOrigin: 0)
        XCTAssertEqual(timeline.phaseEncodedBeats(at: 1_000_000, quantum: beats(0)), beats(3))
        XCTAssertEqual(timeline.time(atPhaseEncodedBeats: beats(3), quantum: beats(0)), 1_000_000)
    }

    // MARK: 5.4 measurement example

    func testMeasurementWorkedExampleFromCapture() {
        let session = SessionID(rawValue: 0x4242_4242_4242_4242)
        var measurement = GhostClockMeasurement(targetSession: session)
        XCTAssertEqual(
            measurement.start(now: 1_086_986_769),
            [.sendPing(hostTime: 1_086_986_769, previousGhostTime: nil), .armTimer(deadline: 1_087_036_769)])
        XCTAssertEqual(
            measurement.receivedPong(
                sessionID: session, ghostTime: 1004, previousGhostTime: nil, hostTimeEchoed: 1_086_986_769,
                now: 1_086_987_608),
            [.sendPing(hostTime: 1_086_987_608, previousGhostTime: 1004), .armTimer(deadline: 1_087_037_608)])
        XCTAssertEqual(
            measurement.receivedPong(
                sessionID: session, ghostTime: 1645, previousGhostTime: 1004, hostTimeEchoed: 1_086_987_608,
                now: 1_086_987_686),
            [.sendPing(hostTime: 1_086_987_686, previousGhostTime: 1645), .armTimer(deadline: 1_087_037_686)])
        XCTAssertEqual(
            measurement.samples,
            [
                GhostClockSample(offset: -1_086_986_184.5, roundTrip: 839, kind: .pingRoundTrip),
                GhostClockSample(offset: -1_086_986_002, roundTrip: 78, kind: .pingRoundTrip),
                GhostClockSample(offset: -1_086_986_283.5, roundTrip: 641, kind: .responderInterval),
            ])
        // Median -1086986184.5, rounded half away from zero.
        XCTAssertEqual(measurement.linkOffset, -1_086_986_185)
    }
}
