import CSamplerate

/// The libsamplerate converter behind `Resampler`'s `.lowLatencyVariableRatio` mode: `src_process` on interleaved
/// `Float` with `SRC_SINC_FASTEST`, the ratio changed between calls, input given exactly as the next call needs.
///
/// **Why it has low latency.** libsamplerate holds back no block and no FIFO of its own beyond its sinc filter's
/// half-length (about 20 input frames with `SRC_SINC_FASTEST`): output frame n is computed as soon as the input
/// reaches its position plus that half-length (see `SampleratePosition`, which models that position exactly). So
/// `inputFramesNeeded` asks for just that: the steady-state latency is the half-length plus less than a frame of
/// fractional position.
///
/// **Input it is not ready for.** libsamplerate copies input into its own buffer only when it runs short, and then
/// takes all it is offered; input it has not taken must be offered again. The engine copies each call's input
/// into `staging` behind what is still there and offers all of it, so a `process` call always takes all its input.
///
/// **Ratio.** libsamplerate ratios here (output rate ÷ input rate, `src_ratio`). `setRatio` with a transition
/// spreads the change over that many output frames: each call ramps linearly (libsamplerate's own ramp within a
/// call) to the point the transition has reached at the call's end.
///
/// Owns the converter and the staging buffer: its owner calls `free()` exactly once. `init` allocates (the
/// converter's filter buffer and the staging buffer); after it nothing does: `src_process` with the sinc converters
/// only copies into the buffer `src_new` made. Realtime-safe after init: yes. Thread-safe: no.
struct SamplerateEngine {
    /// libsamplerate's converter: `SRC_SINC_FASTEST` (band-limited sinc, 97 dB SNR, 80 % bandwidth by its own
    /// description; the shortest filter, hence the lowest latency: see `Resampler`'s documentation for measurements).
    static let converter = Int32(SRC_SINC_FASTEST)

    /// The converter's name, e.g. "Fastest Sinc Interpolator" (`src_get_name`).
    static var converterName: String { String(cString: src_get_name(converter)) }

    let channels: Int
    private let state: OpaquePointer
    /// Input not yet taken by libsamplerate.
    private var staging: ResamplerStaging
    /// Where libsamplerate reads, and what its next call needs.
    private(set) var position: SampleratePosition
    /// The ratio the transition in progress has reached (at the end of the last call), its target, and the output
    /// frames it has left.
    private var rampValue: Double
    private var rampTarget: Double
    private var rampFramesLeft = 0

    /// Creates a converter at `ratio` (output ÷ input) primed with `primingFrames` of silence.
    /// - Parameters:
    ///   - lookaheadFrames: measured by `calibrate` (see `SampleratePosition`).
    ///   - maximumInputFrames: the most input one call gives; staging holds four calls' worth beyond the lookahead.
    /// - Throws: `.creationFailed` with libsamplerate's message if `src_new` or `src_set_ratio` fails.
    /// Control plane only (allocates).
    init(
        channels: Int, ratio: Double, lookaheadFrames: Int, maximumInputFrames: Int, primingFrames: Int
    ) throws(ResamplerError) {
        var error: Int32 = 0
        guard let state = src_new(Self.converter, Int32(channels), &error) else {
            throw ResamplerError(.creationFailed, samplerate: error)
        }
        let status = src_set_ratio(state, ratio)
        guard status == 0 else {
            src_delete(state)
            throw ResamplerError(.creationFailed, samplerate: status)
        }
        self.channels = channels
        self.state = state
        staging = ResamplerStaging(
            channels: channels, capacityFrames: primingFrames + lookaheadFrames + 4 * maximumInputFrames,
            silentFrames: primingFrames)
        position = SampleratePosition(
            lookaheadFrames: lookaheadFrames, channels: channels, ratio: ratio, heldFrames: primingFrames)
        rampValue = ratio
        rampTarget = ratio
    }

    /// Releases the converter and the staging buffer. Control plane, once.
    func free() {
        src_delete(state)
        staging.free()
    }

    /// Input frames held (in libsamplerate's buffer and in staging) beyond the next output frame's position.
    /// Realtime-safe: yes.
    var heldInputFrames: Double { position.heldInputFrames }

    /// The ratio (output ÷ input) libsamplerate ended its last call on. Realtime-safe: yes.
    var ratio: Double { position.lastRatio }

    /// Input frames the next `process` needs to produce `frames` output frames. Realtime-safe: yes.
    func inputFramesNeeded(forOutputFrames frames: Int) -> Int {
        position.inputFramesNeeded(forOutputFrames: frames, toward: callTarget(forOutputFrames: frames))
    }

    /// Takes all `inputFrames` of `input` and writes up to `outputFrames` frames to `output`; returns how many
    /// (all of them when the input reached `inputFramesNeeded`).
    /// - Precondition: the input still staged fits the staging buffer (callers give about what
    ///   `inputFramesNeeded` asks; four calls' worth of surplus is room enough).
    /// - Throws: `.processingFailed` with libsamplerate's message if `src_process` fails (its state is then
    ///   unknown; it does not fail on valid input). Allocates nothing.
    /// Realtime-safe: yes.
    mutating func process(
        input: UnsafePointer<Float>?, inputFrames: Int, output: UnsafeMutablePointer<Float>, outputFrames: Int
    ) throws(ResamplerError) -> Int {
        staging.append(input, count: inputFrames)
        let base = staging.base
        guard outputFrames > 0 else {
            position.record(inputFrames: inputFrames, producedFrames: 0, requestedFrames: 0, toward: rampValue)
            return 0
        }
        let target = callTarget(forOutputFrames: outputFrames)
        var data = SRC_DATA(
            data_in: base, data_out: output, input_frames: staging.frames, output_frames: outputFrames,
            input_frames_used: 0, output_frames_gen: 0, end_of_input: 0, src_ratio: target)
        let status = src_process(state, &data)
        guard status == 0 else { throw ResamplerError(.processingFailed, samplerate: status) }
        let used = data.input_frames_used
        let produced = data.output_frames_gen
        staging.removeFirst(used)
        position.record(
            inputFrames: inputFrames, producedFrames: produced, requestedFrames: outputFrames, toward: target)
        rampValue = target
        rampFramesLeft = max(0, rampFramesLeft - outputFrames)
        return produced
    }

    /// Moves the ratio (output ÷ input) to `target`: linearly over the next `transitionFrames` output frames
    /// (rounded up to the end of a call), or at once (`src_set_ratio`) if 0.
    /// - Throws: `.correctionRejected` with libsamplerate's message if `src_set_ratio` refuses the ratio.
    /// Realtime-safe: yes.
    mutating func setRatio(_ target: Double, transitionFrames: Int) throws(ResamplerError) {
        precondition(transitionFrames >= 0 && target > 0)
        if transitionFrames == 0 {
            let status = src_set_ratio(state, target)
            guard status == 0 else { throw ResamplerError(.correctionRejected, samplerate: status) }
            position.setRatio(target)
            rampValue = target
        }
        rampTarget = target
        rampFramesLeft = transitionFrames
    }

    /// Asks for one more input frame of lookahead from now on (the warm-up found a period short). Init only.
    mutating func widenLookahead() {
        position.lookaheadFrames += 1
    }

    /// The ratio a call of `frames` output frames ramps to: where the transition in progress is at its end.
    private func callTarget(forOutputFrames frames: Int) -> Double {
        guard rampFramesLeft > frames else { return rampTarget }
        return rampValue + (rampTarget - rampValue) * Double(frames) / Double(rampFramesLeft)
    }
}
