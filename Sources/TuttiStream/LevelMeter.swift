#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// Peak and RMS level of a stream, measured over consecutive windows of a fixed number of frames, as a
/// level meter shows it.
///
/// The device thread hands it every period (`measure`); when a window completes, `measure` returns its
/// reading, which the caller publishes (`PublishedLevel`) for the control plane. A period that crosses a
/// window boundary is split there, so windows are exact whatever the period sizes; a period longer than a
/// window completes several and returns the last. Levels are taken over all channels together: the peak is
/// the largest |x| of any sample, the RMS the root of the mean square of all samples.
///
/// Realtime-safe: yes (no allocation, lock or log). Thread-safe: no (one owner, the device thread).
public struct LevelMeter: Sendable {
    /// Frames per window.
    public let windowFrames: Int
    private var framesInWindow = 0
    private var samplesInWindow = 0
    private var peak: Float = 0
    private var sumOfSquares: Double = 0

    /// Frames in the standard window at `sampleRate`: 0.5 s, so a display refreshed every second misses at most
    /// half of the audio's peaks. Any thread.
    public static func standardWindowFrames(sampleRate: Int) -> Int { max(1, sampleRate / 2) }

    /// - Precondition: `windowFrames` > 0.
    public init(windowFrames: Int) {
        precondition(windowFrames > 0, "a level window needs at least one frame")
        self.windowFrames = windowFrames
    }

    /// Adds `frames` frames of `channels` interleaved samples.
    /// - Returns: the reading of the last window this call completed, or nil when none did.
    /// - Precondition: `samples.count >= frames × channels`, `channels` > 0.
    /// Realtime-safe: yes. Device thread.
    @_noLocks @_noAllocation
    public mutating func measure(_ samples: UnsafeBufferPointer<Float>, frames: Int, channels: Int) -> LevelReading? {
        precondition(channels > 0 && frames >= 0 && samples.count >= frames * channels)
        var completed: LevelReading?
        var frame = 0
        while frame < frames {
            let take = min(frames - frame, windowFrames - framesInWindow)
            var windowPeak = peak
            var sum = 0.0
            for index in (frame * channels)..<((frame + take) * channels) {
                let sample = samples[index]
                let magnitude = sample.magnitude
                if magnitude > windowPeak { windowPeak = magnitude }
                sum += Double(sample) * Double(sample)
            }
            peak = windowPeak
            sumOfSquares += sum
            framesInWindow += take
            samplesInWindow += take * channels
            frame += take
            if framesInWindow == windowFrames {
                completed = LevelReading(peak: peak, meanSquare: Float(sumOfSquares / Double(samplesInWindow)))
                framesInWindow = 0
                samplesInWindow = 0
                peak = 0
                sumOfSquares = 0
            }
        }
        return completed
    }
}

/// One window's level: peak |x| and mean square, linear (1.0 is full scale). The device thread stores the
/// mean square; the square root and logarithms are left to the reader.
public struct LevelReading: Hashable, Sendable {
    public var peak: Float
    public var meanSquare: Float

    /// The lowest level reported, in dBFS: digital silence and anything quieter read as this.
    public static let floorDBFS = -120.0

    public init(peak: Float, meanSquare: Float) {
        self.peak = peak
        self.meanSquare = meanSquare
    }

    /// The root of the mean square, linear. Any thread.
    public var rms: Float { meanSquare.squareRoot() }

    /// The peak in dBFS (20·log10 of it; a sine of amplitude 0.5 peaks at −6.02), at least `floorDBFS`; nil when
    /// the audio was not a number. Any thread (not the device thread: it calls `log10`).
    public var peakDBFS: Double? { Self.decibels(amplitude: peak) }

    /// The RMS in dBFS on the same scale (a sine's RMS is 3.01 dB below its peak; a square wave's equals its
    /// peak), at least `floorDBFS`; nil when the audio was not a number. Any thread (not the device thread).
    public var rmsDBFS: Double? { Self.decibels(amplitude: 1, power: meanSquare) }

    /// 20·log10 `amplitude` + 10·log10 `power`, at least `floorDBFS`; nil when either is not a finite number.
    static func decibels(amplitude: Float, power: Float = 1) -> Double? {
        guard amplitude.isFinite, power.isFinite else { return nil }
        guard amplitude > 0, power > 0 else { return floorDBFS }
        return max(floorDBFS, 20 * log10(Double(amplitude)) + 10 * log10(Double(power)))
    }

    /// Both values in one word, for a single atomic store (peak in the high half).
    var bitPattern: UInt64 { UInt64(peak.bitPattern) << 32 | UInt64(meanSquare.bitPattern) }

    init(bitPattern: UInt64) {
        self.init(
            peak: Float(bitPattern: UInt32(truncatingIfNeeded: bitPattern >> 32)),
            meanSquare: Float(bitPattern: UInt32(truncatingIfNeeded: bitPattern)))
    }
}

/// The latest `LevelReading` of a stream, handed from the device thread to the control plane through one
/// atomic word (both values together, so a reader never sees the peak of one window with the RMS of another).
///
/// Writer: the device thread (`publish`). Readers: any thread (`latest`). Lock-free; relaxed ordering, as
/// nothing else is published with it.
public final class PublishedLevel: Sendable {
    /// No reading yet: both halves a NaN no real reading stores (`LevelMeter` never produces a NaN peak).
    private static let none = UInt64.max
    private let bits = Atomic<UInt64>(PublishedLevel.none)

    public init() {}

    /// Publishes a completed window. Realtime-safe: yes. Device thread.
    @inline(__always)
    public func publish(_ reading: LevelReading) {
        bits.store(reading.bitPattern, ordering: .relaxed)
    }

    /// The last window published, or nil before the first completes. Any thread.
    public var latest: LevelReading? {
        let value = bits.load(ordering: .relaxed)
        return value == Self.none ? nil : LevelReading(bitPattern: value)
    }
}
