#if canImport(Glibc)
import Glibc
#endif

/// The level of one frequency in a recording: the amplitude of the sine of that frequency in the samples,
/// measured through a Hann window (the window's far sidelobes fall so fast that a tone a few hundred hertz away
/// leaks into the estimate at around −130 dB over a fraction of a second, where a plain fit over a window that is
/// not a whole number of both tones' periods would leak at −55 dB), in dB relative to full scale (a full-scale
/// sine is 0 dB). What a track's crosstalk is measured with: the level of another track's tone in it, relative to
/// its own tone's level. A signal with none of it gives `floorDecibels`.
///
/// Thread-safe: a pure function, any thread.
public enum SineLevel {
    /// The level reported for no energy at all (a digital zero).
    public static let floorDecibels = -300.0

    /// The amplitude of `frequency` Hz in `samples` at `sampleRate`, as a linear peak value:
    /// 2 |Σ x[n] w[n] e^(−iωn)| / Σ w[n], with w the Hann window over the samples.
    public static func amplitude(of frequency: Double, in samples: ArraySlice<Float>, sampleRate: Int) -> Double {
        precondition(frequency > 0 && sampleRate > 0)
        let count = samples.count
        guard count > 1 else { return 0 }
        let step = 2 * Double.pi * frequency / Double(sampleRate)
        let windowStep = 2 * Double.pi / Double(count - 1)
        var real = 0.0
        var imaginary = 0.0
        var weight = 0.0
        for (index, sample) in samples.enumerated() {
            let window = 0.5 - 0.5 * cos(windowStep * Double(index))
            let phase = step * Double(index)
            real += Double(sample) * window * cos(phase)
            imaginary -= Double(sample) * window * sin(phase)
            weight += window
        }
        return 2 * (real * real + imaginary * imaginary).squareRoot() / weight
    }

    /// `amplitude(of:in:sampleRate:)` in dB relative to full scale (`floorDecibels` for none).
    public static func decibels(of frequency: Double, in samples: ArraySlice<Float>, sampleRate: Int) -> Double {
        let level = amplitude(of: frequency, in: samples, sampleRate: sampleRate)
        return level > 0 ? max(floorDecibels, 20 * log10(level)) : floorDecibels
    }
}
