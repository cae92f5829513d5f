#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Gain in dB (−96 dB is silence), gliding over 10 ms on a change. Latency 0. Realtime-safe: `process` (no
/// allocation, no lock). Thread-safe: no (the engine thread owns it).
public struct GainProcessor: Sendable {
    public static let parameters = [
        ProcessorParameter(name: "db", title: "gain", unit: "dB", range: -96...24, defaultValue: 0)
    ]
    /// At or below this the output is silence.
    static let silenceDB = -96.0

    private var decibels: ParameterRamp
    private var linear: Float

    public init(sampleRate: Int, decibels: Double = 0) {
        self.decibels = ParameterRamp(value: decibels, rampFrames: sampleRate / 100)
        linear = Self.linear(decibels)
    }

    public var currentDecibels: Double { decibels.target }

    /// Sets parameter `index` (0: db) to an already validated value.
    public mutating func set(_ index: Int, to value: Double) {
        if index == 0 { decibels.glide(to: value) }
    }

    static func linear(_ decibels: Double) -> Float { decibels <= silenceDB ? 0 : Float(pow(10, decibels / 20)) }

    /// Applies the gain in place to `frames` interleaved frames of `channels` channels.
    public mutating func process(_ samples: UnsafeMutableBufferPointer<Float>, frames: Int, channels: Int) {
        guard decibels.isGliding else {
            Self.scale(samples, count: frames * channels, by: linear)
            return
        }
        for frame in 0..<frames {
            linear = Self.linear(decibels.next())
            for channel in 0..<channels { samples[frame * channels + channel] *= linear }
        }
    }

    @_noLocks @_noAllocation
    static func scale(_ samples: UnsafeMutableBufferPointer<Float>, count: Int, by factor: Float) {
        for index in 0..<count { samples[index] *= factor }
    }
}
