import Foundation
import TuttiAnalysis
import TuttiResample
import TuttiTesting
import XCTest

/// `.lowLatencyVariableRatio` (libsamplerate, `SRC_SINC_FASTEST`): the `Resampler` contract with a latency of
/// the sinc filter's half-length: measured delay, exact and minimal input demand, clean ratio changes.
final class LowLatencyResamplerTests: XCTestCase {
    let periodFrames = 64
    let mode = Resampler.Mode.lowLatencyVariableRatio(maximumCorrectionPPM: 1_000)

    /// Impulses at several positions within their periods (every fractional phase of the read position): each
    /// peak (interpolated) comes out where `delayFrames` says, within a frame; the delay itself is about 20
    /// frames (0.42–0.46 ms), far below the 1.5 ms budget.
    func testImpulseComesOutAtDelayFrames() throws {
        for (inputRate, outputRate) in [(48_000, 48_000), (44_100, 48_000), (48_000, 44_100)] {
            var resampler = try Resampler(
                inputRate: inputRate, outputRate: outputRate, channels: 2, maximumOutputFrames: periodFrames,
                mode: mode)
            var input = [Float](repeating: 0, count: resampler.maximumInputFrames * 2)
            var period = [Float](repeating: 0, count: periodFrames * 2)
            var output: [Float] = []
            // Impulse period → (offset in its input, expected output position, delayFrames before that period).
            var impulses: [Int: (offset: Int, expected: Double, delay: Double)] = [:]
            for (index, offset) in [(20, 0), (40, 10), (60, 31), (80, 50), (100, 57)] {
                impulses[index] = (offset, 0, 0)
            }
            for index in 0..<130 {
                let needed = resampler.inputFramesNeeded(forOutputFrames: periodFrames)
                for sample in input.indices { input[sample] = 0 }
                if let impulse = impulses[index] {
                    let offset = min(impulse.offset, needed - 1)
                    input[offset * 2] = 1
                    input[offset * 2 + 1] = 1
                    impulses[index] = (
                        offset,
                        Double(index * periodFrames) + resampler.delayFrames + Double(offset) / resampler.ratio,
                        resampler.delayFrames
                    )
                }
                let result = try process(
                    &resampler, input, inputFrames: needed, into: &period, outputFrames: periodFrames)
                XCTAssertEqual(result.producedFrames, periodFrames)
                output += channel(period, 0, of: 2)
            }
            for (index, impulse) in impulses.sorted(by: { $0.key < $1.key }) {
                let window = Int(impulse.expected) - 16..<Int(impulse.expected) + 16
                let peak = window.max { abs(output[$0]) < abs(output[$1]) }!
                let measured = Double(peak) + parabolicOffset(output, at: peak)
                print(
                    "\(inputRate) → \(outputRate) low latency: impulse in period \(index) at +\(impulse.offset) out at "
                        + "\(measured), expected \(impulse.expected): delayFrames \(impulse.delay) "
                        + "(\(impulse.delay / Double(outputRate) * 1e3) ms), lead \(resampler.leadFrames), "
                        + "filter delay \(resampler.filterDelayFrames)")
                XCTAssertEqual(measured, impulse.expected, accuracy: 1, "\(inputRate) → \(outputRate)")
                XCTAssertLessThanOrEqual(impulse.delay, 0.0015 * Double(outputRate))
                XCTAssertLessThanOrEqual(impulse.delay, 22.5, "a sinc half-length and under a frame of fraction")
                XCTAssertGreaterThan(impulse.delay, 18.5)
            }
            XCTAssertEqual(resampler.shortfallFrames, 0)
            XCTAssertEqual(resampler.engine, "libsamplerate: Fastest Sinc Interpolator")
        }
    }

    /// The demand is the least input that completes a period: one frame less leaves the period short (by one
    /// frame at 48 → 48 kHz; by one or two when upsampling, where neighbouring output frames share an input
    /// frame), and the next period, given its demand, is complete again.
    func testDemandIsExactAndOneFrameLessFallsShort() throws {
        for (inputRate, correction) in [(48_000, 1.0002), (48_000, 0.9997), (44_100, 1.0), (44_100, 1.0004)] {
            var resampler = try Resampler(
                inputRate: inputRate, outputRate: 48_000, channels: 2, maximumOutputFrames: periodFrames, mode: mode)
            try resampler.setCorrection(correction, transitionFrames: 0)
            let input = [Float](repeating: 0.25, count: resampler.maximumInputFrames * 2)
            var output = [Float](repeating: 0, count: periodFrames * 2)
            var starved = 0
            var shortBy: [Int: Int] = [:]
            for index in 0..<400 {
                let needed = resampler.inputFramesNeeded(forOutputFrames: periodFrames)
                let starve = index % 7 == 3
                let given = starve ? needed - 1 : needed
                let produced = try process(
                    &resampler, input, inputFrames: given, into: &output, outputFrames: periodFrames
                ).producedFrames
                if starve {
                    starved += 1
                    shortBy[periodFrames - produced, default: 0] += 1
                    XCTAssertLessThan(produced, periodFrames, "period \(index): one frame less still sufficed")
                    XCTAssertGreaterThanOrEqual(produced, periodFrames - 2)
                    if inputRate == 48_000 { XCTAssertEqual(produced, periodFrames - 1) }
                } else {
                    XCTAssertEqual(produced, periodFrames, "period \(index) after a short one")
                }
            }
            print(
                "\(inputRate) → 48000 at correction \(correction): \(starved) periods given one frame less, short by "
                    + "\(shortBy.sorted { $0.key < $1.key }) frames")
            XCTAssertEqual(starved, 57)
        }
    }

    /// Ratio steps of ±300…800 ppm across 1, each the receiver's 256-frame transition or a step: every period
    /// takes its steady `frames × ratio` (±2) and produces all 64 frames; no sample-to-sample step exceeds the
    /// tone's own largest step (at its highest pitch) by more than 10⁻⁵ (−94 dB re the tone's amplitude), and
    /// the sine recurrence x[n] − 2cos(ω)x[n−1] + x[n−2] stays below 10⁻⁴ of the amplitude (a click anywhere in
    /// the cycle, not only where the tone is steepest, would show as a spike): no click. A step of the ratio
    /// (transition 0) is a step of the tone's frequency, which alone leaves a residual of up to ω·|Δratio| of the
    /// amplitude (2.1·10⁻⁴ for the 1 600 ppm step): that is its bound, plus 10⁻⁵.
    func testRatioStepsAcrossOneAreSmoothAndExact() throws {
        let schedule = [1.0, 1.0005, 0.9995, 1.0003, 0.9997, 1.0008, 0.9992, 1.0]
        for (inputRate, transition) in [(48_000, 256), (48_000, 0), (44_100, 256)] {
            var resampler = try Resampler(
                inputRate: inputRate, outputRate: 48_000, channels: 1, maximumOutputFrames: periodFrames, mode: mode)
            let periodsPerStep = 48_000 / 4 / periodFrames
            let amplitude = 0.5
            let input = tone(
                frequency: 1_000, amplitude: amplitude, rate: inputRate, frames: inputRate * 2 + 4_800, channels: 1)
            var corrections: [Double] = []
            let run = runDevice(
                &resampler, input: input, periodFrames: periodFrames, outputFrames: 48_000 * 2,
                correction: { index in
                    let correction = schedule[min(schedule.count - 1, index / periodsPerStep)]
                    corrections.append(correction)
                    return correction
                }, transitionFrames: transition)
            XCTAssertEqual(run.incompletePeriods, 0)
            XCTAssertEqual(resampler.shortfallFrames, 0)
            let nominal = Double(inputRate) / 48_000
            for (index, taken) in run.inputPerPeriod.enumerated().dropFirst() {
                let ideal = Double(periodFrames) * nominal * corrections[index]
                XCTAssertLessThanOrEqual(abs(Double(taken) - ideal), 2, "period \(index)")
            }
            let start = 480
            var largestStep = 0.0
            for n in (start + 1)..<run.output.count {
                largestStep = max(largestStep, abs(Double(run.output[n]) - Double(run.output[n - 1])))
            }
            let toneStep = 2 * amplitude * sin(Double.pi * 1_000 * 1.0008 / 48_000)
            print(
                "\(inputRate) → 48000 ratio steps, transition \(transition): largest step \(largestStep), tone's own "
                    + "\(toneStep) (excess \(largestStep - toneStep)); input per period "
                    + "\(run.inputPerPeriod.dropFirst().min()!)...\(run.inputPerPeriod.dropFirst().max()!)")
            XCTAssertLessThanOrEqual(largestStep, toneStep + 1e-5)
            let omega = 2 * Double.pi * 1_000 / 48_000
            var worstResidual = 0.0
            for n in (start + 2)..<run.output.count {
                let residual =
                    Double(run.output[n]) - 2 * cos(omega) * Double(run.output[n - 1]) + Double(run.output[n - 2])
                worstResidual = max(worstResidual, abs(residual))
            }
            print("  worst sine-recurrence residual \(20 * log10(worstResidual / amplitude)) dB re amplitude")
            XCTAssertLessThan(worstResidual / amplitude, transition > 0 ? 1e-4 : omega * 1_600e-6 + 1e-5)
            let report = ToneAnalysis.analyze(Array(run.output[start...]), sampleRate: 48_000)
            XCTAssertEqual(report.discontinuities, 0)
            XCTAssertEqual(report.gaps, [])
        }
    }

    /// Any period size up to the maximum, any channel count (libsamplerate has separate mono, stereo, quad, hex and
    /// general paths, and ramps the ratio per sample), corrections and transitions changing at random: every
    /// period complete with exactly the input asked for, channels identical.
    func testRandomPeriodsChannelsAndCorrectionsAreAlwaysComplete() throws {
        var generator = SeededGenerator(seed: 12_345)
        for channels in [1, 2, 3, 4, 6] {
            for inputRate in [48_000, 44_100, 96_000] {
                var resampler = try Resampler(
                    inputRate: inputRate, outputRate: 48_000, channels: channels, maximumOutputFrames: 256, mode: mode)
                let signal = tone(frequency: 440, rate: inputRate, frames: inputRate / 2, channels: channels)
                var input = [Float](repeating: 0, count: resampler.maximumInputFrames * channels)
                var output = [Float](repeating: 0, count: 256 * channels)
                var position = 0
                var complete = 0
                for index in 0..<600 {
                    if index % 5 == 0 {
                        let correction = 1 + Double(Int.random(in: 0..<2_001, using: &generator) - 1_000) * 1e-6
                        let transition = [0, 1, 64, 256, 1_000][Int.random(in: 0..<5, using: &generator)]
                        try resampler.setCorrection(correction, transitionFrames: transition)
                    }
                    let frames = Int.random(in: 0..<257, using: &generator)
                    let needed = resampler.inputFramesNeeded(forOutputFrames: frames)
                    for sample in 0..<(needed * channels) {
                        input[sample] = signal[(position * channels + sample) % signal.count]
                    }
                    position += needed
                    let result = try process(
                        &resampler, input, inputFrames: needed, into: &output, outputFrames: frames)
                    XCTAssertEqual(
                        result.producedFrames, frames, "\(channels) channels, \(inputRate) Hz, period \(index)")
                    if result.producedFrames == frames { complete += 1 }
                    for frame in 0..<frames {
                        for other in 1..<channels where output[frame * channels + other] != output[frame * channels] {
                            XCTFail("channel \(other) differs")
                        }
                    }
                }
                XCTAssertEqual(complete, 600)
                XCTAssertEqual(resampler.shortfallFrames, 0)
                XCTAssertLessThan(resampler.delayFrames, 2 + Double(resampler.leadFrames))
            }
        }
    }

    /// The extremes of the supported range (8 ↔ 192 kHz: libsamplerate's filter spans 24 times more input when
    /// downsampling by 24), and periods longer than libsamplerate's internal buffer (16 384 output frames from
    /// 32 768 input frames a period, 96 → 48 kHz; it then refills within the call): every period complete, the
    /// tone at 1 kHz and clean. The latency is the filter's half-length in input time: 2.6 ms when the input is
    /// at 8 kHz (20 frames), 2.4 ms when decimating 192 → 8 kHz (463 frames at 192 kHz), 0.4 ms at 96 → 48 kHz.
    func testExtremeRatiosAndPeriodsLongerThanTheConvertersBuffer() throws {
        for (inputRate, outputRate, period) in [(8_000, 192_000, 256), (192_000, 8_000, 256), (96_000, 48_000, 16_384)] {
            var resampler = try Resampler(
                inputRate: inputRate, outputRate: outputRate, channels: 1, maximumOutputFrames: period, mode: mode)
            let input = tone(frequency: 1_000, rate: inputRate, frames: inputRate / 2, channels: 1)
            let run = runDevice(
                &resampler, input: input, periodFrames: period, outputFrames: outputRate / 2 + 2 * period)
            XCTAssertEqual(run.incompletePeriods, 0, "\(inputRate) → \(outputRate)")
            XCTAssertEqual(resampler.shortfallFrames, 0)
            let report = try XCTUnwrap(DistortionAnalysis.analyze(run.output, sampleRate: outputRate))
            let milliseconds = resampler.delayFrames / Double(outputRate) * 1_000
            print(
                "\(inputRate) → \(outputRate) Hz low latency, \(period)-frame periods: \(report.frequency) Hz, THD+N "
                    + "\(report.thdPlusNoiseDecibels) dB, delayFrames \(resampler.delayFrames) (\(milliseconds) ms)")
            XCTAssertEqual(report.frequency, 1_000, accuracy: 0.1)
            XCTAssertLessThan(report.thdPlusNoiseDecibels, -80)
            XCTAssertLessThanOrEqual(resampler.delayFrames - resampler.filterDelayFrames, resampler.leadFrames + 1e-9)
            XCTAssertLessThan(milliseconds, 2.7)
        }
    }

    /// The price of the short filter (`SRC_SINC_FASTEST`, "80 % bandwidth"): flat within 0.2 dB to 16 kHz,
    /// then a roll-off: at 48 kHz −0.5 dB at 18 kHz and −6 dB at 20 kHz; through 44.1 kHz −4.3 dB at 18 kHz.
    func testPassbandIsFlatTo16kHzThenRollsOff() throws {
        // (input rate, output rate, [(frequency, expected gain in dB, tolerance)]).
        let cases: [(Int, Int, [(Double, Double, Double)])] = [
            (48_000, 48_000, [(1_000, 0, 0.02), (16_000, 0, 0.2), (18_000, -0.5, 0.2), (20_000, -6.3, 0.5)]),
            (44_100, 48_000, [(1_000, 0, 0.02), (16_000, -0.15, 0.2), (18_000, -4.3, 0.5)]),
            (48_000, 44_100, [(1_000, 0, 0.02), (16_000, -0.15, 0.2), (18_000, -4.3, 0.5)]),
        ]
        for (inputRate, outputRate, points) in cases {
            for (frequency, expected, tolerance) in points {
                var resampler = try Resampler(
                    inputRate: inputRate, outputRate: outputRate, channels: 1, maximumOutputFrames: periodFrames,
                    mode: mode)
                let amplitude = 0.5
                let input = tone(
                    frequency: frequency, amplitude: amplitude, rate: inputRate, frames: inputRate / 4, channels: 1)
                let run = runDevice(&resampler, input: input, periodFrames: periodFrames, outputFrames: outputRate / 4)
                let steady = run.output[(outputRate / 20)..<(outputRate / 5)]
                let rms = sqrt(steady.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(steady.count))
                let gain = 20 * log10(rms * 2.0.squareRoot() / amplitude)
                print("\(inputRate) → \(outputRate) Hz low latency: \(frequency) Hz at \(gain) dB")
                XCTAssertEqual(gain, expected, accuracy: tolerance, "\(inputRate) → \(outputRate), \(frequency) Hz")
            }
        }
    }

    /// More input than asked is held (more latency, less asked next); none at all lets the periods fall short,
    /// and one period given its demand recovers: the demand stays about `frames × ratio`, never a burst.
    func testSurplusAndStarvation() throws {
        var resampler = try Resampler(
            inputRate: 48_000, outputRate: 48_000, channels: 1, maximumOutputFrames: periodFrames, mode: mode)
        XCTAssertEqual(resampler.delayFrames - resampler.filterDelayFrames, resampler.leadFrames, accuracy: 1)
        let before = resampler.delayFrames
        let asked = resampler.inputFramesNeeded(forOutputFrames: periodFrames)
        XCTAssertEqual(asked, periodFrames)
        let input = [Float](repeating: 0.25, count: resampler.maximumInputFrames)
        var output = [Float](repeating: 1, count: periodFrames)
        func step(_ frames: Int) throws -> Resampler.Result {
            try process(&resampler, input, inputFrames: frames, into: &output, outputFrames: periodFrames)
        }
        XCTAssertEqual(try step(asked + 2).producedFrames, periodFrames)
        XCTAssertEqual(resampler.delayFrames, before + 2, accuracy: 1e-9)
        XCTAssertEqual(resampler.inputFramesNeeded(forOutputFrames: periodFrames), asked - 2)
        var shortPeriods = 0
        for _ in 0..<3 where try step(0).producedFrames < periodFrames { shortPeriods += 1 }
        XCTAssertEqual(shortPeriods, 3)
        XCTAssertEqual(output.last, 0, "the missing part of a short period is silence")
        let recovery = resampler.inputFramesNeeded(forOutputFrames: periodFrames)
        XCTAssertLessThanOrEqual(recovery, periodFrames + 2)
        XCTAssertEqual(try step(recovery).producedFrames, periodFrames)
        XCTAssertEqual(resampler.inputFramesNeeded(forOutputFrames: periodFrames), periodFrames)
        XCTAssertEqual(resampler.delayFrames, before, accuracy: 1e-9)
    }

    func testInvalidRangesAndCorrectionsAreTypedErrors() throws {
        do {
            _ = try Resampler(
                inputRate: 48_000, outputRate: 48_000, channels: 1, maximumOutputFrames: 64,
                mode: .lowLatencyVariableRatio(maximumCorrectionPPM: 0))
            XCTFail("accepted a correction range of 0 ppm")
        } catch {
            XCTAssertEqual(error.code, .invalidConfiguration)
        }
        var resampler = try Resampler(
            inputRate: 48_000, outputRate: 48_000, channels: 1, maximumOutputFrames: 64, mode: mode)
        try resampler.setCorrection(0.999, transitionFrames: 64)
        do {
            try resampler.setCorrection(1.0011, transitionFrames: 64)
            XCTFail("accepted a correction of 1 100 ppm")
        } catch {
            XCTAssertEqual(error.code, .correctionRejected)
        }
        XCTAssertEqual(resampler.correction, 0.999)
    }

    /// Where a sampled peak really is: the vertex of the parabola through it and its neighbours.
    private func parabolicOffset(_ samples: [Float], at peak: Int) -> Double {
        let before = Double(abs(samples[peak - 1]))
        let at = Double(abs(samples[peak]))
        let after = Double(abs(samples[peak + 1]))
        let curvature = before - 2 * at + after
        return curvature < 0 ? 0.5 * (before - after) / curvature : 0
    }
}
