/// The library behind `Resampler.Mode.nearUnityDrift`: a resampler built for a ratio that stays within a few
/// hundred ppm of 1 and changes a little every period (clock-drift compensation between two devices at the same
/// nominal rate).
///
/// `Benchmarks/results/resampler-comparison.md` compares them with libsamplerate (`.lowLatencyVariableRatio`): cost
/// per 64-frame stereo period, delay, THD+N at ±200 ppm.
public enum NearUnityLibrary: Hashable, Sendable {
    /// zita-resampler's `VResampler` (Fons Adriaensen; libzita-resampler): a polyphase sinc filter of `halfLength`
    /// taps a side (8...96), interpolated linearly between 120 phases, the ratio step smoothed per output frame.
    /// Delay about `halfLength` frames.
    case zitaVResampler(halfLength: Int)
    /// speexdsp's resampler (`speex_resampler_set_rate_frac`, `speex_resampler_process_interleaved_float`) at
    /// `quality` 0...10 (its filter is 8–256 taps long, interpolated in an oversampled table). The ratio is a
    /// fraction with a denominator of 65 521 (15 ppm steps: speexdsp overflows beyond); each change recomputes the
    /// filter table.
    case speexDSP(quality: Int)
    /// Tutti's own (`CNearUnity`): a Kaiser-windowed sinc (β 10) of `halfLength` taps a side (a multiple of 4 in
    /// 8...64), cut off at the Nyquist frequency, tabulated at 256 fractional positions normalized to unity gain
    /// and interpolated linearly between them; the ratio glides per output frame like zita's. Made for the near-unity
    /// case: one period reads one or two rows of its table, every frame is one coefficient interpolation and one
    /// dot product per channel in 8-wide vectors (AVX2 and FMA where the CPU has them; stereo at half-length 16
    /// by hand). Delay about `halfLength` frames.
    case polyphase(halfLength: Int)

    /// The library `.nearUnityDrift` uses unless told otherwise: the one the comparison chose (see
    /// `Benchmarks/README.md`, "Near-unity drift resamplers").
    public static let recommended: NearUnityLibrary = .polyphase(halfLength: 16)

    /// A short name for reports and `Resampler.engine`, e.g. "zita-resampler VResampler, half-length 32".
    public var name: String {
        switch self {
        case .zitaVResampler(let halfLength): "zita-resampler VResampler, half-length \(halfLength)"
        case .speexDSP(let quality): "speexdsp, quality \(quality)"
        case .polyphase(let halfLength): "Tutti polyphase sinc, half-length \(halfLength)"
        }
    }
}
