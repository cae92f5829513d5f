// The lab benchmark's figures (Percentile, SeriesSummary, ToneDamage, ImpulseDelays, CounterSteps,
// JackTripStatusLine), each on a signal or a series whose answer is known.

import Foundation
import TuttiAnalysis
import XCTest

final class BenchAnalysisTests: XCTestCase {
    func testNearestRankPercentileOnSmallSeries() {
        XCTAssertNil(Percentile.nearestRank(50, of: []))
        XCTAssertEqual(Percentile.nearestRank(50, of: [7]), 7)
        let values = (1...10).map(Double.init).shuffled()
        XCTAssertEqual(Percentile.nearestRank(0, of: values), 1)
        XCTAssertEqual(Percentile.nearestRank(10, of: values), 1)
        XCTAssertEqual(Percentile.nearestRank(11, of: values), 2)
        XCTAssertEqual(Percentile.nearestRank(50, of: values), 5)
        XCTAssertEqual(Percentile.nearestRank(95, of: values), 10)
        XCTAssertEqual(Percentile.nearestRank(100, of: values), 10)
        XCTAssertEqual(Percentile.nearestRank(250, of: values), 10)
    }

    func testSummaryOfASeriesAndOfNone() throws {
        let summary = SeriesSummary((1...100).map(Double.init).reversed())
        XCTAssertEqual(summary.n, 100)
        XCTAssertEqual([summary.min, summary.median, summary.p95, summary.p99, summary.max], [1, 50, 95, 99, 100])
        XCTAssertEqual(summary.mean, 50.5)
        let empty = String(decoding: try JSONEncoder().encode(SeriesSummary([])), as: UTF8.self)
        XCTAssertTrue(empty.contains("\"median\":null") && empty.contains("\"n\":0"), empty)
    }

    static func sine(_ frames: Int, hz: Double = 1000, amplitude: Float = 0.5) -> [Float] {
        (0..<frames).map { amplitude * Float(sin(2 * Double.pi * hz * Double($0) / 48000)) }
    }

    func testACleanSineHasNoDamagedBlock() throws {
        let damage = ToneDamage.measure(Self.sine(48000), sampleRate: 48000, frequency: 1000, from: 0, to: 48000)
        XCTAssertEqual(damage.toneBlocks, 750)
        XCTAssertEqual(damage.damagedBlocks, 0)
        XCTAssertEqual(try XCTUnwrap(damage.toneAmplitude), 0.5, accuracy: 1e-4)
    }

    func testAGapAndAClickDamageTheirBlocks() {
        var tone = Self.sine(48000)
        for i in 6400..<6464 { tone[i] = 0 }  // block 100 silent
        tone[12_832] += 0.3  // a click in block 200
        let damage = ToneDamage.measure(tone, sampleRate: 48000, frequency: 1000, from: 0, to: 48000)
        XCTAssertEqual(damage.damagedBlocks, 2)
        XCTAssertEqual(damage.damagedMs, Double(2 * 64) * 1000 / 48000)
    }

    func testNoWholeBlockGivesNoFigures() {
        let damage = ToneDamage.measure(Self.sine(100), sampleRate: 48000, frequency: 1000, from: 50, to: 100)
        XCTAssertEqual(damage, ToneDamage.measure([], sampleRate: 48000, frequency: 1000, from: 0, to: 0))
        XCTAssertEqual(damage.toneBlocks, 0)
        XCTAssertNil(damage.damagedBlocks)
    }

    func testImpulsesAreFoundAtTheirPeakAndMissingOnesCounted() {
        var clicks = [Float](repeating: 0, count: 4000)
        clicks[130] = 0.4  // impulse 0 (played at 100): spread, its peak two frames later
        clicks[132] = 0.9
        clicks[1140] = -0.8  // impulse 1 (played at 1100)
        // impulse 2 (played at 2100) never returns; impulse 3 (3100) is cut off by the end of the recording
        let delays = ImpulseDelays(recording: clicks, firstFrame: 100, intervalFrames: 1000)
        XCTAssertEqual(delays.delayFrames, [32, 40])
        XCTAssertEqual(delays.missing, 1)
    }

    func testCounterIncreaseAcrossAReset() {
        XCTAssertEqual(CounterSteps.increase([]), 0)
        XCTAssertEqual(CounterSteps.increase([5]), 0)
        XCTAssertEqual(CounterSteps.increase([5, 7, 10]), 5)
        XCTAssertEqual(CounterSteps.increase([5, 7, 2, 4]), 6)  // reset after 7: the 2 counts, then 2 more
    }

    func testJackTripStatusLines() throws {
        let line = try XCTUnwrap(
            JackTripStatusLine("2024-01-01 12:00:00 peer send: 1/2 recv: 3/4 prot: 5/6/7 tot: 800 sync: 0 skew: 0 autoq: 0"))
        XCTAssertEqual(line.send, [1, 2])
        XCTAssertEqual(line.receive, [3, 4])
        XCTAssertEqual(line.protocolCounters, [5, 6, 7])
        XCTAssertEqual(line.total, 800)
        XCTAssertNil(JackTripStatusLine("JackTrip: starting"))
        XCTAssertNil(JackTripStatusLine("x send: 1/2 recv: 3/x prot: 5/6/7 tot: 800"))
        XCTAssertNil(JackTripStatusLine("x send: 1/2 recv: 3/4 prot: 5/6/7 tot:"))
    }
}
