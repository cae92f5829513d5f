// Resampler cost per device period: one iteration is one 64-frame stereo period through `Resampler`, as a
// receiver's device thread runs it (ask `inputFramesNeeded`, hand over that many frames, `process` exactly 64
// output frames), so the figures read "per packet" like the rest of MediaPath.
//
// - `Resample-fixed-44100-to-48000-per-64-frame-stereo-period`: fixed-ratio 44.1 → 48 kHz, libsoxr's
//   high-quality DFT engine ("cr32s"). It works in blocks of about 900 output frames, so most iterations only
//   queue input and copy out buffered output and every ~14th runs a block: the percentiles spread accordingly.
// - `Resample-variable-drift-48000-per-64-frame-stereo-period`: variable-ratio 48 → 48 kHz (drift compensation,
//   libsoxr's "vr32" engine); before each period the correction moves (slewed over the period) along a slow
//   ±300 ppm sine, crossing ratio 1 where the engine switches filter stages, as a drift controller would.
// - `Resample-lowlatency-drift-48000-per-64-frame-stereo-period`: the same drift sweep through the low-latency
//   variable-ratio mode (libsamplerate, `SRC_SINC_FASTEST`, about 20 frames of latency instead of about 290),
//   with the receiver's 256-frame transition.
// - `Resample-lowlatency-drift-44100-to-48000-per-64-frame-stereo-period`: the same, converting 44.1 → 48 kHz.
// - `Resample-nearunity-<library>-drift-48000-per-64-frame-stereo-period`: the same drift sweep through
//   `.nearUnityDrift` with each candidate library (zita-resampler's VResampler at half-lengths 16, 24, 32;
//   speexdsp at qualities 3, 5, 7), for the comparison in `Benchmarks/results/resampler-comparison.md`. The
//   correction changes every period, as a receiver's drift controller sets it, so speexdsp recomputes its filter
//   table whenever the correction crosses one of its 15 ppm steps.
//
// Input: a 1 kHz tone (0.5) precomputed in `setup`, a whole number of cycles long (so the loop is seamless) plus
// one period's worth repeated, so each period's input is a slice of it, not a copy. All buffers and the
// resampler (primed and warmed up by its `init`) are made in `setup`; teardown checks that every period came
// out complete (no shortfall), so the steady state measured is the real one.

import Benchmark
import TuttiResample

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

final class ResampleState {
    var resampler: Resampler
    let channels = 2
    let periodFrames = 64
    /// The tone, interleaved: `loopFrames` frames plus `maximumInputFrames` repeated from its start.
    let tone: UnsafeMutableBufferPointer<Float>
    let loopFrames: Int
    let output: UnsafeMutableBufferPointer<Float>
    var position = 0
    var period = 0
    /// Correction sweep for the variable-ratio benchmarks (nil: fixed ratio).
    let sweepPPM: Double?
    /// Output frames over which each correction change is slewed.
    let transitionFrames: Int

    init(inputRate: Int, outputRate: Int, mode: Resampler.Mode, sweepPPM: Double?, transitionFrames: Int = 64) {
        resampler = try! Resampler(
            inputRate: inputRate, outputRate: outputRate, channels: channels, maximumOutputFrames: periodFrames,
            mode: mode)
        self.sweepPPM = sweepPPM
        self.transitionFrames = transitionFrames
        loopFrames = inputRate  // one second: exactly 1000 cycles of 1 kHz
        let frames = loopFrames + resampler.maximumInputFrames
        tone = .allocate(capacity: frames * channels)
        for frame in 0..<frames {
            let value = Float(0.5 * sin(2 * Double.pi * 1_000 * Double(frame % loopFrames) / Double(inputRate)))
            for channel in 0..<channels { tone[frame * channels + channel] = value }
        }
        output = .allocate(capacity: periodFrames * channels)
        output.initialize(repeating: 0)
    }

    deinit {
        tone.deallocate()
        output.deallocate()
    }

    /// One device period. Measured.
    @inline(__always)
    func runPeriod() {
        if let sweepPPM {
            // A full ±sweep cycle every 2048 periods (2.7 s at 48 kHz).
            let correction = 1 + sweepPPM * 1e-6 * sin(Double(period & 2047) * (2 * Double.pi / 2048))
            try! resampler.setCorrection(correction, transitionFrames: transitionFrames)
        }
        let needed = resampler.inputFramesNeeded(forOutputFrames: periodFrames)
        let input = UnsafeBufferPointer(rebasing: tone[(position * channels)..<((position + needed) * channels)])
        let result = try! resampler.process(
            input: input, inputFrames: needed, output: output, outputFrames: periodFrames)
        blackHole(result)
        blackHole(output)
        position += needed
        if position >= loopFrames { position -= loopFrames }
        period &+= 1
    }

    func verify(_ name: String) {
        guard resampler.shortfallFrames == 0, period > 0 else {
            fatalError("\(name): \(resampler.shortfallFrames) output frames short over \(period) periods")
        }
    }
}

/// Resampler cost per 64-frame stereo period: fixed 44.1 → 48 kHz, and variable ratio (drift compensation) through
/// libsoxr and through the low-latency libsamplerate engine.
func registerResampleBenchmarks(_ configuration: Benchmark.Configuration) {
    let fixed = Fixture<ResampleState>()
    let fixedName = "Resample-fixed-44100-to-48000-per-64-frame-stereo-period"
    Benchmark(fixedName, configuration: configuration) { _ in
        fixed.state!.runPeriod()
    } setup: {
        fixed.state = ResampleState(inputRate: 44_100, outputRate: 48_000, mode: .fixedRatio, sweepPPM: nil)
    } teardown: {
        fixed.state!.verify(fixedName)
        fixed.state = nil
    }

    let variable = Fixture<ResampleState>()
    let variableName = "Resample-variable-drift-48000-per-64-frame-stereo-period"
    Benchmark(variableName, configuration: configuration) { _ in
        variable.state!.runPeriod()
    } setup: {
        variable.state = ResampleState(
            inputRate: 48_000, outputRate: 48_000, mode: .variableRatio(maximumCorrectionPPM: 1_000), sweepPPM: 300)
    } teardown: {
        variable.state!.verify(variableName)
        variable.state = nil
    }

    // The drift sweep through libsamplerate (the receivers' engine for real conversions, and the baseline) and
    // through every near-unity candidate, with the receiver's 256-frame transition.
    var drift: [(String, Int, Resampler.Mode)] = [
        (
            "Resample-lowlatency-drift-48000-per-64-frame-stereo-period", 48_000,
            .lowLatencyVariableRatio(maximumCorrectionPPM: 1_000)
        ),
        (
            "Resample-lowlatency-drift-44100-to-48000-per-64-frame-stereo-period", 44_100,
            .lowLatencyVariableRatio(maximumCorrectionPPM: 1_000)
        ),
    ]
    for (library, label) in nearUnityCandidates {
        drift.append(
            (
                "Resample-nearunity-\(label)-drift-48000-per-64-frame-stereo-period", 48_000,
                .nearUnityDrift(maximumCorrectionPPM: 1_000, library: library)
            ))
    }
    for (name, inputRate, mode) in drift {
        let fixture = Fixture<ResampleState>()
        Benchmark(name, configuration: configuration) { _ in
            fixture.state!.runPeriod()
        } setup: {
            fixture.state = ResampleState(
                inputRate: inputRate, outputRate: 48_000, mode: mode, sweepPPM: 300, transitionFrames: 256)
        } teardown: {
            fixture.state!.verify(name)
            fixture.state = nil
        }
    }
}

/// The near-unity drift resamplers compared (`NearUnityComparisonTests` measures their delay and distortion).
let nearUnityCandidates: [(NearUnityLibrary, String)] = [
    (.zitaVResampler(halfLength: 16), "zita16"), (.zitaVResampler(halfLength: 24), "zita24"),
    (.zitaVResampler(halfLength: 32), "zita32"), (.speexDSP(quality: 3), "speex3"), (.speexDSP(quality: 5), "speex5"),
    (.speexDSP(quality: 7), "speex7"), (.polyphase(halfLength: 16), "poly16"), (.polyphase(halfLength: 24), "poly24"),
]
