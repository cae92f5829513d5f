/// A plain delay of up to 2 s, in ms: the signal comes out that much later. The delay is the effect, so it is
/// not reported as processing latency; a new delay time takes effect at once. Realtime-safe: `process` (the
/// line is allocated at creation for the longest delay). Thread-safe: no (the engine thread owns it; `Sendable` so that it can be handed to that thread once).
public struct DelayProcessor: @unchecked Sendable {
    public static let parameters = [
        ProcessorParameter(name: "ms", title: "delay", unit: "ms", range: 0...2_000, defaultValue: 0)
    ]

    private let sampleRate: Int
    private let channels: Int
    /// Frames the line holds: the longest delay plus one.
    private let capacity: Int
    /// Owns the line's memory; `lineSamples` is the same memory, read without touching the owner (no
    /// reference counting per period).
    private let line: SampleLine
    private let lineSamples: UnsafeMutableBufferPointer<Float>
    private var writeFrame = 0
    public private(set) var delayFrames: Int

    /// Allocates the line (control plane).
    public init(sampleRate: Int, channels: Int, milliseconds: Double = 0) {
        self.sampleRate = sampleRate
        self.channels = channels
        capacity = sampleRate * 2 + 1
        line = SampleLine(count: capacity * channels)
        lineSamples = line.samples
        delayFrames = Self.frames(milliseconds, sampleRate: sampleRate)
    }

    static func frames(_ milliseconds: Double, sampleRate: Int) -> Int { Int((milliseconds * Double(sampleRate) / 1_000).rounded()) }

    /// Sets parameter `index` (0: ms) to an already validated value.
    public mutating func set(_ index: Int, to value: Double) {
        if index == 0 { delayFrames = min(capacity - 1, Self.frames(value, sampleRate: sampleRate)) }
    }

    /// Delays `frames` interleaved frames in place.
    @_noLocks @_noAllocation
    public mutating func process(_ samples: UnsafeMutableBufferPointer<Float>, frames: Int, channels: Int) {
        guard channels == self.channels else { return }
        let line = lineSamples
        for frame in 0..<frames {
            // Written before it is read, so that a delay of 0 passes the input through and the line always holds
            // the latest history (a longer delay set later plays what came before it).
            var readFrame = writeFrame - delayFrames
            if readFrame < 0 { readFrame += capacity }
            for channel in 0..<channels {
                line[writeFrame * channels + channel] = samples[frame * channels + channel]
                samples[frame * channels + channel] = line[readFrame * channels + channel]
            }
            writeFrame += 1
            if writeFrame == capacity { writeFrame = 0 }
        }
    }
}
