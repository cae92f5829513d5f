#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One parametric EQ band: a peaking filter (the biquad of Robert Bristow-Johnson's Audio EQ Cookbook) at
/// `freq` Hz, `db` of boost or cut, bandwidth `q`. A change takes effect at the next period, its coefficients
/// recomputed once (a peaking filter's state carries over without a click for moderate steps). Latency 0.
/// Realtime-safe: `process` (no allocation, no lock). Thread-safe: no (the engine thread owns it; `Sendable` so that it can be handed to that thread once).
public struct EQBandProcessor: @unchecked Sendable {
    public static let parameters = [
        ProcessorParameter(name: "freq", title: "centre frequency", unit: "Hz", range: 20...20_000, defaultValue: 1_000),
        ProcessorParameter(name: "db", title: "boost or cut", unit: "dB", range: -24...24, defaultValue: 0),
        ProcessorParameter(name: "q", title: "bandwidth (Q)", unit: "", range: 0.1...18, defaultValue: 0.707),
    ]

    /// Normalized coefficients (a0 = 1).
    struct Coefficients: Sendable, Equatable {
        var b0 = 1.0, b1 = 0.0, b2 = 0.0, a1 = 0.0, a2 = 0.0
    }

    /// Transposed direct form II state of one channel.
    struct ChannelState: Sendable {
        var z1 = 0.0, z2 = 0.0
    }

    /// The channels' states, allocated once.
    final class StateLine: @unchecked Sendable {
        let states: UnsafeMutableBufferPointer<ChannelState>
        init(channels: Int) {
            states = .allocate(capacity: max(1, channels))
            states.initialize(repeating: ChannelState())
        }
        deinit { states.deallocate() }
    }

    private let sampleRate: Int
    public private(set) var frequency: Double
    public private(set) var decibels: Double
    public private(set) var q: Double
    private var coefficients = Coefficients()
    private var needsCoefficients = true
    /// One state per channel, allocated once; `channelStates` is the same memory, read without touching its
    /// owner (no copy on write, no reference counting per period).
    private let states: StateLine
    private let channelStates: UnsafeMutableBufferPointer<ChannelState>

    /// Control plane (allocates the per-channel state).
    public init(sampleRate: Int, channels: Int, frequency: Double = 1_000, decibels: Double = 0, q: Double = 0.707) {
        self.sampleRate = sampleRate
        self.frequency = frequency
        self.decibels = decibels
        self.q = q
        states = StateLine(channels: channels)
        channelStates = states.states
    }

    /// Sets parameter `index` (0: freq, 1: db, 2: q) to an already validated value.
    public mutating func set(_ index: Int, to value: Double) {
        switch index {
        case 0: frequency = value
        case 1: decibels = value
        case 2: q = value
        default: return
        }
        needsCoefficients = true
    }

    /// The cookbook's peakingEQ: A = 10^(dB/40), w0 = 2π f/Fs, α = sin(w0)/(2Q).
    static func peaking(frequency: Double, decibels: Double, q: Double, sampleRate: Int) -> Coefficients {
        let amplitude = pow(10, decibels / 40)
        let omega = 2 * Double.pi * min(frequency, Double(sampleRate) * 0.49) / Double(sampleRate)
        let alpha = sin(omega) / (2 * q)
        let cosine = cos(omega)
        let a0 = 1 + alpha / amplitude
        return Coefficients(
            b0: (1 + alpha * amplitude) / a0, b1: -2 * cosine / a0, b2: (1 - alpha * amplitude) / a0, a1: -2 * cosine / a0,
            a2: (1 - alpha / amplitude) / a0)
    }

    /// Filters `frames` interleaved frames in place.
    public mutating func process(_ samples: UnsafeMutableBufferPointer<Float>, frames: Int, channels: Int) {
        guard channels == channelStates.count else { return }
        if needsCoefficients {
            coefficients = Self.peaking(frequency: frequency, decibels: decibels, q: q, sampleRate: sampleRate)
            needsCoefficients = false
        }
        Self.filter(samples, frames: frames, channels: channels, coefficients, channelStates)
    }

    @_noLocks @_noAllocation
    static func filter(
        _ samples: UnsafeMutableBufferPointer<Float>, frames: Int, channels: Int, _ c: Coefficients,
        _ states: UnsafeMutableBufferPointer<ChannelState>
    ) {
        for channel in 0..<channels {
            var state = states[channel]
            for frame in 0..<frames {
                let index = frame * channels + channel
                let input = Double(samples[index])
                let output = c.b0 * input + state.z1
                state.z1 = c.b1 * input - c.a1 * output + state.z2
                state.z2 = c.b2 * input - c.a2 * output
                samples[index] = Float(output)
            }
            states[channel] = state
        }
    }
}
