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
            let (chunkPeak, chunkSum) = Self.peakAndSumOfSquares(samples, from: frame * channels, to: (frame + take) * channels)
            if chunkPeak > peak { peak = chunkPeak }
            sumOfSquares += chunkSum
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

extension LevelMeter {
    /// The largest magnitude and the sum of squares of `samples[start..<end]`, eight samples at a time into
    /// eight independent accumulators (squares summed in `Double`, exact as before up to the order of the
    /// additions), so a period costs about a cycle a sample rather than one dependent addition each. NaN samples
    /// are skipped by the peak and make the sum NaN, as before. Realtime-safe: yes.
    @inline(__always)
    static func peakAndSumOfSquares(_ samples: UnsafeBufferPointer<Float>, from start: Int, to end: Int) -> (Float, Double) {
        guard let base = samples.baseAddress, end > start else { return (0, 0) }
        var index = start
        var peaks: (Float, Float, Float, Float, Float, Float, Float, Float) = (0, 0, 0, 0, 0, 0, 0, 0)
        var sums: (Double, Double, Double, Double, Double, Double, Double, Double) = (0, 0, 0, 0, 0, 0, 0, 0)
        while index + 8 <= end {
            let x = base + index
            sums.0 += Double(x[0]) * Double(x[0])
            sums.1 += Double(x[1]) * Double(x[1])
            sums.2 += Double(x[2]) * Double(x[2])
            sums.3 += Double(x[3]) * Double(x[3])
            sums.4 += Double(x[4]) * Double(x[4])
            sums.5 += Double(x[5]) * Double(x[5])
            sums.6 += Double(x[6]) * Double(x[6])
            sums.7 += Double(x[7]) * Double(x[7])
            if x[0].magnitude > peaks.0 { peaks.0 = x[0].magnitude }
            if x[1].magnitude > peaks.1 { peaks.1 = x[1].magnitude }
            if x[2].magnitude > peaks.2 { peaks.2 = x[2].magnitude }
            if x[3].magnitude > peaks.3 { peaks.3 = x[3].magnitude }
            if x[4].magnitude > peaks.4 { peaks.4 = x[4].magnitude }
            if x[5].magnitude > peaks.5 { peaks.5 = x[5].magnitude }
            if x[6].magnitude > peaks.6 { peaks.6 = x[6].magnitude }
            if x[7].magnitude > peaks.7 { peaks.7 = x[7].magnitude }
            index += 8
        }
        var sum = ((sums.0 + sums.1) + (sums.2 + sums.3)) + ((sums.4 + sums.5) + (sums.6 + sums.7))
        var peak = max(max(max(peaks.0, peaks.1), max(peaks.2, peaks.3)), max(max(peaks.4, peaks.5), max(peaks.6, peaks.7)))
        while index < end {
            let sample = base[index]
            if sample.magnitude > peak { peak = sample.magnitude }
            sum += Double(sample) * Double(sample)
            index += 1
        }
        return (peak, sum)
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
