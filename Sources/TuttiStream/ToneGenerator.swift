#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A sine tone, phase-continuous across periods, the same on every channel.
///
/// The phase is kept in [0, 2π) in `Double`, so long runs neither drift nor lose precision. Within a render
/// the samples come from rotating phasors (four, each turned four frames a step, in `Double`: their error after
/// thousands of frames is around 10⁻¹³, far below 24-bit quantization); each render starts them afresh from
/// the phase, so the error never accumulates. Two `sin`/`cos` calls a render instead of one `sin` a frame: the
/// test tone is what the benchmark's senders play, and it should cost what a real sender's input costs, little.
/// Realtime-safe: yes. Thread-safe: no (one owner).
public struct ToneGenerator: Sendable {
    public let frequency: Double
    public let amplitude: Float
    public let sampleRate: Int
    private var phase: Double = 0
    private let step: Double
    private let stepCosine: Double
    private let stepSine: Double
    private let turnCosine: Double
    private let turnSine: Double

    public init(frequency: Double, amplitude: Float, sampleRate: Int) {
        self.frequency = frequency
        self.amplitude = amplitude
        self.sampleRate = sampleRate
        step = 2 * Double.pi * frequency / Double(sampleRate)
        stepCosine = cos(step)
        stepSine = sin(step)
        turnCosine = cos(4 * step)
        turnSine = sin(4 * step)
    }

    /// Writes `frames` frames of `channels` interleaved samples.
    public mutating func render(into output: UnsafeMutableBufferPointer<Float>, frames: Int, channels: Int) {
        precondition(output.count >= frames * channels)
        guard frames > 0, let samples = output.baseAddress else { return }
        let level = Double(amplitude)
        // Four phasors a quarter of the way apart in time (frames k, k+1, k+2, k+3), each turned by four steps a
        // round: four independent multiplication chains instead of one, so a period costs a quarter of the
        // latency. Frame k's value is lane k % 4 of round k / 4.
        var cosines = SIMD4<Double>(repeating: 0)
        var sines = SIMD4<Double>(repeating: 0)
        var (cosine, sine) = (cos(phase), sin(phase))
        for lane in 0..<4 {
            cosines[lane] = cosine
            sines[lane] = sine
            (cosine, sine) = (cosine * stepCosine - sine * stepSine, sine * stepCosine + cosine * stepSine)
        }
        var frame = 0
        while frame < frames {
            let values = SIMD4<Float>(sines * level)
            for lane in 0..<min(4, frames &- frame) {
                let base = samples + (frame &+ lane) &* channels
                for channel in 0..<channels { base[channel] = values[lane] }
            }
            (cosines, sines) = (cosines * turnCosine - sines * turnSine, sines * turnCosine + cosines * turnSine)
            frame &+= 4
        }
        phase = (phase + Double(frames) * step).truncatingRemainder(dividingBy: 2 * Double.pi)
    }
}
