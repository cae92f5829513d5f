import Foundation
import TuttiAnalysis
import TuttiResample
import XCTest

/// Conversion 44.1 ↔ 48 kHz of a 1 kHz tone, driven like a device thread (64-frame stereo periods): the tone
/// arrives at 1 kHz, clean, every period complete; in Float and through 24-bit PCM on both sides. Fixed ratio
/// (libsoxr) and the low-latency variable ratio (libsamplerate) at its nominal ratio.
final class RateConversionTests: XCTestCase {
    let periodFrames = 64
    let channels = 2

    /// Converts 1.5 s of a 1 kHz tone (amplitude 0.5) and analyses channel 0 of the output (the default 50 ms
    /// skipped after the tone starts and before it ends); checks both channels are identical and every period
    /// was complete.
    @discardableResult
    func convert(
        from inputRate: Int, to outputRate: Int, pcm24: Bool, mode: Resampler.Mode = .fixedRatio,
        file: StaticString = #filePath, line: UInt = #line
    )
        throws -> DistortionReport
    {
        var resampler = try Resampler(
            inputRate: inputRate, outputRate: outputRate, channels: channels, maximumOutputFrames: periodFrames,
            mode: mode)
        var input = tone(frequency: 1_000, rate: inputRate, frames: inputRate * 3 / 2, channels: channels)
        if pcm24 { input = quantized24(input) }
        let outputFrames = outputRate * 3 / 2 + Int(resampler.leadFrames) + outputRate / 10
        var run = runDevice(&resampler, input: input, periodFrames: periodFrames, outputFrames: outputFrames)
        if pcm24 { run.output = quantized24(run.output) }
        XCTAssertEqual(run.incompletePeriods, 0, file: file, line: line)
        XCTAssertEqual(resampler.shortfallFrames, 0, file: file, line: line)
        // Input is taken in steady steps of 64 × ratio frames, never in libsoxr's DFT-block bursts.
        let ideal = Double(periodFrames) * Double(inputRate) / Double(outputRate)
        XCTAssertLessThanOrEqual(run.inputPerPeriod.dropFirst().max()!, Int(ideal.rounded(.up)), file: file, line: line)
        XCTAssertGreaterThanOrEqual(
            run.inputPerPeriod.dropFirst().min()!, Int(ideal.rounded(.down)), file: file, line: line)
        let left = channel(run.output, 0, of: channels)
        XCTAssertEqual(left, channel(run.output, 1, of: channels), file: file, line: line)
        let report = try XCTUnwrap(DistortionAnalysis.analyze(left, sampleRate: outputRate), file: file, line: line)
        print(
            "\(inputRate) → \(outputRate) Hz \(pcm24 ? "24-bit PCM" : "Float"): \(report.frequency) Hz, "
                + "THD+N \(report.thdPlusNoiseDecibels) dB over \(report.frames) frames; engine \(resampler.engine), "
                + "lead \(resampler.leadFrames) frames")
        XCTAssertEqual(report.frequency, 1_000, accuracy: 0.1, file: file, line: line)
        XCTAssertLessThan(report.thdPlusNoiseDecibels, -80, file: file, line: line)
        // The whole tone came through (1.5 s, less the fade-in/out of the filters' start and end).
        XCTAssertEqual(
            Double(report.frames + outputRate / 10), Double(outputRate) * 1.5, accuracy: 200, file: file, line: line)
        return report
    }

    func test44100To48000Float() throws {
        try convert(from: 44_100, to: 48_000, pcm24: false)
    }

    func test48000To44100Float() throws {
        try convert(from: 48_000, to: 44_100, pcm24: false)
    }

    func test44100To48000Through24BitPCM() throws {
        try convert(from: 44_100, to: 48_000, pcm24: true)
    }

    func test48000To44100Through24BitPCM() throws {
        try convert(from: 48_000, to: 44_100, pcm24: true)
    }

    func testLowLatency44100To48000Float() throws {
        try convert(from: 44_100, to: 48_000, pcm24: false, mode: .lowLatencyVariableRatio(maximumCorrectionPPM: 1_000))
    }

    func testLowLatency48000To44100Float() throws {
        try convert(from: 48_000, to: 44_100, pcm24: false, mode: .lowLatencyVariableRatio(maximumCorrectionPPM: 1_000))
    }

    func testLowLatency44100To48000Through24BitPCM() throws {
        try convert(from: 44_100, to: 48_000, pcm24: true, mode: .lowLatencyVariableRatio(maximumCorrectionPPM: 1_000))
    }

    func testLowLatency48000To44100Through24BitPCM() throws {
        try convert(from: 48_000, to: 44_100, pcm24: true, mode: .lowLatencyVariableRatio(maximumCorrectionPPM: 1_000))
    }

    /// The extremes of the supported range in both directions: every period complete, the tone at 1 kHz.
    func testExtremeRatios8kAnd192k() throws {
        for (inputRate, outputRate) in [(8_000, 192_000), (192_000, 8_000)] {
            var resampler = try Resampler(
                inputRate: inputRate, outputRate: outputRate, channels: 1, maximumOutputFrames: 256, mode: .fixedRatio)
            let input = tone(frequency: 1_000, rate: inputRate, frames: inputRate / 2, channels: 1)
            let run = runDevice(
                &resampler, input: input, periodFrames: 256,
                outputFrames: outputRate / 2 + Int(resampler.leadFrames) + outputRate / 10)
            XCTAssertEqual(run.incompletePeriods, 0, "\(inputRate) → \(outputRate)")
            let report = try XCTUnwrap(DistortionAnalysis.analyze(run.output, sampleRate: outputRate))
            print(
                "\(inputRate) → \(outputRate) Hz: THD+N \(report.thdPlusNoiseDecibels) dB, lead \(resampler.leadFrames)"
            )
            XCTAssertEqual(report.frequency, 1_000, accuracy: 0.1)
            XCTAssertLessThan(report.thdPlusNoiseDecibels, -80)
        }
    }

    /// Equal rates in fixed mode: libsoxr passes the samples through unchanged, `delayFrames` later.
    func testEqualRatesPassSamplesThroughDelayed() throws {
        var resampler = try Resampler(
            inputRate: 48_000, outputRate: 48_000, channels: 2, maximumOutputFrames: periodFrames, mode: .fixedRatio)
        let input = tone(frequency: 1_000, rate: 48_000, frames: 9_600, channels: 2).enumerated().map {
            $0.element + Float($0.offset % 7) * 1e-3  // not a pure tone: every sample distinct
        }
        let run = runDevice(&resampler, input: input, periodFrames: periodFrames, outputFrames: 9_600)
        let delay = Int(resampler.delayFrames.rounded())
        XCTAssertEqual(resampler.delayFrames, Double(delay), accuracy: 1e-9)
        print("48000 → 48000 Hz fixed: engine \(resampler.engine), delay \(delay) frames")
        XCTAssertEqual(Array(run.output[(delay * 2)...]), Array(input[0..<(run.output.count - delay * 2)]))
        XCTAssertEqual(run.output[0..<(delay * 2)].filter { $0 != 0 }.count, 0)
    }
}
