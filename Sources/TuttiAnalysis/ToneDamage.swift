#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// How much of a returned steady sine is damaged, in 64-frame blocks (the lab benchmark's audio figure).

/// Damaged blocks of a sine of known frequency. Each block of `blockFrames` frames is fitted with the best
/// sine of that frequency (least squares, any phase); a block is damaged when its amplitude is off the
/// median block's (`Percentile`) by more than 1 dB, or the residual power is above −40 dB of the fitted
/// sine's. That catches gaps, clicks and concealment that does not continue the tone; concealment that
/// does continue it (a repeated whole period) is not damage.
///
/// Thread-safe: a value; `measure` is a pure function any thread may call.
public struct ToneDamage: Hashable, Sendable, Codable {
    /// Blocks fitted.
    public var toneBlocks: Int
    /// Blocks damaged; `nil` when no block was fitted (likewise the two figures below; left out of the JSON).
    public var damagedBlocks: Int?
    /// Damaged time, milliseconds.
    public var damagedMs: Double?
    /// The median block's fitted amplitude (the reference level).
    public var toneAmplitude: Double?

    /// The damage in `tone[start..<end]` (clamped to the samples) of a sine of `frequency` Hz sampled at
    /// `sampleRate`. A trailing partial block is left out.
    public static func measure(
        _ tone: [Float], sampleRate: Int, frequency: Double, from start: Int, to end: Int, blockFrames: Int = 64
    ) -> ToneDamage {
        precondition(sampleRate > 0 && blockFrames > 0, "a sample rate and a block size are positive")
        let omega = 2 * Double.pi * frequency / Double(sampleRate)
        let sines = (0..<blockFrames).map { sin(omega * Double($0)) }
        let cosines = (0..<blockFrames).map { cos(omega * Double($0)) }
        let ss = sines.reduce(0) { $0 + $1 * $1 }
        let cc = cosines.reduce(0) { $0 + $1 * $1 }
        let sc = zip(sines, cosines).reduce(0) { $0 + $1.0 * $1.1 }
        let determinant = ss * cc - sc * sc
        var fits: [(amplitude: Double, residual: Double)] = []
        var offset = Swift.max(0, start)
        let stop = Swift.min(end, tone.count)
        while offset + blockFrames <= stop {
            var ys = 0.0
            var yc = 0.0
            for i in 0..<blockFrames {
                ys += Double(tone[offset + i]) * sines[i]
                yc += Double(tone[offset + i]) * cosines[i]
            }
            let a = (ys * cc - yc * sc) / determinant
            let b = (yc * ss - ys * sc) / determinant
            var residual = 0.0
            for i in 0..<blockFrames {
                let error = Double(tone[offset + i]) - a * sines[i] - b * cosines[i]
                residual += error * error
            }
            fits.append(((a * a + b * b).squareRoot(), residual / Double(blockFrames)))
            offset += blockFrames
        }
        guard let reference = Percentile.nearestRank(50, of: fits.map(\.amplitude)) else {
            return ToneDamage(toneBlocks: 0)
        }
        let low = reference * pow(10, -1.0 / 20)
        let high = reference * pow(10, 1.0 / 20)
        let damaged = fits.filter { fit in
            fit.amplitude < low || fit.amplitude > high || fit.residual > fit.amplitude * fit.amplitude / 2 * 1e-4
        }.count
        return ToneDamage(
            toneBlocks: fits.count, damagedBlocks: damaged,
            damagedMs: Double(damaged * blockFrames) * 1000 / Double(sampleRate), toneAmplitude: reference)
    }
}
