#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How clean a recorded steady tone is: its fundamental, and everything else (THD+N).
public struct DistortionReport: Hashable, Sendable, Codable {
    /// Frames per second of the recording.
    public var sampleRate: Int
    /// First frame of the analysed window.
    public var start: Int
    /// Frames in the analysed window.
    public var frames: Int
    /// Frequency of the fitted fundamental, in Hz.
    public var frequency: Double
    /// RMS of the fitted fundamental (its amplitude ÷ √2).
    public var fundamentalRMS: Double
    /// RMS of what is left after removing the fundamental and DC: harmonics, noise, spurs.
    public var residualRMS: Double
    /// The fitted DC offset (removed, not counted as distortion).
    public var dc: Double

    /// THD+N in dB: 20 log₁₀(residual RMS ÷ fundamental RMS). −∞ for a perfect tone.
    public var thdPlusNoiseDecibels: Double { 20 * log10(residualRMS / fundamentalRMS) }
}

/// THD+N of a recording of one steady sine tone. Pure. Thread-safe: yes. Not for the audio thread (allocates).
///
/// **Method.**
/// 1. Window: the active span (first to last sample at or above `ToneAnalysis.silenceThreshold`) less
///    `skipFrames` at each end, so start-up transients (a filter's ringing as the tone starts, a fade, the
///    stream's end) are not counted.
/// 2. Frequency: a first estimate from zero crossings (`ToneAnalysis`), or the caller's hint, refined by
///    Gauss–Newton on the least-squares fit: with t the (centred) sample index, fitting
///    x ≈ a sin ωt + b cos ωt + c + t(α sin ωt + β cos ωt) gives the frequency error
///    δω = (aβ − bα) ÷ (a² + b²), since A sin((ω + δω)t + φ) ≈ A sin(ωt + φ) + A δω t cos(ωt + φ). A few
///    iterations reach the least-squares frequency to far better than 1 µHz over a second.
/// 3. Fit at that frequency by linear least squares: x ≈ a sin ωt + b cos ωt + c (sine, cosine and DC).
///    The fundamental's RMS is √((a² + b²) ÷ 2); the residual is x minus the fit.
/// 4. THD+N = residual RMS ÷ fundamental RMS, in dB: full band (DC to Nyquist), unweighted, DC excluded.
///
/// The fit assumes one constant frequency: a tone whose pitch wanders (a resampler whose ratio changes) leaves
/// phase drift in the residual; analyse such recordings in short windows.
public enum DistortionAnalysis {
    /// Analyses one channel.
    ///
    /// - Parameters:
    ///   - samples: one channel of a recording of a steady tone.
    ///   - skipFrames: frames left out at each end of the active span; default 50 ms.
    ///   - frequency: a first estimate of the tone's frequency in Hz (default: from zero crossings).
    /// - Returns: `nil` if the recording is silent, or the window holds fewer than 10 periods of the tone.
    public static func analyze(
        _ samples: [Float], sampleRate: Int, skipFrames: Int? = nil, frequency hint: Double? = nil
    ) -> DistortionReport? {
        guard let first = samples.firstIndex(where: { abs($0) >= ToneAnalysis.silenceThreshold }),
            let last = samples.lastIndex(where: { abs($0) >= ToneAnalysis.silenceThreshold })
        else { return nil }
        let skip = skipFrames ?? sampleRate / 20
        let start = first + skip
        let end = last + 1 - skip
        guard end > start else { return nil }
        let window = samples[start..<end].map(Double.init)
        let guess =
            hint ?? ToneAnalysis.zeroCrossingFrequency(samples, from: start, to: end - 1, sampleRate: sampleRate)
        guard guess > 0, Double(window.count) * guess / Double(sampleRate) >= 10 else { return nil }

        var omega = 2 * Double.pi * guess / Double(sampleRate)
        let half = Double(window.count - 1) / 2
        for _ in 0..<8 {
            guard let fit = leastSquares(window, omega: omega, center: half, withFrequencyError: true) else { break }
            let (a, b, alpha, beta) = (fit[0], fit[1], fit[3], fit[4])
            // The t terms were fitted against t ÷ half (for conditioning): rescale to radians per sample.
            let delta = (a * beta - b * alpha) / (a * a + b * b) / half
            omega += delta
            if abs(delta) * half < 1e-12 { break }
        }
        guard let fit = leastSquares(window, omega: omega, center: half, withFrequencyError: false) else { return nil }
        let (a, b, c) = (fit[0], fit[1], fit[2])
        var residualSquares = 0.0
        for (index, value) in window.enumerated() {
            let phase = omega * (Double(index) - half)
            let residual = value - a * sin(phase) - b * cos(phase) - c
            residualSquares += residual * residual
        }
        return DistortionReport(
            sampleRate: sampleRate, start: start, frames: window.count,
            frequency: omega * Double(sampleRate) / (2 * Double.pi), fundamentalRMS: ((a * a + b * b) / 2).squareRoot(),
            residualRMS: (residualSquares / Double(window.count)).squareRoot(), dc: c)
    }

    /// Least-squares coefficients of x against sin ωt, cos ωt, 1 and, with `withFrequencyError`, (t ÷ center)·sin ωt
    /// and (t ÷ center)·cos ωt, where t = index − center. Normal equations, solved by Gaussian elimination.
    static func leastSquares(_ x: [Double], omega: Double, center: Double, withFrequencyError: Bool) -> [Double]? {
        let size = withFrequencyError ? 5 : 3
        var normal = [Double](repeating: 0, count: size * size)
        var right = [Double](repeating: 0, count: size)
        var basis = [Double](repeating: 0, count: size)
        for (index, value) in x.enumerated() {
            let t = Double(index) - center
            let s = sin(omega * t)
            let c = cos(omega * t)
            basis[0] = s
            basis[1] = c
            basis[2] = 1
            if withFrequencyError {
                basis[3] = t / center * s
                basis[4] = t / center * c
            }
            for row in 0..<size {
                right[row] += basis[row] * value
                for column in row..<size { normal[row * size + column] += basis[row] * basis[column] }
            }
        }
        for row in 0..<size { for column in 0..<row { normal[row * size + column] = normal[column * size + row] } }
        return solve(normal, right, size: size)
    }

    /// Solves the `size`×`size` system by Gaussian elimination with partial pivoting; `nil` if singular.
    static func solve(_ matrix: [Double], _ vector: [Double], size: Int) -> [Double]? {
        var m = matrix
        var v = vector
        for column in 0..<size {
            var pivot = column
            for row in (column + 1)..<size where abs(m[row * size + column]) > abs(m[pivot * size + column]) {
                pivot = row
            }
            guard abs(m[pivot * size + column]) > 1e-300 else { return nil }
            if pivot != column {
                for k in 0..<size { m.swapAt(column * size + k, pivot * size + k) }
                v.swapAt(column, pivot)
            }
            for row in (column + 1)..<size {
                let factor = m[row * size + column] / m[column * size + column]
                if factor == 0 { continue }
                for k in column..<size { m[row * size + k] -= factor * m[column * size + k] }
                v[row] -= factor * v[column]
            }
        }
        var solution = [Double](repeating: 0, count: size)
        for row in stride(from: size - 1, through: 0, by: -1) {
            var sum = v[row]
            for k in (row + 1)..<size { sum -= m[row * size + k] * solution[k] }
            solution[row] = sum / m[row * size + row]
        }
        return solution
    }
}
