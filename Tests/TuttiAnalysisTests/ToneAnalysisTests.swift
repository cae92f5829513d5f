import Foundation
import TuttiAnalysis
import XCTest

/// Tone analysis on synthetic recordings whose flaws are known exactly.
final class ToneAnalysisTests: XCTestCase {
    /// `frames` of a sine at `frequency`, starting a quarter of π into its phase (so no sample is silent at
    /// the edges), amplitude 0.5.
    private func tone(frequency: Double = 1_000, frames: Int, sampleRate: Int = 48_000) -> [Float] {
        (0..<frames).map { Float(0.5 * sin(2 * Double.pi * frequency * Double($0) / Double(sampleRate) + Double.pi / 4)) }
    }

    private let silence = { (count: Int) in [Float](repeating: 0, count: count) }

    func testCleanToneHasItsFrequencyAndNoFlaws() {
        let samples = silence(1_000) + tone(frames: 96_000) + silence(500)
        let report = ToneAnalysis.analyze(samples, sampleRate: 48_000)
        XCTAssertEqual(report.frequency, 1_000, accuracy: 0.1)
        XCTAssertEqual(report.gaps, [])
        XCTAssertEqual(report.gapFrames, 0)
        XCTAssertEqual(report.missingPackets(packetFrames: 64), 0)
        XCTAssertEqual(report.discontinuities, 0)
        XCTAssertEqual(report.activeStart, 1_000)
        XCTAssertEqual(report.activeEnd, 96_999)
        XCTAssertEqual(report.activeSeconds, 2, accuracy: 1e-9)
        XCTAssertEqual(report.frames, 97_500)
        XCTAssertEqual(report.rms, 0.5 / 2.0.squareRoot(), accuracy: 1e-3)
        XCTAssertEqual(report.peak, 0.5, accuracy: 1e-6)
    }

    func testOtherFrequenciesAndRates() {
        for (frequency, rate) in [(440.0, 44_100), (997.0, 48_000), (3_000.0, 96_000), (100.0, 8_000)] {
            let report = ToneAnalysis.analyze(tone(frequency: frequency, frames: rate, sampleRate: rate), sampleRate: rate)
            XCTAssertEqual(report.frequency, frequency, accuracy: 0.1, "\(frequency) Hz at \(rate)")
            XCTAssertEqual(report.discontinuities, 0, "\(frequency) Hz at \(rate)")
        }
    }

    /// Concealment that slows the waveform down for a few milliseconds now and then (as a codec's loss
    /// concealment can) shifts a zero-crossing count; the phase-slope refinement keeps the tone's pitch.
    func testConcealedStretchesDoNotBendTheFrequency() {
        var samples = tone(frequency: 1_000.3, frames: 8 * 48_000)
        // Every 100 ms, 5 ms at 900 Hz (in phase at its start), as if a loss were concealed off-pitch.
        var phaseDrift = 0.0
        for stretch in stride(from: 2_400, to: samples.count - 480, by: 4_800) {
            for offset in 0..<240 {
                let index = stretch + offset
                let nominal = 2 * Double.pi * 1_000.3 * Double(index) / 48_000 + Double.pi / 4
                phaseDrift -= 2 * Double.pi * 100.3 / 48_000
                samples[index] = Float(0.5 * sin(nominal + phaseDrift))
            }
            for index in (stretch + 240)..<(stretch + 4_800) where index < samples.count {
                samples[index] = Float(0.5 * sin(2 * Double.pi * 1_000.3 * Double(index) / 48_000 + Double.pi / 4 + phaseDrift))
            }
        }
        let report = ToneAnalysis.analyze(samples, sampleRate: 48_000)
        XCTAssertEqual(report.frequency, 1_000.3, accuracy: 0.02)
        // Counting cycles alone is pulled down by the slow stretches (half a cycle lost every 100 ms).
        let rising = (1..<samples.count).filter { samples[$0 - 1] < 0 && samples[$0] >= 0 }
        let counted = Double(rising.count - 1) * 48_000 / Double(rising.last! - rising.first!)
        XCTAssertLessThan(counted, 1_000.3 - 4)
    }

    func testSilentGapsAreFoundAndCountedAsPackets() {
        var samples = tone(frames: 96_000)
        // Gaps start on multiples of 24 frames, away from the tone's own zero crossings (at 24k − 6).
        let gaps = [(start: 10_008, length: 64), (start: 30_000, length: 64), (start: 50_016, length: 128)]
        for gap in gaps { samples.replaceSubrange(gap.start..<(gap.start + gap.length), with: silence(gap.length)) }
        let report = ToneAnalysis.analyze(samples, sampleRate: 48_000)
        XCTAssertEqual(report.gaps.map(\.start), gaps.map(\.start))
        XCTAssertEqual(report.gaps.map(\.length), gaps.map(\.length))
        XCTAssertEqual(report.gapFrames, 256)
        XCTAssertEqual(report.missingPackets(packetFrames: 64), 4)
        XCTAssertEqual(report.missingPackets(packetFrames: 128), 3)  // each gap is at least one packet
        // The abrupt edges lie inside the frames excluded around each gap.
        XCTAssertEqual(report.discontinuities, 0)
        XCTAssertEqual(report.frequency, 1_000, accuracy: 0.5)
    }

    func testShortSilencesAreNotGaps() {
        var samples = tone(frames: 48_000)
        samples.replaceSubrange(20_000..<20_007, with: silence(7))
        samples.replaceSubrange(30_000..<30_008, with: silence(8))
        let report = ToneAnalysis.analyze(samples, sampleRate: 48_000)
        XCTAssertEqual(report.gaps.map(\.start), [30_000])
        XCTAssertEqual(report.gaps.map(\.length), [8])
        // The 7-frame dropout is no gap, but it is a flaw.
        XCTAssertGreaterThanOrEqual(report.discontinuities, 1)
    }

    func testOneSampleClickIsADiscontinuity() {
        var samples = tone(frames: 96_000)
        samples[40_000] += 0.2
        let report = ToneAnalysis.analyze(samples, sampleRate: 48_000)
        XCTAssertGreaterThanOrEqual(report.discontinuities, 1)
        XCTAssertLessThanOrEqual(report.discontinuities, 3)  // the sample and the two it feeds into the recurrence
        XCTAssertEqual(report.gaps, [])
        XCTAssertEqual(report.frequency, 1_000, accuracy: 0.1)
    }

    func testStepInPhaseIsADiscontinuity() {
        // Skip 10 samples of the tone (a splice): the waveform jumps once.
        let full = tone(frames: 96_010)
        let samples = Array(full[0..<48_000] + full[48_010...])
        let report = ToneAnalysis.analyze(samples, sampleRate: 48_000)
        XCTAssertGreaterThanOrEqual(report.discontinuities, 1)
        XCTAssertEqual(report.gaps, [])
    }

    func testSilenceHasNoTone() {
        let report = ToneAnalysis.analyze(silence(48_000), sampleRate: 48_000)
        XCTAssertNil(report.activeStart)
        XCTAssertNil(report.activeEnd)
        XCTAssertEqual(report.frequency, 0)
        XCTAssertEqual(report.activeSeconds, 0)
        XCTAssertEqual(report.gaps, [])
        XCTAssertEqual(report.discontinuities, 0)
    }

    // MARK: compare()

    /// 997 Hz at 48 kHz only repeats after 48 000 samples, so a 64-sample window matches one place only.
    private lazy var reference = tone(frequency: 997, frames: 48_000)

    func testExactCopyIsAlignedWithNoDifferences() throws {
        let recording = silence(700) + reference + silence(300)
        let result = try XCTUnwrap(ToneAnalysis.compare(recording: recording, reference: reference))
        // The comparison starts `skipFrames` (480) after the recording's first sound, which is reference frame 0.
        XCTAssertEqual(result.offset, 480)
        XCTAssertEqual(result.differing, 0)
        // From there to the end of the sound, less the 256-frame tail.
        XCTAssertEqual(result.compared, 48_000 - 480 - 256)
    }

    func testRecordingThatStartsLateInTheReference() throws {
        let recording = silence(123) + Array(reference[5_000..<40_000])
        let result = try XCTUnwrap(ToneAnalysis.compare(recording: recording, reference: reference))
        XCTAssertEqual(result.offset, 5_000 + 480)
        XCTAssertEqual(result.differing, 0)
        XCTAssertEqual(result.compared, 35_000 - 480 - 256)
        // The alignment holds sample for sample over the compared span.
        let windowStart = 123 + 480
        XCTAssertEqual(Array(recording[windowStart..<(windowStart + 100)]), Array(reference[result.offset..<(result.offset + 100)]))
    }

    func testChangedSamplesAreCounted() throws {
        var recording = silence(700) + reference + silence(300)
        // Ten changes inside the compared span, one in the excluded tail, one before the window.
        for index in stride(from: 10_000, to: 20_000, by: 1_000) { recording[index] += 0.001 }
        recording[700 + 48_000 - 10] += 0.001
        recording[700 + 100] += 0.001
        let result = try XCTUnwrap(ToneAnalysis.compare(recording: recording, reference: reference))
        XCTAssertEqual(result.offset, 480)
        XCTAssertEqual(result.differing, 10)
    }

    func testNoAlignmentForAnotherSignal() {
        XCTAssertNil(ToneAnalysis.compare(recording: tone(frequency: 440, frames: 48_000), reference: reference))
        XCTAssertNil(ToneAnalysis.compare(recording: silence(48_000), reference: reference))
        // Too short to hold the window after the skipped fade-in.
        XCTAssertNil(ToneAnalysis.compare(recording: Array(reference.prefix(500)), reference: reference))
    }
}
