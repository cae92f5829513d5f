import Foundation
import TuttiAnalysis
import TuttiResample
import XCTest

/// What the near-unity comparison measures of one drift resampler at 48 kHz, stereo, 64-frame periods.
struct ResamplerFigures {
    /// `Resampler.engine`.
    var engine: String
    /// `delayFrames` right before an impulse's period, averaged over impulses at several offsets.
    var reportedDelayFrames: Double
    /// Where the impulses' peaks came out, beyond their position ÷ ratio in their period (the measured delay),
    /// averaged, and the largest difference from `delayFrames` read before each impulse's period.
    var measuredDelayFrames: Double
    var worstDelayErrorFrames: Double
    /// THD+N in dB (worst of +200 and −200 ppm) of a 0.5-amplitude tone at 1 kHz and at 10 kHz.
    var thdPlusNoise1kHz: Double
    var thdPlusNoise10kHz: Double
    /// A 1 kHz tone through a correction that jumps between −300 and +300 ppm every 1/8 s (transition 256 frames):
    /// the largest sample-to-sample step beyond the tone's own largest step (a click shows as a large excess).
    var stepExcess: Double
    /// Input frames taken minus output frames × correction over the ±200 ppm runs (frame accounting drift).
    var accountingErrorFrames: Double
}

/// Measures `mode` (48 → 48 kHz, stereo, 64-frame periods): see `ResamplerFigures`.
func measureDriftResampler(_ mode: Resampler.Mode) throws -> ResamplerFigures {
    let rate = 48_000
    let periodFrames = 64
    func make() throws -> Resampler {
        try Resampler(inputRate: rate, outputRate: rate, channels: 2, maximumOutputFrames: periodFrames, mode: mode)
    }

    // Delay: impulses at several offsets within their periods.
    var resampler = try make()
    let engine = resampler.engine
    var input = [Float](repeating: 0, count: resampler.maximumInputFrames * 2)
    var period = [Float](repeating: 0, count: periodFrames * 2)
    var output: [Float] = []
    var impulses: [Int: (offset: Int, expected: Double, delay: Double)] = [:]
    for (index, offset) in [(20, 0), (40, 10), (60, 31), (80, 50), (100, 63)] { impulses[index] = (offset, 0, 0) }
    for index in 0..<130 {
        let needed = resampler.inputFramesNeeded(forOutputFrames: periodFrames)
        for sample in input.indices { input[sample] = 0 }
        if let impulse = impulses[index] {
            let offset = min(impulse.offset, needed - 1)
            input[offset * 2] = 1
            input[offset * 2 + 1] = 1
            impulses[index] = (
                offset, Double(index * periodFrames) + Double(offset) / resampler.ratio, resampler.delayFrames
            )
        }
        _ = try process(&resampler, input, inputFrames: needed, into: &period, outputFrames: periodFrames)
        output += channel(period, 0, of: 2)
    }
    var measuredSum = 0.0
    var reportedSum = 0.0
    var worstError = 0.0
    for impulse in impulses.values {
        let window = Int(impulse.expected + impulse.delay) - 40..<Int(impulse.expected + impulse.delay) + 40
        let peak = try XCTUnwrap(impulsePeak(output, in: window))
        let measured = peak - impulse.expected
        measuredSum += measured
        reportedSum += impulse.delay
        worstError = max(worstError, abs(measured - impulse.delay))
    }

    // THD+N at ±200 ppm, 1 and 10 kHz; frame accounting over the same runs.
    var thd = [Double: Double]()
    var accountingError = 0.0
    for frequency in [1_000.0, 10_000.0] {
        for correction in [1.0002, 0.9998] {
            var resampler = try make()
            try resampler.setCorrection(correction, transitionFrames: 0)
            let signal = tone(frequency: frequency, rate: rate, frames: rate + 4_800, channels: 2)
            let run = runDevice(&resampler, input: signal, periodFrames: periodFrames, outputFrames: rate)
            let report = try XCTUnwrap(DistortionAnalysis.analyze(channel(run.output, 0, of: 2), sampleRate: rate))
            thd[frequency] = max(thd[frequency] ?? -.infinity, report.thdPlusNoiseDecibels)
            let taken = Double(run.inputPerPeriod.reduce(0, +))
            let produced = Double(run.output.count / 2)
            accountingError = max(accountingError, abs(taken - produced * correction))
        }
    }

    // Ratio jumps on a 1 kHz tone.
    resampler = try make()
    let amplitude = 0.5
    let signal = tone(frequency: 1_000, amplitude: amplitude, rate: rate, frames: rate * 2, channels: 1)
    var mono = try Resampler(
        inputRate: rate, outputRate: rate, channels: 1, maximumOutputFrames: periodFrames, mode: mode)
    let periodsPerStep = rate / 8 / periodFrames
    let run = runDevice(
        &mono, input: signal, periodFrames: periodFrames, outputFrames: rate * 3 / 2,
        correction: { index in (index / periodsPerStep) % 2 == 0 ? 1.0003 : 0.9997 }, transitionFrames: 256)
    var largestStep = 0.0
    for n in 481..<run.output.count {
        largestStep = max(largestStep, abs(Double(run.output[n]) - Double(run.output[n - 1])))
    }
    let toneStep = 2 * amplitude * sin(Double.pi * 1_000 * 1.0003 / Double(rate))

    return ResamplerFigures(
        engine: engine, reportedDelayFrames: reportedSum / Double(impulses.count),
        measuredDelayFrames: measuredSum / Double(impulses.count), worstDelayErrorFrames: worstError,
        thdPlusNoise1kHz: thd[1_000]!, thdPlusNoise10kHz: thd[10_000]!, stepExcess: largestStep - toneStep,
        accountingErrorFrames: accountingError)
}

/// Where an impulse response peaks in `range` of `samples`, to a fraction of a frame (parabolic interpolation).
func impulsePeak(_ samples: [Float], in range: Range<Int>) -> Double? {
    let range = max(1, range.lowerBound)..<min(samples.count - 1, range.upperBound)
    guard let peak = range.max(by: { abs(samples[$0]) < abs(samples[$1]) }), samples[peak] != 0 else { return nil }
    let before = Double(abs(samples[peak - 1]))
    let at = Double(abs(samples[peak]))
    let after = Double(abs(samples[peak + 1]))
    let curvature = before - 2 * at + after
    return Double(peak) + (curvature < 0 ? 0.5 * (before - after) / curvature : 0)
}
