import CSoxr

/// Sample-rate conversion of interleaved `Float` audio (any number of channels) over libsoxr, libsamplerate,
/// zita-resampler or speexdsp, shaped for a device thread that must hand exactly `frames` output frames to its
/// device every period.
///
/// **Four uses.**
/// - `.fixedRatio`: one rate to another (44.1 ↔ 48 kHz, any pair in `supportedRates`) with libsoxr's
///   high-quality recipe (`SOXR_HQ`: 20-bit precision, linear phase, DFT engine). Latency 890–1 060 output
///   frames at 44.1 ↔ 48 kHz (20–22 ms): that engine works in DFT blocks of 740–900 output frames.
/// - `.variableRatio`: the ratio may change every period by a `correction` (see `setCorrection`) within the
///   range chosen at init, for clock-drift compensation (libsoxr's `SOXR_VR` engine, "vr32"; each change is
///   slewed over `transitionFrames` output frames by `soxr_set_io_ratio`). Latency about 290 frames at 48 kHz (6 ms).
/// - `.lowLatencyVariableRatio`: the same contract as `.variableRatio`, over libsamplerate (`src_process` with
///   `SRC_SINC_FASTEST`, the ratio changed between calls and ramped linearly within each; see
///   `SamplerateEngine`). It holds back only its sinc filter's half-length plus under a frame of fractional
///   position: `delayFrames` 20 frames at 48 → 48 kHz (0.42 ms), 20.8–21.9 at 44.1 → 48 kHz (0.45 ms), against
///   about 290 for `.variableRatio` (the half-length is fixed in input frames, widened when decimating: 2.3–2.6 ms
///   at the 8 ↔ 192 kHz extremes). THD+N of a 1 kHz tone: −119 dB at 44.1 → 48 kHz and at 48 kHz ± 200 ppm,
///   −105 dB at 48 → 44.1 kHz (libsoxr: −115 to −134 dB). The short filter's price is its passband: flat within
///   0.2 dB to 16 kHz, then −0.5 dB at 18 kHz and −6 dB at 20 kHz at 48 kHz (−4.3 dB at 18 kHz through 44.1 kHz),
///   even at 48 → 48 kHz. A switch of one argument for callers:
///   `mode: .lowLatencyVariableRatio(maximumCorrectionPPM: 1_000)`.
/// - `.nearUnityDrift`: drift compensation between two clocks at the same nominal rate, over a resampler made
///   for near-unity ratios (`NearUnityLibrary`; by default Tutti's polyphase sinc, half-length 16: 19 frames of
///   delay, THD+N −112 dB at 1 kHz and −111 dB at 10 kHz at ±200 ppm, about 3 times cheaper per 64-frame
///   stereo period than zita-resampler's `VResampler` and 10 times than libsamplerate;
///   `Benchmarks/results/resampler-comparison.md`). Its demand and
///   latency follow `ResamplerFrameAccount`, like libsoxr's, with a lead measured at init.
///   `Mode.driftCompensation(inputRate:outputRate:maximumCorrectionPPM:)` picks it for equal rates and
///   `.lowLatencyVariableRatio` otherwise.
///
/// **Device-thread protocol**, once per period:
/// ```swift
/// try resampler.setCorrection(correction, transitionFrames: frames)  // variable ratio only
/// let needed = resampler.inputFramesNeeded(forOutputFrames: frames)
/// jitterBuffer.read(into: input, frames: needed, now: now, captureClockNow: captureNow)
/// try resampler.process(input: input, inputFrames: needed, output: output, outputFrames: frames)
/// correction = controller.update(level: …, target: …)  // this read's level, for the next period
/// ```
/// `process` takes all the input it is given and writes exactly `outputFrames` frames. It can do so because
/// the resampler is primed at init with `leadFrames` of silence, at least the most libsoxr holds back (measured
/// at init by a calibration run on a probe instance, plus a margin), and because `inputFramesNeeded` keeps that
/// lead (see `ResamplerFrameAccount`): the input taken per period is `frames × ratio`, rounded by a carried
/// fraction, never a block-sized burst. `.lowLatencyVariableRatio` needs no margin: it models libsamplerate's
/// read position exactly (`SampleratePosition`) and asks for exactly the input that completes the period.
/// If a caller gives less input than asked and the library runs short, the rest of the period is silence,
/// counted in `shortfallFrames`.
///
/// **Latency.** `delayFrames` (≈ `leadFrames`) is the latency the resampler adds, in output frames, for
/// latency figures: an input frame given at position i of a period's input leaves at output position
/// (frames produced before that period) + `delayFrames` (read before the call) + i ÷ ratio, within a frame
/// (the peak of its impulse response does).
///
/// **Realtime.** `init` allocates everything: libsoxr's filters, and its internal FIFOs, grown to their
/// steady-state size by a warm-up on silence (covering both extremes of the correction range, so the
/// variable-rate engine's stage switch around ratio 1 is exercised too). After `init`, `process`,
/// `setCorrection`, `inputFramesNeeded` and the properties allocate nothing, take no lock and log nothing:
/// libsoxr's `soxr_process` only reallocates a FIFO that must grow, which the warm-up has done; libsamplerate's
/// `src_process` never allocates (its buffer is made by `src_new`). Checked by `Benchmarks/MediaPath`
/// `Resample-*` (`mallocCountTotal` 0). libsoxr runs single-threaded here (`soxr_runtime_spec(1)`): no OpenMP
/// threads; the system's libsamplerate 0.2.2 has none.
///
/// Thread-safe: no. Control plane creates it; one thread (the device thread) then owns it.
public struct Resampler: ~Copyable {
    /// Fixed or variable ratio (see the type's documentation).
    public enum Mode: Hashable, Sendable {
        /// Constant ratio `inputRate / outputRate`, high quality (`SOXR_HQ`).
        case fixedRatio
        /// Ratio `inputRate / outputRate × correction`, with |correction − 1| ≤ `maximumCorrectionPPM` × 10⁻⁶
        /// (`SOXR_HQ | SOXR_VR`).
        case variableRatio(maximumCorrectionPPM: Double)
        /// Ratio `inputRate / outputRate × correction` as for `.variableRatio`, over libsamplerate
        /// (`SRC_SINC_FASTEST`): about 20 frames of latency instead of about 290.
        case lowLatencyVariableRatio(maximumCorrectionPPM: Double)
        /// Drift compensation between two clocks at the same nominal rate (`inputRate == outputRate`): ratio
        /// `correction`, over a resampler made for near-unity ratios (`library`; see `NearUnityLibrary`).
        case nearUnityDrift(maximumCorrectionPPM: Double, library: NearUnityLibrary = .recommended)

        /// The mode a receiver uses to follow a sender's clock: `.nearUnityDrift` when the rates are the same,
        /// else `.lowLatencyVariableRatio` (real rate conversion, e.g. 44.1 → 48 kHz). Any thread.
        public static func driftCompensation(
            inputRate: Int, outputRate: Int, maximumCorrectionPPM: Double
        ) -> Mode {
            inputRate == outputRate
                ? .nearUnityDrift(maximumCorrectionPPM: maximumCorrectionPPM)
                : .lowLatencyVariableRatio(maximumCorrectionPPM: maximumCorrectionPPM)
        }

        /// The correction range in ppm; nil for `.fixedRatio`.
        var correctionRangePPM: Double? {
            switch self {
            case .fixedRatio: nil
            case .variableRatio(let ppm), .lowLatencyVariableRatio(let ppm), .nearUnityDrift(let ppm, _): ppm
            }
        }
    }

    /// What one `process` call did.
    public struct Result: Hashable, Sendable {
        /// Input frames taken: always all those given.
        public var consumedFrames: Int
        /// Output frames the library produced; less than asked only on a shortfall (the rest is silence).
        public var producedFrames: Int
    }

    /// Rates `init` accepts, in Hz.
    public static let supportedRates: ClosedRange<Int> = 8_000...192_000
    /// Largest correction range `init` accepts, in ppm.
    public static let maximumCorrectionRangePPM: Double = 10_000

    /// Input frames per second. Immutable after init: any thread.
    public let inputRate: Int
    /// Output frames per second.
    public let outputRate: Int
    /// Interleaved samples per frame, in and out.
    public let channels: Int
    /// Fixed or variable ratio, as created.
    public let mode: Mode
    /// Largest `outputFrames` a `process` call may ask for.
    public let maximumOutputFrames: Int
    /// Largest `inputFrames` a `process` call may take, and the largest `inputFramesNeeded` answer: size the
    /// input buffer with it.
    public let maximumInputFrames: Int
    /// `inputRate / outputRate`: input frames per output frame before correction.
    public let nominalRatio: Double
    /// The library's engine for this configuration: libsoxr's `soxr_engine`, e.g. "cr32s" (fixed) or "vr32"
    /// (variable), or "libsamplerate: " and `src_get_name` ("Fastest Sinc Interpolator").
    public let engine: String
    /// The filters' own delay in output frames, measured at init: where an impulse's peak comes out beyond its
    /// position ÷ ratio (≈ 0 for libsoxr's linear-phase fixed-ratio engine and for libsamplerate's symmetric sinc,
    /// ≈ 2 for libsoxr's variable-rate one). Part of `delayFrames`.
    public let filterDelayFrames: Double
    /// The correction in effect: input frames per output frame ÷ `nominalRatio` (1 for `.fixedRatio`).
    /// Above 1 the resampler consumes input faster (the sender's clock is fast). Device thread.
    public private(set) var correction: Double = 1
    /// Output frames replaced by silence because the library had not enough input (0 when callers give what
    /// `inputFramesNeeded` asks). Device thread.
    public private(set) var shortfallFrames: UInt64 = 0

    /// libsoxr (`.fixedRatio`, `.variableRatio`); nil otherwise.
    private let soxr: OpaquePointer?
    /// libsoxr's or the near-unity engine's input demand and latency (unused by `.lowLatencyVariableRatio`).
    private var account: ResamplerFrameAccount
    /// libsamplerate (`.lowLatencyVariableRatio`); nil otherwise.
    private var samplerate: SamplerateEngine?
    /// speexdsp or zita-resampler (`.nearUnityDrift`); nil otherwise.
    private var nearUnity: NearUnityEngine?
    /// Zeros: priming input, and a valid pointer for empty input (libsoxr reads a null input as end of stream).
    private let silence: UnsafeMutableBufferPointer<Float>
    /// Warm-up output, and a valid pointer for empty output.
    private let scratch: UnsafeMutableBufferPointer<Float>

    /// Output frames kept held inside the resampler in steady state (its latency less `filterDelayFrames`):
    /// the most libsoxr holds back in this configuration, measured at init, plus a margin; for
    /// `.lowLatencyVariableRatio`, the most held right after a period: libsamplerate's lookahead (its filter's
    /// half-length plus one, measured at init) less one frame. Realtime-safe: yes.
    public var leadFrames: Double {
        if let engine = samplerate { return Double(engine.position.lookaheadFrames) / nominalRatio - 1 }
        return account.leadFrames
    }

    /// The latency the resampler adds now, in output frames: the input held (given so far, in output frames,
    /// minus output produced; for `.lowLatencyVariableRatio`, minus the position of the next output frame) after
    /// the last `process`, plus `filterDelayFrames` (see the type's documentation). Realtime-safe: yes.
    public var delayFrames: Double {
        if let engine = samplerate { return engine.heldInputFrames * engine.ratio + filterDelayFrames }
        return account.heldFrames + filterDelayFrames
    }

    /// The ratio in effect, input frames per output frame: `nominalRatio × correction`. Realtime-safe: yes.
    public var ratio: Double { nominalRatio * correction }

    /// Creates, calibrates, primes and warms up a resampler. Control plane only (allocates, and runs the library
    /// on about a second of silence: a few milliseconds).
    ///
    /// - Parameters:
    ///   - inputRate, outputRate: in `supportedRates`.
    ///   - channels: interleaved channels per frame (≥ 1).
    ///   - maximumOutputFrames: the largest period the device will ask for (1…65 536).
    ///   - mode: `.fixedRatio`, or `.variableRatio` or `.lowLatencyVariableRatio` with a correction range in
    ///     (0, 10 000] ppm.
    /// - Throws: `.invalidConfiguration` for parameters out of range; `.creationFailed` with the library's message
    ///   if it refuses them or calibration fails.
    public init(
        inputRate: Int, outputRate: Int, channels: Int, maximumOutputFrames: Int, mode: Mode
    ) throws(ResamplerError) {
        guard Self.supportedRates.contains(inputRate), Self.supportedRates.contains(outputRate) else {
            throw ResamplerError(.invalidConfiguration, "sample rate outside 8000...192000 Hz")
        }
        guard channels >= 1, channels <= 256 else {
            throw ResamplerError(.invalidConfiguration, "channel count outside 1...256")
        }
        guard maximumOutputFrames >= 1, maximumOutputFrames <= 65_536 else {
            throw ResamplerError(.invalidConfiguration, "period outside 1...65536 frames")
        }
        var correctionLimit = 0.0
        if let ppm = mode.correctionRangePPM {
            guard ppm > 0, ppm <= Self.maximumCorrectionRangePPM else {
                throw ResamplerError(.invalidConfiguration, "correction range outside (0, 10000] ppm")
            }
            correctionLimit = ppm * 1e-6
        }
        let nominalRatio = Double(inputRate) / Double(outputRate)
        let maximumInputFrames =
            Int((Double(maximumOutputFrames) * nominalRatio * (1 + correctionLimit)).rounded(.up)) + 2

        let silenceFrames = max(maximumInputFrames, 1_024)
        let silence = UnsafeMutableBufferPointer<Float>.allocate(capacity: silenceFrames * channels)
        silence.initialize(repeating: 0)
        let scratch = UnsafeMutableBufferPointer<Float>.allocate(capacity: maximumOutputFrames * channels)
        scratch.initialize(repeating: 0)
        let backend: Backend
        do throws(ResamplerError) {
            if case .lowLatencyVariableRatio = mode {
                backend = try Self.makeSamplerate(
                    channels: channels, nominalRatio: nominalRatio, correctionLimit: correctionLimit,
                    maximumInputFrames: maximumInputFrames)
            } else if case .nearUnityDrift(_, let library) = mode {
                guard inputRate == outputRate else {
                    throw ResamplerError(.invalidConfiguration, "near-unity drift needs equal input and output rates")
                }
                backend = try Self.makeNearUnity(
                    library: library, channels: channels, sampleRate: inputRate, correctionLimit: correctionLimit,
                    maximumInputFrames: maximumInputFrames)
            } else {
                backend = try Self.makePrimedSoxr(
                    inputRate: inputRate, outputRate: outputRate, nominalRatio: nominalRatio, channels: channels,
                    mode: mode, correctionLimit: correctionLimit, silence: silence, scratch: scratch)
            }
        } catch {
            silence.deallocate()
            scratch.deallocate()
            throw error
        }

        self.inputRate = inputRate
        self.outputRate = outputRate
        self.channels = channels
        self.mode = mode
        self.maximumOutputFrames = maximumOutputFrames
        self.maximumInputFrames = maximumInputFrames
        self.nominalRatio = nominalRatio
        self.engine = backend.name
        self.filterDelayFrames = backend.filterDelayFrames
        self.soxr = backend.soxr
        self.samplerate = backend.samplerate
        self.nearUnity = backend.nearUnity
        self.silence = silence
        self.scratch = scratch
        account = backend.account

        warmUp(correctionLimit: correctionLimit)
    }

    deinit {
        if let soxr { soxr_delete(soxr) }
        if let samplerate { samplerate.free() }
        if let nearUnity { nearUnity.free() }
        silence.deallocate()
        scratch.deallocate()
    }

    /// Input frames the next `process` call needs to produce `frames` output frames and keep `leadFrames` held:
    /// `frames × ratio`, give or take one frame of carried fraction; 0 if enough is held already. Capped at
    /// `maximumInputFrames` (reached only after callers gave less than asked). For `.lowLatencyVariableRatio`,
    /// exactly the input that lets libsamplerate compute the period's last frame (one frame less would leave the
    /// period a frame short), following the ratio's transition in progress.
    /// Realtime-safe: yes. Device thread.
    public func inputFramesNeeded(forOutputFrames frames: Int) -> Int {
        precondition(frames >= 0 && frames <= maximumOutputFrames)
        if let engine = samplerate {
            return min(maximumInputFrames, engine.inputFramesNeeded(forOutputFrames: frames))
        }
        return min(maximumInputFrames, account.inputFramesNeeded(forOutputFrames: frames, ratio: ratio))
    }

    /// Resamples: takes all `inputFrames` frames of `input` and writes exactly `outputFrames` frames to `output`
    /// (interleaved, `channels` samples a frame).
    ///
    /// Give it what `inputFramesNeeded(forOutputFrames: outputFrames)` asked for. Less input can leave the
    /// library short: the missing output frames are silence, counted in `shortfallFrames`. More input is taken and
    /// held (it adds latency, shown by `delayFrames`, and lowers the next demands).
    /// - Precondition (`.lowLatencyVariableRatio`): at most four periods' worth of surplus input is held at a
    ///   time (its staging buffer is sized at init; callers that give what is asked hold none).
    /// - Throws: `.processingFailed` with the library's message if `soxr_process` or `src_process` fails (they do
    ///   not in practice: libsoxr only reports errors recorded by earlier calls, libsamplerate only a corrupt
    ///   state). Allocates nothing, even when throwing.
    /// Realtime-safe: yes. Device thread.
    @discardableResult
    public mutating func process(
        input: UnsafeBufferPointer<Float>, inputFrames: Int, output: UnsafeMutableBufferPointer<Float>,
        outputFrames: Int
    ) throws(ResamplerError) -> Result {
        precondition(inputFrames >= 0 && inputFrames <= maximumInputFrames && input.count >= inputFrames * channels)
        precondition(
            outputFrames >= 0 && outputFrames <= maximumOutputFrames && output.count >= outputFrames * channels)
        let source = inputFrames > 0 ? input.baseAddress! : UnsafePointer(silence.baseAddress!)
        let destination = outputFrames > 0 ? output.baseAddress! : scratch.baseAddress!
        var produced = 0
        if samplerate != nil {
            produced = try samplerate!.process(
                input: source, inputFrames: inputFrames, output: destination, outputFrames: outputFrames)
        } else if nearUnity != nil {
            produced = try nearUnity!.process(
                input: source, inputFrames: inputFrames, output: destination, outputFrames: outputFrames)
            account.record(inputFrames: inputFrames, outputFrames: produced, ratio: ratio)
        } else {
            if let error = soxr_process(soxr!, source, inputFrames, nil, destination, outputFrames, &produced) {
                throw ResamplerError(.processingFailed, soxr: error)
            }
            account.record(inputFrames: inputFrames, outputFrames: produced, ratio: ratio)
        }
        if produced < outputFrames {
            for index in (produced * channels)..<(outputFrames * channels) { output[index] = 0 }
            shortfallFrames &+= UInt64(outputFrames - produced)
        }
        return Result(consumedFrames: inputFrames, producedFrames: produced)
    }

    /// Sets the ratio correction for the coming periods: input frames per output frame ÷ `nominalRatio`, e.g.
    /// `DriftController.update`'s result. libsoxr moves to it linearly over the next `transitionFrames` output
    /// frames (`soxr_set_io_ratio`'s slew length; 0: at once), so changes of a few hundred ppm per period are
    /// smooth. libsamplerate (`.lowLatencyVariableRatio`) moves linearly too, each `process` call ramping to where
    /// the transition will be at its end: a transition shorter than a call takes the whole call, and 0 is a step
    /// (`src_set_ratio`).
    /// - Throws: `.correctionRejected` if the resampler is `.fixedRatio`, if |correction − 1| exceeds the range
    ///   chosen at init (or is not finite), or with the library's message if `soxr_set_io_ratio` or
    ///   `src_set_ratio` fails. The correction in effect is then unchanged. Allocates nothing.
    /// Realtime-safe: yes. Device thread.
    public mutating func setCorrection(_ correction: Double, transitionFrames: Int) throws(ResamplerError) {
        guard let ppm = mode.correctionRangePPM else {
            throw ResamplerError(.correctionRejected, "a fixed-ratio resampler cannot change its ratio")
        }
        guard correction.isFinite, abs(correction - 1) <= ppm * 1e-6 * (1 + 1e-9) else {
            throw ResamplerError(.correctionRejected, "correction outside the range chosen at init")
        }
        precondition(transitionFrames >= 0)
        if samplerate != nil {
            try samplerate!.setRatio(1 / (nominalRatio * correction), transitionFrames: transitionFrames)
        } else if nearUnity != nil {
            try nearUnity!.setCorrection(correction, transitionFrames: transitionFrames)
        } else if let error = soxr_set_io_ratio(soxr!, nominalRatio * correction, transitionFrames) {
            throw ResamplerError(.correctionRejected, soxr: error)
        }
        self.correction = correction
    }

    /// Runs the steady-state protocol on silence until libsoxr's FIFOs have reached their working size, so the
    /// device thread never sees them grow; for variable ratios, half of it at each end of the correction range.
    /// Grows the lead if a period came out short (the calibration's margin did not suffice; for libsamplerate,
    /// whose demand is exact, this would mean the measured lookahead is too short, and it grows by a frame).
    /// Init only.
    private mutating func warmUp(correctionLimit: Double) {
        let frames = maximumOutputFrames
        let totalFrames = max(4 * Int(leadFrames), outputRate / 2)
        let periods = (totalFrames + frames - 1) / frames
        for round in 0..<4 {
            var worstShortfall = 0
            for period in 0..<periods {
                if correctionLimit > 0 {
                    let target = period < periods / 2 ? 1 - correctionLimit : 1 + correctionLimit
                    if target != correction { try? setCorrection(target, transitionFrames: frames) }
                }
                let needed = inputFramesNeeded(forOutputFrames: frames)
                let before = shortfallFrames
                _ = try? process(
                    input: UnsafeBufferPointer(silence), inputFrames: needed, output: scratch, outputFrames: frames)
                worstShortfall = max(worstShortfall, Int(shortfallFrames - before))
            }
            if correctionLimit > 0 { try? setCorrection(1, transitionFrames: 0) }
            shortfallFrames = 0
            guard worstShortfall > 0, round < 3 else { break }
            if samplerate != nil {
                samplerate!.widenLookahead()
            } else {
                let margin = nearUnity != nil ? 1.0 : 16.0
                account = ResamplerFrameAccount(
                    leadFrames: account.leadFrames + Double(worstShortfall) + margin, heldFrames: account.heldFrames)
            }
        }
    }

    /// What `init` builds for the mode: one library's converter, calibrated and primed.
    struct Backend {
        var soxr: OpaquePointer?
        var samplerate: SamplerateEngine?
        var nearUnity: NearUnityEngine? = nil
        /// libsoxr's demand and latency account (a placeholder for libsamplerate).
        var account: ResamplerFrameAccount
        var name: String
        var filterDelayFrames: Double
    }

    /// libsoxr for `.fixedRatio` or `.variableRatio`, calibrated and primed with `lead` output frames' worth of
    /// silence, left inside it (no output taken). `silence` and `scratch` are the resampler's (not released here).
    private static func makePrimedSoxr(
        inputRate: Int, outputRate: Int, nominalRatio: Double, channels: Int, mode: Mode, correctionLimit: Double,
        silence: UnsafeMutableBufferPointer<Float>, scratch: UnsafeMutableBufferPointer<Float>
    ) throws(ResamplerError) -> Backend {
        let (heldAtMost, filterDelay) = try Self.calibrate(
            inputRate: inputRate, outputRate: outputRate, nominalRatio: nominalRatio, mode: mode)
        // Margin over the calibration: 16 output frames, plus 32 input frames (upsampling engines emit in
        // steps of several output frames per input frame), plus slack for a drifting ratio.
        let lead = (heldAtMost * (1 + correctionLimit) + 16 + 32 / nominalRatio).rounded(.up)

        let handle = try Self.makeSoxr(
            inputRate: inputRate, outputRate: outputRate, nominalRatio: nominalRatio, channels: channels, mode: mode)
        let silenceFrames = silence.count / channels
        var primed = 0
        let primingFrames = Int((lead * nominalRatio).rounded(.up))
        while primed < primingFrames {
            let count = min(silenceFrames, primingFrames - primed)
            if let error = soxr_process(handle, silence.baseAddress, count, nil, scratch.baseAddress, 0, nil) {
                soxr_delete(handle)
                throw ResamplerError(.creationFailed, soxr: error)
            }
            primed += count
        }
        return Backend(
            soxr: handle, samplerate: nil,
            account: ResamplerFrameAccount(leadFrames: lead, heldFrames: Double(primingFrames) / nominalRatio),
            name: String(cString: soxr_engine(handle)), filterDelayFrames: filterDelay)
    }

    /// libsoxr, configured for `mode`, at the nominal ratio.
    private static func makeSoxr(
        inputRate: Int, outputRate: Int, nominalRatio: Double, channels: Int, mode: Mode
    ) throws(ResamplerError) -> OpaquePointer {
        var io = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I)
        var runtime = soxr_runtime_spec(1)
        var error: soxr_error_t?
        var handle: soxr_t?
        switch mode {
        case .fixedRatio:
            var quality = soxr_quality_spec(UInt(SOXR_HQ), 0)
            handle = soxr_create(
                Double(inputRate), Double(outputRate), UInt32(channels), &error, &io, &quality, &runtime)
        case .lowLatencyVariableRatio, .nearUnityDrift:
            preconditionFailure("the low-latency and near-unity modes do not run on libsoxr")
        case .variableRatio(let ppm):
            // libsoxr's variable-rate engine takes the largest I/O ratio it will see as input rate ÷ output rate.
            var quality = soxr_quality_spec(UInt(SOXR_HQ), UInt(SOXR_VR))
            handle = soxr_create(nominalRatio * (1 + ppm * 1e-6), 1, UInt32(channels), &error, &io, &quality, &runtime)
            if let created = handle, error == nil { error = soxr_set_io_ratio(created, nominalRatio, 0) }
        }
        if let error {
            if let handle { soxr_delete(handle) }
            throw ResamplerError(.creationFailed, soxr: error)
        }
        guard let handle else { throw ResamplerError(.creationFailed, "soxr_create returned no resampler") }
        return handle
    }

    /// Calibration on a mono probe in this configuration: the most output frames' worth of input a fresh libsoxr
    /// holds back while streaming (one second of silence fed in 4-frame steps, all output taken after each step),
    /// then the filters' own delay: where the peak of an impulse fed next comes out, relative to its position
    /// ÷ ratio (about 0 for the linear-phase fixed-ratio engine, about 2 frames for the variable-rate one).
    private static func calibrate(
        inputRate: Int, outputRate: Int, nominalRatio: Double, mode: Mode
    ) throws(ResamplerError) -> (mostHeld: Double, filterDelay: Double) {
        let probe = try makeSoxr(
            inputRate: inputRate, outputRate: outputRate, nominalRatio: nominalRatio, channels: 1, mode: mode)
        defer { soxr_delete(probe) }
        return try calibrateHoldAndDelay(silenceFrames: inputRate, nominalRatio: nominalRatio, step: 4) {
            (feed, count, sink, capacity) throws(ResamplerError) -> Int in
            var done = 0
            if let error = soxr_process(probe, feed, count, nil, sink, capacity, &done) {
                throw ResamplerError(.creationFailed, soxr: error)
            }
            return done
        }
    }
}
