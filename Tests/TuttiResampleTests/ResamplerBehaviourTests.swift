import Foundation
import TuttiAnalysis
import TuttiResample
import XCTest

/// The resampler's contract beyond audio quality: variable ratio, latency, input demand, errors.
final class ResamplerBehaviourTests: XCTestCase {
    let periodFrames = 64

    /// Both variable-ratio modes at a constant correction of ±200 ppm (48 → 48 kHz) and at the nominal ratio
    /// (44.1 → 48 kHz): a clean tone at 1 kHz × correction.
    func testVariableRatioAtConstantCorrectionIsClean() throws {
        let modes: [Resampler.Mode] = [
            .variableRatio(maximumCorrectionPPM: 1_000), .lowLatencyVariableRatio(maximumCorrectionPPM: 1_000),
        ]
        for mode in modes {
            for (inputRate, correction) in [(48_000, 1.0002), (48_000, 0.9998), (44_100, 1.0)] {
                try checkConstantCorrection(mode: mode, inputRate: inputRate, correction: correction)
            }
        }
    }

    /// One run of `testVariableRatioAtConstantCorrectionIsClean`: one second of tone.
    func checkConstantCorrection(mode: Resampler.Mode, inputRate: Int, correction: Double) throws {
        var resampler = try Resampler(
            inputRate: inputRate, outputRate: 48_000, channels: 2, maximumOutputFrames: periodFrames, mode: mode)
        let input = tone(frequency: 1_000, rate: inputRate, frames: inputRate, channels: 2)
        let run = runDevice(
            &resampler, input: input, periodFrames: periodFrames, outputFrames: 48_000 + 2_400,
            correction: { _ in correction })
        XCTAssertEqual(run.incompletePeriods, 0)
        let report = try XCTUnwrap(DistortionAnalysis.analyze(channel(run.output, 0, of: 2), sampleRate: 48_000))
        print(
            "variable \(inputRate) → 48000 Hz, correction \(correction): \(report.frequency) Hz, "
                + "THD+N \(report.thdPlusNoiseDecibels) dB; engine \(resampler.engine), lead \(resampler.leadFrames)"
        )
        XCTAssertEqual(report.frequency, 1_000 * correction, accuracy: 0.01)
        XCTAssertLessThan(report.thdPlusNoiseDecibels, -80)
    }

    /// Steps of several hundred ppm (crossing ratio 1, where libsoxr's variable-rate engine switches filter
    /// stages), each slewed over one period: no click, no gap. The sine recurrence
    /// x[n] − 2cos(ω)x[n−1] + x[n−2] stays below 10⁻⁴ of the amplitude (a click would show as a spike), and
    /// ToneAnalysis finds no discontinuity.
    func testRatioStepsOfHundredsOfPPMAreSmooth() throws {
        var resampler = try Resampler(
            inputRate: 48_000, outputRate: 48_000, channels: 1, maximumOutputFrames: periodFrames,
            mode: .variableRatio(maximumCorrectionPPM: 1_000))
        let schedule = [1.0, 1.0005, 0.9995, 1.0003, 0.9997, 1.0008, 0.9992, 1.0]
        let periodsPerStep = 48_000 / 4 / periodFrames
        let input = tone(frequency: 1_000, rate: 48_000, frames: 48_000 * 2 + 4_800, channels: 1)
        let run = runDevice(
            &resampler, input: input, periodFrames: periodFrames, outputFrames: 48_000 * 2,
            correction: { schedule[min(schedule.count - 1, $0 / periodsPerStep)] })
        XCTAssertEqual(run.incompletePeriods, 0)
        let start = Int(resampler.leadFrames) + 4_800
        let omega = 2 * Double.pi * 1_000 / 48_000
        var worst = 0.0
        for n in start..<run.output.count {
            let residual =
                Double(run.output[n]) - 2 * cos(omega) * Double(run.output[n - 1]) + Double(run.output[n - 2])
            worst = max(worst, abs(residual))
        }
        print("ratio steps: worst sine-recurrence residual \(20 * log10(worst / 0.5)) dB re amplitude")
        XCTAssertLessThan(worst / 0.5, 1e-4)
        let report = ToneAnalysis.analyze(Array(run.output[start...]), sampleRate: 48_000)
        XCTAssertEqual(report.discontinuities, 0)
        XCTAssertEqual(report.gaps, [])
    }

    /// `delayFrames` is the latency the resampler adds: an impulse given at position i of a period's input
    /// leaves at output position (frames produced before) + delayFrames + i ÷ ratio, within a frame.
    func testDelayFramesIsTheMeasuredLatency() throws {
        for (inputRate, outputRate, mode) in [
            (44_100, 48_000, Resampler.Mode.fixedRatio), (48_000, 44_100, .fixedRatio),
            (48_000, 48_000, .variableRatio(maximumCorrectionPPM: 1_000)),
        ] {
            var resampler = try Resampler(
                inputRate: inputRate, outputRate: outputRate, channels: 2, maximumOutputFrames: periodFrames, mode: mode
            )
            var input = [Float](repeating: 0, count: resampler.maximumInputFrames * 2)
            var period = [Float](repeating: 0, count: periodFrames * 2)
            var output: [Float] = []
            var expected = 0.0
            let offset = 10
            for index in 0..<120 {
                let needed = resampler.inputFramesNeeded(forOutputFrames: periodFrames)
                for sample in input.indices { input[sample] = 0 }
                if index == 50 {
                    input[offset * 2] = 1
                    input[offset * 2 + 1] = 1
                    expected = Double(index * periodFrames) + resampler.delayFrames + Double(offset) / resampler.ratio
                }
                try input.withUnsafeBufferPointer { input in
                    try period.withUnsafeMutableBufferPointer { output in
                        _ = try resampler.process(
                            input: input, inputFrames: needed, output: output, outputFrames: periodFrames)
                    }
                }
                output += channel(period, 0, of: 2)
            }
            let peak = output.indices.max { abs(output[$0]) < abs(output[$1]) }!
            print(
                "\(inputRate) → \(outputRate) \(mode): impulse out at \(peak), expected \(expected) "
                    + "(delayFrames ≈ \(resampler.delayFrames), lead \(resampler.leadFrames))")
            XCTAssertEqual(Double(peak), expected, accuracy: 1, "\(inputRate) → \(outputRate) \(mode)")
        }
    }

    /// More input than asked is taken and held (more latency, less asked next); less input leaves libsoxr short
    /// once the lead is used up: the missing output is silence, counted.
    func testDemandFollowsWhatWasGiven() throws {
        var resampler = try Resampler(
            inputRate: 48_000, outputRate: 48_000, channels: 1, maximumOutputFrames: periodFrames,
            mode: .variableRatio(maximumCorrectionPPM: 500))
        let lead = resampler.leadFrames
        XCTAssertEqual(resampler.delayFrames - resampler.filterDelayFrames, lead, accuracy: 1)
        let before = resampler.delayFrames
        let asked = resampler.inputFramesNeeded(forOutputFrames: periodFrames)
        XCTAssert(asked == periodFrames || asked == periodFrames - 1, "\(asked)")
        let input = [Float](repeating: 0.25, count: resampler.maximumInputFrames)
        var output = [Float](repeating: 1, count: periodFrames)
        func step(_ frames: Int) throws -> Resampler.Result {
            try process(&resampler, input, inputFrames: frames, into: &output, outputFrames: periodFrames)
        }
        XCTAssertEqual(try step(asked + 2).producedFrames, periodFrames)
        XCTAssertEqual(resampler.delayFrames, before + Double(asked + 2 - periodFrames), accuracy: 1e-9)
        XCTAssertEqual(resampler.inputFramesNeeded(forOutputFrames: periodFrames), asked - 2)
        // Starve it: the held lead plays out, then the periods come out short.
        var shortPeriods = 0
        for _ in 0..<20 where try step(0).producedFrames < periodFrames { shortPeriods += 1 }
        XCTAssertGreaterThan(shortPeriods, 0)
        XCTAssertGreaterThan(resampler.shortfallFrames, 0)
        XCTAssertEqual(output.last, 0, "the missing part of a short period is silence")
        XCTAssertEqual(resampler.inputFramesNeeded(forOutputFrames: periodFrames), resampler.maximumInputFrames)
    }

    func testInvalidConfigurationsAndCorrectionsAreTypedErrors() throws {
        func code(_ body: () throws -> Void) -> ResamplerError.Code? {
            do { try body() } catch let error as ResamplerError { return error.code } catch {
                XCTFail("untyped \(error)")
            }
            return nil
        }
        XCTAssertEqual(
            code {
                _ = try Resampler(
                    inputRate: 4_000, outputRate: 48_000, channels: 2, maximumOutputFrames: 64, mode: .fixedRatio)
            },
            .invalidConfiguration)
        XCTAssertEqual(
            code {
                _ = try Resampler(
                    inputRate: 48_000, outputRate: 48_000, channels: 0, maximumOutputFrames: 64, mode: .fixedRatio)
            },
            .invalidConfiguration)
        XCTAssertEqual(
            code {
                _ = try Resampler(
                    inputRate: 48_000, outputRate: 48_000, channels: 1, maximumOutputFrames: 64,
                    mode: .variableRatio(maximumCorrectionPPM: 0))
            }, .invalidConfiguration)

        var fixed = try Resampler(
            inputRate: 44_100, outputRate: 48_000, channels: 2, maximumOutputFrames: 64, mode: .fixedRatio)
        XCTAssertEqual(code { try fixed.setCorrection(1.0001, transitionFrames: 64) }, .correctionRejected)
        XCTAssertEqual(fixed.correction, 1)

        var variable = try Resampler(
            inputRate: 48_000, outputRate: 48_000, channels: 2, maximumOutputFrames: 64,
            mode: .variableRatio(maximumCorrectionPPM: 1_000))
        try variable.setCorrection(1.001, transitionFrames: 64)
        XCTAssertEqual(code { try variable.setCorrection(1.0011, transitionFrames: 64) }, .correctionRejected)
        XCTAssertEqual(code { try variable.setCorrection(.nan, transitionFrames: 64) }, .correctionRejected)
        XCTAssertEqual(variable.correction, 1.001)
        do {
            try variable.setCorrection(0.99, transitionFrames: 0)
            XCTFail("accepted a correction of −10 000 ppm")
        } catch {
            XCTAssertEqual(error.code, .correctionRejected)
            XCTAssertFalse(error.message.isEmpty)
            print("rejected: \(error)")
        }
    }
}
