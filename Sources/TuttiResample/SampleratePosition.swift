/// An exact model of where a libsamplerate sinc converter reads its input, so that a resampler can give it just
/// the input its next call needs, and know its latency to the frame.
///
/// **What it models.** libsamplerate's sinc converters compute output frame n at input position Pₙ, counted in
/// input frames from the first input frame: Pₙ₊₁ = Pₙ + 1 ÷ rₙ, where rₙ is the ratio (output rate ÷ input rate,
/// libsamplerate's `src_ratio`) used for frame n. Within one `src_process` call asking for N frames the ratio
/// moves linearly from the ratio the previous call ended on to the call's `src_ratio`: the k-th frame uses
/// last + k·(new − last) ÷ N (k and N counted in samples, i.e. × channels), unless the two differ by 10⁻¹⁰ or
/// less, when `last` stays. The ratio of the last frame produced, not the one asked for, carries over to the next
/// call; `src_set_ratio` sets it directly. libsamplerate keeps Pₙ as an integer index plus a fraction in [0, 1),
/// normalised after every frame; `walk` replays exactly those floating-point steps, so the model's integer part
/// never differs from the converter's (a difference in the last bit of the fraction cannot move it unless the
/// fraction sits within that bit of an integer).
///
/// **What a frame needs.** Frame n can be computed once the input given reaches ⌊Pₙ⌋ + `lookaheadFrames`: the
/// sinc filter's half-length in input frames (libsamplerate's `half_filter_chan_len`, which it measures in
/// samples), plus one. `Resampler` measures it at init. Frames within a call use increasing positions, so the last
/// one decides what the call needs.
///
/// The state is relative (input given minus the integer read index, and the fraction), so it never grows with
/// the stream's length.
///
/// Realtime-safe: yes (arithmetic only; a walk is one division and a few additions per output frame). Thread-safe:
/// no (a value; one owner).
struct SampleratePosition: Hashable, Sendable {
    /// Input frames beyond ⌊Pₙ⌋ that frame n needs given before it can be computed (≥ 1).
    var lookaheadFrames: Int
    /// Interleaved samples per frame (libsamplerate ramps the ratio per sample, so the ramp's steps depend on it).
    let channels: Int
    /// Input given so far minus ⌊P⌋ of the next output frame: the whole input frames held.
    private(set) var heldWholeFrames: Int
    /// The fractional part of the next output frame's position (libsamplerate's `last_position`).
    private(set) var fraction: Double = 0
    /// The ratio (output ÷ input) the last frame used, where the next call's ramp starts (libsamplerate's
    /// `last_ratio`).
    private(set) var lastRatio: Double

    /// - Parameters:
    ///   - lookaheadFrames: see the type's documentation (≥ 1).
    ///   - channels: samples per frame (≥ 1).
    ///   - ratio: the converter's ratio (output ÷ input), as set with `src_set_ratio` before its first call.
    ///   - heldFrames: input frames given before the first output frame, at position 0.
    init(lookaheadFrames: Int, channels: Int, ratio: Double, heldFrames: Int = 0) {
        precondition(lookaheadFrames >= 1 && channels >= 1 && ratio > 0 && heldFrames >= 0)
        self.lookaheadFrames = lookaheadFrames
        self.channels = channels
        self.lastRatio = ratio
        self.heldWholeFrames = heldFrames
    }

    /// Input frames held, read position included: input given minus the next output frame's position.
    /// Realtime-safe: yes.
    var heldInputFrames: Double { Double(heldWholeFrames) - fraction }

    /// Input frames to give before a call asking for `frames` output frames toward ratio `target`, so that it
    /// produces them all; 0 if enough is held. Realtime-safe: yes.
    func inputFramesNeeded(forOutputFrames frames: Int, toward target: Double) -> Int {
        guard frames > 0 else { return 0 }
        // ⌊P⌋ of the call's last frame, relative to ⌊P⌋ of its first.
        let advance = walk(frames - 1, of: frames, toward: target).advance
        return max(0, lookaheadFrames + advance - heldWholeFrames)
    }

    /// Records a call: `inputFrames` given, then `producedFrames` of the `requestedFrames` asked for produced toward
    /// ratio `target` (`requestedFrames` 0: no `src_process` call, the input only staged). Realtime-safe: yes.
    mutating func record(inputFrames: Int, producedFrames: Int, requestedFrames: Int, toward target: Double) {
        precondition(inputFrames >= 0 && producedFrames >= 0 && producedFrames <= requestedFrames)
        heldWholeFrames += inputFrames
        guard requestedFrames > 0 else { return }
        let step = walk(producedFrames, of: requestedFrames, toward: target)
        heldWholeFrames -= step.advance
        fraction = step.fraction
        lastRatio = step.lastRatio
    }

    /// Records `src_set_ratio`: the next call starts from `ratio`, no ramp. Realtime-safe: yes.
    mutating func setRatio(_ ratio: Double) {
        precondition(ratio > 0)
        lastRatio = ratio
    }

    /// libsamplerate's steps over `count` output frames of a call asking for `requested` frames toward `target`:
    /// how far the integer read index moves, and the fraction and ratio it ends on.
    private func walk(
        _ count: Int, of requested: Int, toward target: Double
    ) -> (
        advance: Int, fraction: Double, lastRatio: Double
    ) {
        // The saved position is normalised at the start of each call (a no-op unless it rounded up to 1).
        var index = fraction
        var remainder = Self.fractionalPart(index)
        var advance = Int((index - remainder).rounded(.toNearestOrEven))
        index = remainder
        let ramps = abs(lastRatio - target) > 1e-10
        let requestedSamples = Double(requested * channels)
        var ratio = lastRatio
        for frame in 0..<count {
            if ramps { ratio = lastRatio + Double(frame * channels) * (target - lastRatio) / requestedSamples }
            index += 1 / ratio
            remainder = Self.fractionalPart(index)
            advance += Int((index - remainder).rounded(.toNearestOrEven))
            index = remainder
        }
        return (advance, index, ratio)
    }

    /// libsamplerate's `fmod_one`: x less its nearest integer (ties to even), plus 1 if negative.
    private static func fractionalPart(_ x: Double) -> Double {
        let result = x - x.rounded(.toNearestOrEven)
        return result < 0 ? result + 1 : result
    }
}
