extension Resampler {
    /// libsamplerate for `.lowLatencyVariableRatio`, calibrated and primed.
    ///
    /// The lookahead is measured at both ends of the correction range and at the nominal ratio, and the largest
    /// kept (libsamplerate widens its filter when the ratio falls below 1, i.e. when downsampling); the filter's
    /// delay at the nominal ratio. The converter is primed with the silence a steady state holds right after a
    /// period (the lookahead less one output frame's worth of input, rounded down), so the first demand is already
    /// `frames × ratio`. Control plane only.
    static func makeSamplerate(
        channels: Int, nominalRatio: Double, correctionLimit: Double, maximumInputFrames: Int
    ) throws(ResamplerError) -> Backend {
        let nominal = try SamplerateEngine.calibrate(ratio: 1 / nominalRatio)
        var lookahead = nominal.lookaheadFrames
        for correction in [1 - correctionLimit, 1 + correctionLimit] {
            let calibration = try SamplerateEngine.calibrate(ratio: 1 / (nominalRatio * correction))
            lookahead = max(lookahead, calibration.lookaheadFrames)
        }
        let engine = try SamplerateEngine(
            channels: channels, ratio: 1 / nominalRatio, lookaheadFrames: lookahead,
            maximumInputFrames: maximumInputFrames,
            primingFrames: max(0, Int((Double(lookahead) - nominalRatio).rounded(.down))))
        return Backend(
            soxr: nil, samplerate: engine, account: ResamplerFrameAccount(leadFrames: 0),
            name: "libsamplerate: " + SamplerateEngine.converterName, filterDelayFrames: nominal.filterDelayFrames)
    }
}
