#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A sine tone, phase-continuous across periods, the same on every channel.
///
/// The phase is kept in [0, 2π) in `Double`, so long runs neither drift nor lose precision.
/// Realtime-safe: yes. Thread-safe: no (one owner).
public struct ToneGenerator: Sendable {
    public let frequency: Double
    public let amplitude: Float
    public let sampleRate: Int
    private var phase: Double = 0
    private let step: Double

    public init(frequency: Double, amplitude: Float, sampleRate: Int) {
        self.frequency = frequency
        self.amplitude = amplitude
        self.sampleRate = sampleRate
        step = 2 * Double.pi * frequency / Double(sampleRate)
    }

    /// Writes `frames` frames of `channels` interleaved samples.
    public mutating func render(into output: UnsafeMutableBufferPointer<Float>, frames: Int, channels: Int) {
        precondition(output.count >= frames * channels)
        for frame in 0..<frames {
            let value = amplitude * Float(sin(phase))
            for channel in 0..<channels { output[frame * channels + channel] = value }
            phase += step
            if phase >= 2 * Double.pi { phase -= 2 * Double.pi }
        }
    }
}
