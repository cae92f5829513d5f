// Phase agreement and beat continuity (the Link lab tests' figures) on synthetic sample streams whose answer
// is known: a constant offset, a step, a gap, a tempo change, an offset across the wrap.

import TuttiAnalysis
import XCTest

final class PhaseAgreementTests: XCTestCase {
    /// A stream sampled every `every` ns over [from, to): beat = offset + elapsed beats at `tempo`.
    private func stream(
        _ name: String, from: Int = 0, to: Int = 1_000_000_000, every: Int = 1_000_000, tempo: Double = 120,
        offsetBeats: (Int) -> Double = { _ in 0 }
    ) -> PhaseAgreement.Stream {
        let samples = stride(from: from, to: to, by: every).map { t in
            LinkTimelineSample(time: t, phase: Double(t) * tempo / 60e9 + offsetBeats(t), tempo: tempo)
        }
        return PhaseAgreement.Stream(name: name, samples: samples)
    }

    func testAConstantOffsetIsTheSignedMedianAndEveryPercentile() throws {
        // 0.001 beat at 120 bpm = 500 us; b's samples fall between a's (offset 0.3 ms), extrapolated exactly.
        let a = stream("a", offsetBeats: { _ in 0.001 })
        let b = stream("b", from: 300_000, to: 1_000_300_000)
        let result = try PhaseAgreement.measure([a, b])
        XCTAssertEqual(result.pairs.map { "\($0.first)-\($0.second)" }, ["a-b"])
        let figures = result.all
        XCTAssertEqual(result.windowStart, 300_000)
        XCTAssertEqual(result.windowEnd, 999_000_000)
        XCTAssertEqual(figures.n, result.gridInstants)
        XCTAssertEqual(figures.n, 999)
        for value in [figures.signedMedianMicroseconds, figures.medianMicroseconds, figures.p99Microseconds, figures.maxMicroseconds] {
            XCTAssertEqual(value ?? 0, 500, accuracy: 1e-6)
        }
        XCTAssertEqual(figures.maxBeats ?? 0, 0.001, accuracy: 1e-12)
        // The other way round the sign flips, the magnitudes do not.
        let reversed = try PhaseAgreement.measure([b, a]).all
        XCTAssertEqual(reversed.signedMedianMicroseconds ?? 0, -500, accuracy: 1e-6)
        XCTAssertEqual(reversed.medianMicroseconds ?? 0, 500, accuracy: 1e-6)
    }

    func testAnOffsetAcrossTheWrapIsTheShortWayRound() throws {
        // a is 3.999 beats ahead of b with quantum 4: the same as 0.001 behind.
        let a = stream("a", offsetBeats: { _ in 3.999 })
        let b = stream("b")
        var options = PhaseAgreement.Options()
        options.quantum = 4
        let figures = try PhaseAgreement.measure([a, b], options: options).all
        XCTAssertEqual(figures.signedMedianMicroseconds ?? 0, -500, accuracy: 1e-6)
        XCTAssertEqual(PhaseAgreement.wrap(2, 4), -2)
        XCTAssertEqual(PhaseAgreement.wrap(-2.5, 4), 1.5)
        XCTAssertEqual(PhaseAgreement.wrap(-2, 4), -2)
    }

    func testAGapSkipsTheInstantsBetweenItsSamples() throws {
        // b has no samples in [400, 420) ms: the 20 ms gap is wider than 5 ms, so those instants are skipped.
        var b = stream("b")
        b.samples.removeAll { $0.time > 400_000_000 && $0.time < 420_000_000 }
        let result = try PhaseAgreement.measure([stream("a"), b])
        XCTAssertEqual(result.gridInstants, 999)
        XCTAssertEqual(result.all.n, 999 - 20)
        XCTAssertEqual(result.all.maxMicroseconds ?? 1, 0, accuracy: 1e-6)
        var wide = PhaseAgreement.Options()
        wide.maxGap = 50e6
        XCTAssertEqual(try PhaseAgreement.measure([stream("a"), b], options: wide).all.n, 999)
    }

    func testATempoChangeSkipsTheInstantsAcrossIt() throws {
        // b changes from 120 to 90 bpm at 500 ms (its phase continuous); a stays at 120.
        let samples = stride(from: 0, to: 1_000_000_000, by: 1_000_000).map { t in
            t < 500_000_000
                ? LinkTimelineSample(time: t, phase: Double(t) * 120 / 60e9, tempo: 120)
                : LinkTimelineSample(time: t, phase: 1 + Double(t - 500_000_000) * 90 / 60e9, tempo: 90)
        }
        let b = PhaseAgreement.Stream(name: "b", samples: samples)
        let result = try PhaseAgreement.measure([stream("a"), b])
        // Instants in (499, 500) ms see two tempos: the one at 499 ms is skipped.
        XCTAssertEqual(result.all.n, 998)
        var settled = PhaseAgreement.Options()
        settled.settledOnly = true
        let onlySettled = try PhaseAgreement.measure([stream("a"), b], options: settled)
        XCTAssertEqual(onlySettled.all.n, 499)
        // From 500 ms on the tempos differ (skipped as unsettled); at 499 ms b is unknown (skipped for the pair).
        XCTAssertEqual(onlySettled.skippedUnsettled, 499)
        XCTAssertEqual(onlySettled.all.maxMicroseconds ?? 1, 0, accuracy: 1e-6)
    }

    func testAStepSplitsTheErrorIntoSegments() throws {
        // The offset steps from 0 to 0.0002 beat (100 us) at 500 ms and stays there.
        let a = stream("a", offsetBeats: { $0 >= 500_000_000 ? 0.0002 : 0 })
        var options = PhaseAgreement.Options()
        options.stepThreshold = 50
        let figures = try PhaseAgreement.measure([a, stream("b")], options: options).pairs[0].figures
        let segments = try XCTUnwrap(figures.segments)
        XCTAssertEqual(segments.count, 2)
        XCTAssertEqual(segments[0].start, 0)
        XCTAssertEqual(segments[0].end, 499_000_000)
        XCTAssertEqual(segments[1].start, 500_000_000)
        // 5 ms guards on each side of the step: 5 instants of each segment are left out.
        XCTAssertEqual(segments[0].n, 500 - 5)
        XCTAssertEqual(segments[1].n, 499 - 5)
        XCTAssertEqual(segments[0].signedMedianMicroseconds ?? 1, 0, accuracy: 1e-6)
        XCTAssertEqual(segments[1].signedMedianMicroseconds ?? 0, 100, accuracy: 1e-6)
        XCTAssertEqual(segments[1].spreadMaxMicroseconds ?? 1, 0, accuracy: 1e-6)
        // A blip shorter than the confirmation does not split.
        XCTAssertEqual(PhaseAgreement.steps([0, 0, 0, 100, 100, 0, 0, 0, 0, 0], threshold: 50), [])
        XCTAssertEqual(PhaseAgreement.steps([0, 0, 0, 100, 100, 100, 100, 100, 100, 100], threshold: 50), [3])
    }

    func testPercentilesAreNearestRank() throws {
        let figures = PhaseAgreement.Figures(beats: (1...100).map { -Double($0) / 1e6 }, microseconds: (1...100).map { -Double($0) })
        XCTAssertEqual(figures.signedMedianMicroseconds, -51)
        XCTAssertEqual(figures.medianMicroseconds, 50)
        XCTAssertEqual(figures.p95Microseconds, 95)
        XCTAssertEqual(figures.p99Microseconds, 99)
        XCTAssertEqual(figures.maxMicroseconds, 100)
        XCTAssertEqual(figures.meanMicroseconds, -50.5)
        XCTAssertNil(PhaseAgreement.Figures(beats: [], microseconds: []).medianMicroseconds)
    }

    func testStreamsAreNamedAndWideBracketsDropped() throws {
        let sample = LinkTimelineSample(time: 2, phase: 0, tempo: 120)
        let earlier = LinkTimelineSample(time: 1, phase: 0, tempo: 120)
        let lines = [
            PhaseAgreement.Line(file: "x.log", source: "A", sample: sample, bracket: 10_000),
            PhaseAgreement.Line(file: "x.log", source: "A", sample: earlier, bracket: 90_000),
            PhaseAgreement.Line(file: "x.log", source: "B", sample: sample, bracket: nil),
            PhaseAgreement.Line(file: "y.log", source: "B", sample: earlier, bracket: nil),
            PhaseAgreement.Line(file: "y.log", source: "B", sample: sample, bracket: nil),
            PhaseAgreement.Line(file: "z.log", source: nil, sample: sample, bracket: nil),
        ]
        let streams = PhaseAgreement.streams(lines, maxBracket: 50_000)
        XCTAssertEqual(streams.map(\.name), ["A", "x.log:B", "y.log:B", "z.log"])
        XCTAssertEqual(streams[0].droppedWideBracket, 1)
        XCTAssertEqual(streams[2].samples.map(\.time), [1, 2])
        XCTAssertThrowsError(try PhaseAgreement.measure(Array(streams.prefix(1))))
        var options = PhaseAgreement.Options()
        options.reference = "nobody"
        XCTAssertThrowsError(try PhaseAgreement.measure(streams, options: options))
    }

    func testBeatContinuityFindsTheLargestJump() {
        // 120 bpm, a jump of +0.0001 beat (50 us) at 300 ms, and a 10 ms gap after 600 ms.
        let samples = stride(from: 0, to: 1_000_000_000, by: 1_000_000).filter { !(600_000_000 < $0 && $0 < 610_000_000) }.map { t in
            LinkTimelineSample(time: t, phase: Double(t) * 120 / 60e9 + (t >= 300_000_000 ? 0.0001 : 0), tempo: 120)
        }
        let continuity = BeatContinuity(samples.reversed())
        XCTAssertEqual(continuity.n, 991)
        XCTAssertEqual(continuity.worstJumpMicroseconds, 50, accuracy: 1e-6)
        XCTAssertEqual(continuity.worstJumpTime, 300_000_000)
        XCTAssertEqual(continuity.longestGap, 10_000_000)
        XCTAssertEqual(continuity.tempos, [120])
    }
}
