import Foundation
import TuttiAnalysis
import TuttiResample
import TuttiTesting
import XCTest

/// `.nearUnityDrift` with the recommended library (Tutti's polyphase sinc, half-length 16): the `Resampler`
/// contract for a receiver's same-rate drift compensation.
final class NearUnityResamplerTests: XCTestCase {
    let periodFrames = 64
    let rate = 48_000
    let mode = Resampler.Mode.nearUnityDrift(maximumCorrectionPPM: 1_000)

    func makeResampler(channels: Int = 2) throws -> Resampler {
        try Resampler(
            inputRate: rate, outputRate: rate, channels: channels, maximumOutputFrames: periodFrames, mode: mode)
    }

    /// A receiver gets the near-unity engine for equal rates, libsamplerate for a real conversion; the near-unity
    /// mode refuses unequal rates with a typed error.
    func testDriftCompensationPicksNearUnityOnlyForEqualRates() throws {
        XCTAssertEqual(
            Resampler.Mode.driftCompensation(inputRate: 48_000, outputRate: 48_000, maximumCorrectionPPM: 1_000),
            .nearUnityDrift(maximumCorrectionPPM: 1_000, library: NearUnityLibrary.recommended))
        XCTAssertEqual(
            Resampler.Mode.driftCompensation(inputRate: 44_100, outputRate: 48_000, maximumCorrectionPPM: 1_000),
            .lowLatencyVariableRatio(maximumCorrectionPPM: 1_000))
        XCTAssertEqual(try makeResampler().engine, "Tutti polyphase sinc, half-length 16")
        do {
            _ = try Resampler(inputRate: 44_100, outputRate: 48_000, channels: 2, maximumOutputFrames: 64, mode: mode)
            XCTFail("accepted a rate conversion")
        } catch {
            XCTAssertEqual(error.code, .invalidConfiguration)
        }
    }

    /// THD+N of 1 and 10 kHz tones at a constant ±200 ppm stays at or below −90 dB; impulses at every offset come
    /// out where `delayFrames` says, within a frame; the delay is under 22 frames (0.46 ms).
    func testDistortionAndDelayAtPlusMinus200PPM() throws {
        let figures = try measureDriftResampler(mode)
        print(
            "near-unity (\(figures.engine)): THD+N \(figures.thdPlusNoise1kHz) dB at 1 kHz, "
                + "\(figures.thdPlusNoise10kHz) dB at 10 kHz; delay \(figures.measuredDelayFrames) frames measured, "
                + "\(figures.reportedDelayFrames) reported")
        XCTAssertLessThanOrEqual(figures.thdPlusNoise1kHz, -90)
        XCTAssertLessThanOrEqual(figures.thdPlusNoise10kHz, -90)
        XCTAssertLessThanOrEqual(figures.worstDelayErrorFrames, 1)
        XCTAssertLessThan(figures.reportedDelayFrames, 22)
        XCTAssertGreaterThan(figures.reportedDelayFrames, 14)
    }

    /// Ten minutes of 64-frame periods (450 000) with the correction following a slow sine of ±300 ppm around
    /// +200 ppm, as a drift controller moves it (the sender's clock 200 ppm fast): every period complete, and the input taken equals Σ (64 × correction) within two frames
    /// at the end (the demand follows the ratio exactly; no frame lost or added over the run), with `delayFrames`
    /// staying within two frames of its start.
    func testFrameAccountingIsExactOverTenMinutes() throws {
        var resampler = try makeResampler(channels: 1)
        let input = [Float](repeating: 0.25, count: resampler.maximumInputFrames)
        var output = [Float](repeating: 0, count: periodFrames)
        let startDelay = resampler.delayFrames
        var taken = 0
        var ideal = 0.0
        var incomplete = 0
        var worstDelayDrift = 0.0
        for period in 0..<450_000 {
            let correction = 1 + 200e-6 + 300e-6 * sin(2 * Double.pi * Double(period) / 70_000)
            try resampler.setCorrection(correction, transitionFrames: 256)
            let needed = resampler.inputFramesNeeded(forOutputFrames: periodFrames)
            let result = try process(&resampler, input, inputFrames: needed, into: &output, outputFrames: periodFrames)
            if result.producedFrames != periodFrames { incomplete += 1 }
            taken += needed
            ideal += Double(periodFrames) * correction
            worstDelayDrift = max(worstDelayDrift, abs(resampler.delayFrames - startDelay))
        }
        print(
            "near-unity, 10 min: input taken \(taken), Σ frames × correction \(ideal) (difference "
                + "\(Double(taken) - ideal)); delay drift at most \(worstDelayDrift) frames")
        XCTAssertEqual(incomplete, 0)
        XCTAssertEqual(resampler.shortfallFrames, 0)
        XCTAssertEqual(Double(taken), ideal, accuracy: 2)
        XCTAssertGreaterThan(Double(taken), 450_000 * 64 * 1.000_15, "the sender's clock is fast: more input than output")
        XCTAssertLessThanOrEqual(worstDelayDrift, 2)
    }

    /// Ratio steps of ±300 ppm every 1/8 s, with the receiver's transition (256 frames) and with none: no click.
    /// The largest sample-to-sample step of a 1 kHz tone stays within 10⁻⁵ of the tone's own largest step, and the
    /// sine recurrence x[n] − 2cos(ω)x[n−1] + x[n−2] (0 for a clean sine) stays below −80 dB re its amplitude.
    func testRatioChangesAreSmooth() throws {
        for transition in [256, 0] {
            var resampler = try makeResampler(channels: 1)
            let amplitude = 0.5
            let input = tone(frequency: 1_000, amplitude: amplitude, rate: rate, frames: rate * 2, channels: 1)
            let periodsPerStep = rate / 8 / periodFrames
            let run = runDevice(
                &resampler, input: input, periodFrames: periodFrames, outputFrames: rate * 3 / 2,
                correction: { index in (index / periodsPerStep) % 2 == 0 ? 1.0003 : 0.9997 },
                transitionFrames: transition)
            XCTAssertEqual(run.incompletePeriods, 0)
            let start = 480
            var largestStep = 0.0
            for n in (start + 1)..<run.output.count {
                largestStep = max(largestStep, abs(Double(run.output[n]) - Double(run.output[n - 1])))
            }
            let toneStep = 2 * amplitude * sin(Double.pi * 1_000 * 1.0003 / Double(rate))
            let omega = 2 * Double.pi * 1_000 / Double(rate)
            var worstResidual = 0.0
            for n in (start + 2)..<run.output.count {
                let residual =
                    Double(run.output[n]) - 2 * cos(omega) * Double(run.output[n - 1]) + Double(run.output[n - 2])
                worstResidual = max(worstResidual, abs(residual))
            }
            print(
                "near-unity ratio steps, transition \(transition): largest step excess \(largestStep - toneStep), "
                    + "worst recurrence residual \(20 * log10(worstResidual / amplitude)) dB")
            XCTAssertLessThanOrEqual(largestStep, toneStep + 1e-5)
            XCTAssertLessThan(worstResidual / amplitude, 1e-4)
            let report = ToneAnalysis.analyze(Array(run.output[start...]), sampleRate: rate)
            XCTAssertEqual(report.discontinuities, 0)
        }
    }

    /// Random period sizes up to the maximum and random corrections: every period complete with the input asked
    /// for, channels identical.
    func testRandomPeriodsAndCorrectionsAreAlwaysComplete() throws {
        var generator = SeededGenerator(seed: 99)
        for channels in [1, 2, 6] {
            var resampler = try Resampler(
                inputRate: rate, outputRate: rate, channels: channels, maximumOutputFrames: 256, mode: mode)
            let signal = tone(frequency: 440, rate: rate, frames: rate / 2, channels: channels)
            var input = [Float](repeating: 0, count: resampler.maximumInputFrames * channels)
            var output = [Float](repeating: 0, count: 256 * channels)
            var position = 0
            for index in 0..<600 {
                if index % 5 == 0 {
                    let correction = 1 + Double(Int.random(in: 0..<2_001, using: &generator) - 1_000) * 1e-6
                    try resampler.setCorrection(correction, transitionFrames: [0, 64, 256][Int.random(in: 0..<3, using: &generator)])
                }
                let frames = Int.random(in: 0..<257, using: &generator)
                let needed = resampler.inputFramesNeeded(forOutputFrames: frames)
                for sample in 0..<(needed * channels) {
                    input[sample] = signal[(position * channels + sample) % signal.count]
                }
                position += needed
                let result = try process(&resampler, input, inputFrames: needed, into: &output, outputFrames: frames)
                XCTAssertEqual(result.producedFrames, frames, "\(channels) channels, period \(index)")
                for frame in 0..<frames {
                    for other in 1..<channels where output[frame * channels + other] != output[frame * channels] {
                        XCTFail("channel \(other) differs")
                    }
                }
            }
            XCTAssertEqual(resampler.shortfallFrames, 0)
        }
    }

    /// The polyphase sinc's hand-written stereo kernel against its generic one (which a mono stream runs): the left
    /// channel of a stereo stream equals the same signal played mono, within float rounding, period by period, with
    /// the same input taken, under random period sizes and corrections.
    func testTheStereoKernelMatchesTheGenericOne() throws {
        var generator = SeededGenerator(seed: 7)
        var stereo = try makeResampler(channels: 2)
        var mono = try makeResampler(channels: 1)
        let left = tone(frequency: 997, rate: rate, frames: rate, channels: 1)
        let right = tone(frequency: 3_001, rate: rate, frames: rate, channels: 1)
        var stereoInput = [Float](repeating: 0, count: stereo.maximumInputFrames * 2)
        var monoInput = [Float](repeating: 0, count: mono.maximumInputFrames)
        var stereoOutput = [Float](repeating: 0, count: periodFrames * 2)
        var monoOutput = [Float](repeating: 0, count: periodFrames)
        var position = 0
        var worst: Float = 0
        for index in 0..<2_000 {
            if index % 7 == 0 {
                let correction = 1 + Double(Int.random(in: 0..<2_001, using: &generator) - 1_000) * 1e-6
                let transition = [0, 64, 256][Int.random(in: 0..<3, using: &generator)]
                try stereo.setCorrection(correction, transitionFrames: transition)
                try mono.setCorrection(correction, transitionFrames: transition)
            }
            let frames = Int.random(in: 1...periodFrames, using: &generator)
            let needed = stereo.inputFramesNeeded(forOutputFrames: frames)
            XCTAssertEqual(mono.inputFramesNeeded(forOutputFrames: frames), needed, "period \(index)")
            for frame in 0..<needed {
                stereoInput[2 * frame] = left[(position + frame) % left.count]
                stereoInput[2 * frame + 1] = right[(position + frame) % right.count]
                monoInput[frame] = left[(position + frame) % left.count]
            }
            position += needed
            let stereoResult = try process(&stereo, stereoInput, inputFrames: needed, into: &stereoOutput, outputFrames: frames)
            let monoResult = try process(&mono, monoInput, inputFrames: needed, into: &monoOutput, outputFrames: frames)
            XCTAssertEqual(stereoResult.producedFrames, frames)
            XCTAssertEqual(monoResult.producedFrames, frames)
            for frame in 0..<frames { worst = max(worst, abs(stereoOutput[2 * frame] - monoOutput[frame])) }
        }
        XCTAssertLessThan(worst, 1e-6, "the two kernels differ by more than rounding")
        XCTAssertGreaterThan(position, 50_000, "2,000 periods of 1…64 frames")
    }
}
