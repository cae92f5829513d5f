import CNearUnity
import CSpeexDSP
import CZitaResampler

/// The converter behind `Resampler`'s `.nearUnityDrift` mode: speexdsp's resampler, zita-resampler's
/// `VResampler` or Tutti's own polyphase sinc (`CNearUnity`) on interleaved `Float`, at a nominal ratio of 1 times a
/// correction that changes between calls.
///
/// **Input it does not need yet.** The libraries take input only as far as the output asked for needs it and
/// leave the rest untaken. The engine copies each call's input into `staging`, behind what is still there, and
/// offers all of it, so a `process` call always takes all its input; what the library left stays staged for the
/// next call. `Resampler` keeps the input demand and the latency with a `ResamplerFrameAccount`, whose lead it
/// measures at init (`calibrateHoldAndDelay`).
///
/// **Ratio.** The correction is input frames per output frame. zita follows a change with a one-pole filter per
/// output frame (time constant a quarter of the transition asked for, so 98 % of the change is done at its end), and
/// so does the polyphase sinc;
/// speexdsp takes it at once, as the fraction round(correction × 65 521) ÷ 65 521 (15 ppm steps), and recomputes its filter table
/// (only when that fraction changes).
///
/// Owns the library's state and the staging buffer: its owner calls `free()` exactly once. `init` allocates;
/// after it nothing does once a warm-up has met both ends of the correction range (speexdsp grows its filter
/// table and history the first time the ratio goes above 1, where it widens its filter; `Resampler`'s warm-up
/// does that). Realtime-safe after warm-up: yes. Thread-safe: no.
struct NearUnityEngine {
    private enum Handle {
        case zita(OpaquePointer)
        case speex(OpaquePointer)
        case polyphase(OpaquePointer)
    }

    /// The polyphase sinc's table: fractional positions, and the Kaiser window's β (with the cut-off at the
    /// Nyquist frequency: THD+N of −110 dB at 10 kHz and ±200 ppm at half-length 16; see
    /// `Benchmarks/results/resampler-comparison.md`).
    static let polyphasePhases: UInt32 = 256
    static let polyphaseKaiserBeta = 10.0

    /// The fraction's denominator for speexdsp: the largest prime whose square fits in 32 bits (15.3 ppm steps).
    /// speexdsp 1.2.1's `set_rate_frac` rescales its phase (< the old denominator) by new ÷ old denominator and
    /// refuses the change (`RESAMPLER_ERR_OVERFLOW`) when that product passes 2³² − 1: with 10⁷ it failed as
    /// soon as the phase passed 429.
    static let speexDenominator: UInt32 = 65_521

    let channels: Int
    let library: NearUnityLibrary
    private let handle: Handle
    /// Input not yet taken by the library.
    private var staging: ResamplerStaging
    /// speexdsp's current numerator (its denominator is `speexDenominator`).
    private var speexNumerator: UInt32
    /// The stream's rate, recorded by speexdsp.
    private let sampleRate: UInt32

    /// Creates the library's resampler at ratio 1 with `primingFrames` of silence staged.
    /// - Parameters:
    ///   - sampleRate: the stream's rate (speexdsp records it; the ratio is what counts).
    ///   - maximumInputFrames: the most input one call gives; staging holds four calls' worth beyond the priming.
    /// - Throws: `.invalidConfiguration` for a half-length outside 8...96 (zita) or not a multiple of 4 in 8...64
    ///   (polyphase), or a quality outside 0...10;
    ///   `.creationFailed` if the library refuses. Control plane only (allocates).
    init(
        library: NearUnityLibrary, channels: Int, sampleRate: Int, maximumInputFrames: Int, primingFrames: Int
    ) throws(ResamplerError) {
        switch library {
        case .zitaVResampler(let halfLength):
            guard (8...96).contains(halfLength) else {
                throw ResamplerError(.invalidConfiguration, "zita-resampler half-length outside 8...96")
            }
            guard let zita = tutti_zita_create(1, UInt32(channels), UInt32(halfLength)) else {
                throw ResamplerError(.creationFailed, "zita-resampler refused the configuration")
            }
            handle = .zita(zita)
        case .speexDSP(let quality):
            guard (0...10).contains(quality) else {
                throw ResamplerError(.invalidConfiguration, "speexdsp quality outside 0...10")
            }
            var error: Int32 = 0
            guard
                let speex = speex_resampler_init_frac(
                    UInt32(channels), Self.speexDenominator, Self.speexDenominator, UInt32(sampleRate),
                    UInt32(sampleRate), Int32(quality), &error), error == 0
            else {
                throw ResamplerError(.creationFailed, speex: error)
            }
            handle = .speex(speex)
        case .polyphase(let halfLength):
            guard (8...64).contains(halfLength), halfLength % 4 == 0 else {
                throw ResamplerError(.invalidConfiguration, "polyphase half-length not a multiple of 4 in 8...64")
            }
            guard
                let polyphase = tutti_near_unity_create(
                    UInt32(channels), UInt32(halfLength), Self.polyphasePhases, 1, Self.polyphaseKaiserBeta)
            else {
                throw ResamplerError(.creationFailed, "the polyphase resampler refused the configuration")
            }
            handle = .polyphase(polyphase)
        }
        self.channels = channels
        self.library = library
        speexNumerator = Self.speexDenominator
        self.sampleRate = UInt32(sampleRate)
        staging = ResamplerStaging(
            channels: channels, capacityFrames: primingFrames + 4 * maximumInputFrames + 256,
            silentFrames: primingFrames)
    }

    /// Releases the library's state and the staging buffer. Control plane, once.
    func free() {
        switch handle {
        case .zita(let zita): tutti_zita_destroy(zita)
        case .speex(let speex): speex_resampler_destroy(speex)
        case .polyphase(let polyphase): tutti_near_unity_destroy(polyphase)
        }
        staging.free()
    }

    /// Takes all `inputFrames` of `input` and writes up to `outputFrames` frames to `output`; returns how many.
    /// - Precondition: the input still staged fits the staging buffer (callers give about what the account asks).
    /// - Throws: `.processingFailed` with the library's message if it fails (it does not on valid input).
    ///   Allocates nothing. Realtime-safe: yes.
    mutating func process(
        input: UnsafePointer<Float>?, inputFrames: Int, output: UnsafeMutablePointer<Float>, outputFrames: Int
    ) throws(ResamplerError) -> Int {
        staging.append(input, count: inputFrames)
        let base = staging.base
        let stagedFrames = staging.frames
        guard outputFrames > 0 else { return 0 }
        var used: UInt32 = 0
        var produced: UInt32 = 0
        switch handle {
        case .zita(let zita):
            let status = tutti_zita_process(
                zita, base, UInt32(stagedFrames), output, UInt32(outputFrames), &used, &produced)
            guard status == 0 else { throw ResamplerError(.processingFailed, "zita-resampler is not set up") }
        case .speex(let speex):
            used = UInt32(stagedFrames)
            produced = UInt32(outputFrames)
            let status = speex_resampler_process_interleaved_float(speex, base, &used, output, &produced)
            guard status == 0 else { throw ResamplerError(.processingFailed, speex: status) }
        case .polyphase(let polyphase):
            tutti_near_unity_process(polyphase, base, UInt32(stagedFrames), output, UInt32(outputFrames), &used, &produced)
        }
        staging.removeFirst(Int(used))
        return Int(produced)
    }

    /// Sets the correction (input frames per output frame): zita moves to it smoothly over about
    /// `transitionFrames` output frames (at once if 0), speexdsp at once.
    /// - Throws: `.correctionRejected` with speexdsp's message if it refuses the fraction. Realtime-safe: yes
    ///   (after the warm-up; speexdsp recomputes its filter table in place, about filter length × oversampling
    ///   sinc values).
    mutating func setCorrection(_ correction: Double, transitionFrames: Int) throws(ResamplerError) {
        switch handle {
        case .zita(let zita):
            // VResampler's relative ratio multiplies output ÷ input.
            tutti_zita_set_relative_ratio(zita, 1 / correction, Double(transitionFrames) / 4)
        case .polyphase(let polyphase):
            tutti_near_unity_set_ratio(polyphase, correction, Double(transitionFrames) / 4)
        case .speex(let speex):
            let numerator = UInt32((correction * Double(Self.speexDenominator)).rounded())
            guard numerator != speexNumerator else { return }
            let status = speex_resampler_set_rate_frac(
                speex, numerator, Self.speexDenominator, sampleRate, sampleRate)
            guard status == 0 else { throw ResamplerError(.correctionRejected, speex: status) }
            speexNumerator = numerator
        }
    }
}
