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
/// the samples come from a rotating phasor (one complex multiplication a frame, in `Double`: its error after
/// thousands of frames is around 10⁻¹³, far below 24-bit quantization); each render starts it afresh from the
/// phase, so the error never accumulates. Two `sin`/`cos` calls a render instead of one `sin` a frame: the
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

    public init(frequency: Double, amplitude: Float, sampleRate: Int) {
        self.frequency = frequency
        self.amplitude = amplitude
        self.sampleRate = sampleRate
        step = 2 * Double.pi * frequency / Double(sampleRate)
        stepCosine = cos(step)
        stepSine = sin(step)
    }

    /// Writes `frames` frames of `channels` interleaved samples.
    public mutating func render(into output: UnsafeMutableBufferPointer<Float>, frames: Int, channels: Int) {
        precondition(output.count >= frames * channels)
        var cosine = cos(phase)
        var sine = sin(phase)
        let level = Double(amplitude)
        for frame in 0..<frames {
            let value = Float(level * sine)
            for channel in 0..<channels { output[frame * channels + channel] = value }
            (cosine, sine) = (cosine * stepCosine - sine * stepSine, sine * stepCosine + cosine * stepSine)
        }
        phase = (phase + Double(frames) * step).truncatingRemainder(dividingBy: 2 * Double.pi)
    }
}
