#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A peak limiter with 1.5 ms of lookahead: no sample leaves above `ceiling` dBFS. The gain comes down over
/// the lookahead before a peak arrives (no overshoot, no click) and recovers over `release` ms. Its latency is
/// the lookahead, reported so that the path's latency includes it. All channels share one gain, so the image
/// does not move. Realtime-safe: `process`. Thread-safe: no (the engine thread owns it; `Sendable` so that it can be handed to that thread once).
public struct LimiterProcessor: @unchecked Sendable {
    public static let parameters = [
        ProcessorParameter(name: "ceiling", title: "highest peak", unit: "dBFS", range: -30...0, defaultValue: -1),
        ProcessorParameter(name: "release", title: "recovery time", unit: "ms", range: 1...1_000, defaultValue: 50),
    ]
    /// The lookahead: the processing latency.
    public let latencyFrames: Int

    private let sampleRate: Int
    private let channels: Int
    private var ceiling: Float
    private var releaseCoefficient: Float
    /// The last `latencyFrames + 1` frames: input samples, the gain each frame needs on its own, and that need
    /// held over the window (the lowest of the last `latencyFrames + 1`).
    /// The memory's owners, kept for its lifetime; the buffers below are the same memory, read without touching
    /// the owners (no reference counting per period).
    private let owners: [SampleLine]
    private let history: UnsafeMutableBufferPointer<Float>
    private let needs: UnsafeMutableBufferPointer<Float>
    private let held: UnsafeMutableBufferPointer<Float>
    /// The sum of `held`, for its moving average.
    private var heldSum: Double
    private var position = 0
    private var gain: Float = 1

    /// Control plane (allocates the lookahead).
    public init(sampleRate: Int, channels: Int, ceilingDB: Double = -1, releaseMilliseconds: Double = 50) {
        self.sampleRate = sampleRate
        self.channels = channels
        latencyFrames = Self.lookaheadFrames(sampleRate: sampleRate)
        ceiling = Float(pow(10, ceilingDB / 20))
        releaseCoefficient = Self.release(releaseMilliseconds, sampleRate: sampleRate)
        owners = [
            SampleLine(count: (latencyFrames + 1) * channels), SampleLine(count: latencyFrames + 1), SampleLine(count: latencyFrames + 1),
        ]
        history = owners[0].samples
        needs = owners[1].samples
        held = owners[2].samples
        needs.update(repeating: 1)
        held.update(repeating: 1)
        heldSum = Double(latencyFrames + 1)
    }

    /// The lookahead at `sampleRate`: 1.5 ms.
    public static func lookaheadFrames(sampleRate: Int) -> Int { max(1, sampleRate * 3 / 2_000) }

    static func release(_ milliseconds: Double, sampleRate: Int) -> Float {
        Float(exp(-1 / (milliseconds / 1_000 * Double(sampleRate))))
    }

    /// Sets parameter `index` (0: ceiling, 1: release) to an already validated value.
    public mutating func set(_ index: Int, to value: Double) {
        switch index {
        case 0: ceiling = Float(pow(10, value / 20))
        case 1: releaseCoefficient = Self.release(value, sampleRate: sampleRate)
        default: break
        }
    }

    /// Limits `frames` interleaved frames in place; the output lags the input by `latencyFrames`.
    ///
    /// The classic lookahead limiter: each frame's own need (ceiling ÷ peak) is held for the window, then
    /// averaged over the window, so that the gain is down to a peak's need by the time it leaves, in a straight
    /// line over the lookahead; above the average it recovers with the release time.
    @_noLocks @_noAllocation
    public mutating func process(_ samples: UnsafeMutableBufferPointer<Float>, frames: Int, channels: Int) {
        guard channels == self.channels else { return }
        let length = latencyFrames + 1
        let history = self.history
        let needs = self.needs
        let held = self.held
        for frame in 0..<frames {
            var peak: Float = 0
            for channel in 0..<channels {
                let input = samples[frame * channels + channel]
                history[position * channels + channel] = input
                peak = max(peak, abs(input))
            }
            needs[position] = peak > ceiling ? ceiling / peak : 1
            var lowest: Float = 1
            for index in 0..<length { lowest = min(lowest, needs[index]) }
            heldSum += Double(lowest) - Double(held[position])
            held[position] = lowest
            let average = Float(heldSum / Double(length))
            gain = average <= gain ? average : average - (average - gain) * releaseCoefficient
            var oldest = position + 1
            if oldest == length { oldest = 0 }
            for channel in 0..<channels {
                samples[frame * channels + channel] = history[oldest * channels + channel] * gain
            }
            position = oldest
        }
    }
}
