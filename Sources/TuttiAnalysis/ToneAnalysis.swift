#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A stretch of a recording where the tone is missing (concealed silence).
public struct Gap: Hashable, Sendable, Codable {
    /// First silent frame.
    public var start: Int
    /// Silent frames.
    public var length: Int
}

/// What a recording of a steady tone shows: its frequency and level, where it starts and ends, and every
/// gap and discontinuity in between.
public struct ToneReport: Hashable, Sendable, Codable {
    public var sampleRate: Int
    public var frames: Int
    /// Frequency over the active span, in Hz (0 if no tone): first from interpolated zero crossings, then
    /// refined by the median phase advance between 10 ms windows, so that concealed or spliced stretches
    /// (a few windows) do not bend it.
    public var frequency: Double
    public var rms: Double
    public var peak: Double
    /// First and last frames where the tone is present (nil when silent throughout).
    public var activeStart: Int?
    public var activeEnd: Int?
    /// Silent runs (≥ `minimumGapFrames`) inside the active span.
    public var gaps: [Gap]
    /// Samples inside the active span (away from gaps and the edges) where the waveform breaks the sine
    /// recurrence: clicks.
    public var discontinuities: Int
    /// The largest sample-to-sample step inside the active span (away from the edges and gaps), as a
    /// fraction of the largest step the tone itself makes (2·peak·sin(π·f/rate)): above 1 is a click, in
    /// the plain sense that the waveform jumps further than the tone ever moves.
    public var largestStepRatio: Double = 0
    /// Steps above the tone's own largest step (by more than 1 %, for rounding), with where the first is.
    public var stepsAboveTone: Int = 0
    public var firstStepAboveTone: Int?

    public var activeSeconds: Double {
        guard let activeStart, let activeEnd else { return 0 }
        return Double(activeEnd - activeStart + 1) / Double(sampleRate)
    }

    public var gapFrames: Int { gaps.reduce(0) { $0 + $1.length } }

    /// Packets of `packetFrames` that the gaps amount to (each gap rounded to whole packets).
    public func missingPackets(packetFrames: Int) -> Int {
        gaps.reduce(0) { $0 + max(1, Int((Double($1.length) / Double(packetFrames)).rounded())) }
    }
}

/// Analyses recordings of a steady sine tone. Pure. Thread-safe: yes.
public enum ToneAnalysis {
    /// Samples with magnitude below this are silence.
    public static let silenceThreshold: Float = 1e-4
    /// Silent runs shorter than this are a sine's zero crossing, not a gap.
    public static let minimumGapFrames = 8

    /// Analyses one channel of a recording.
    ///
    /// - Parameters:
    ///   - samples: one channel, in [-1, 1].
    ///   - edgeFrames: frames at the start and end of the active span (and around gaps) excluded from the
    ///     discontinuity count, where fades are expected.
    ///   - settleFrames: frames after the tone starts that are left out of the gap, discontinuity and step
    ///     figures (a receiver's start-up, while an adaptive buffer first measures the network).
    public static func analyze(_ samples: [Float], sampleRate: Int, edgeFrames: Int = 96, settleFrames: Int = 0) -> ToneReport {
        var report = ToneReport(
            sampleRate: sampleRate, frames: samples.count, frequency: 0, rms: 0, peak: 0, activeStart: nil,
            activeEnd: nil, gaps: [], discontinuities: 0)
        guard let first = samples.firstIndex(where: { abs($0) >= silenceThreshold }),
            let last = samples.lastIndex(where: { abs($0) >= silenceThreshold })
        else { return report }
        report.activeStart = first
        report.activeEnd = last

        var sumSquares = 0.0
        var peak: Float = 0
        for sample in samples[first...last] {
            sumSquares += Double(sample) * Double(sample)
            peak = max(peak, abs(sample))
        }
        report.rms = (sumSquares / Double(last - first + 1)).squareRoot()
        report.peak = Double(peak)

        // Gaps: silent runs inside the active span (after the settling time).
        var runStart: Int?
        let settled = min(last, first + settleFrames)
        for index in settled...last {
            if abs(samples[index]) < silenceThreshold {
                if runStart == nil { runStart = index }
            } else if let start = runStart {
                if index - start >= minimumGapFrames { report.gaps.append(Gap(start: start, length: index - start)) }
                runStart = nil
            }
        }

        let estimate = zeroCrossingFrequency(samples, from: first, to: last, sampleRate: sampleRate)
        report.frequency = phaseSlopeFrequency(samples, from: first, to: last, sampleRate: sampleRate, estimate: estimate)
        report.discontinuities = countDiscontinuities(
            samples, from: settled, to: last, gaps: report.gaps, frequency: report.frequency, sampleRate: sampleRate,
            edgeFrames: edgeFrames)
        measureSteps(samples, from: settled, to: last, edgeFrames: edgeFrames, into: &report)
        return report
    }

    /// Compares every sample-to-sample step with the tone's own largest step, 2·A·sin(π·f/rate), where A is
    /// the tone's amplitude (the 99.9th percentile of |x|, so a click does not inflate it).
    static func measureSteps(_ samples: [Float], from start: Int, to end: Int, edgeFrames: Int, into report: inout ToneReport) {
        guard report.frequency > 0, end - start > 2 * edgeFrames + 2 else { return }
        var magnitudes = samples[start...end].map { abs($0) }
        magnitudes.sort()
        let amplitude = Double(magnitudes[min(magnitudes.count - 1, Int(Double(magnitudes.count) * 0.999))])
        let toneStep = 2 * amplitude * sin(Double.pi * report.frequency / Double(report.sampleRate))
        guard toneStep > 0 else { return }
        var excluded = [(start, start + edgeFrames), (end - edgeFrames, end)]
        for gap in report.gaps { excluded.append((gap.start - edgeFrames, gap.start + gap.length + edgeFrames)) }
        var largest = 0.0
        for index in (start + 1)...end {
            if excluded.contains(where: { index >= $0.0 && index <= $0.1 }) { continue }
            let step = Double(abs(samples[index] - samples[index - 1])) / toneStep
            largest = max(largest, step)
            if step > 1.01 {
                report.stepsAboveTone += 1
                if report.firstStepAboveTone == nil { report.firstStepAboveTone = index }
            }
        }
        report.largestStepRatio = largest
    }

    /// Frequency from the periods between positive-going zero crossings (linearly interpolated), ignoring
    /// periods that a gap or click distorts (those more than 25 % off the median period).
    static func zeroCrossingFrequency(_ samples: [Float], from start: Int, to end: Int, sampleRate: Int) -> Double {
        guard end > start else { return 0 }
        var crossings = [Double]()
        for index in (start + 1)...end where samples[index - 1] < 0 && samples[index] >= 0 {
            let previous = Double(samples[index - 1])
            let current = Double(samples[index])
            crossings.append(Double(index - 1) + (-previous) / (current - previous))
        }
        guard crossings.count > 2 else { return 0 }
        let periods = zip(crossings.dropFirst(), crossings).map { $0 - $1 }
        let median = periods.sorted()[periods.count / 2]
        let kept = periods.filter { abs($0 - median) <= 0.25 * median }
        guard !kept.isEmpty else { return 0 }
        return Double(kept.count) * Double(sampleRate) / kept.reduce(0, +)
    }

    /// Refines `estimate` by the tone's phase: the phase at `estimate` of each 10 ms window (Hann-weighted)
    /// advances by 2π·(f − estimate)·window per window, so the median advance between neighbouring windows
    /// gives f. Windows at under half the median level (gaps, fades) are left out, and the median ignores the
    /// few advances a concealment or a splice throws off. Returns `estimate` when too few windows remain.
    static func phaseSlopeFrequency(_ samples: [Float], from start: Int, to end: Int, sampleRate: Int, estimate: Double) -> Double {
        let window = sampleRate / 100
        guard estimate > 0, window > 0, end - start + 1 >= 4 * window else { return estimate }
        let omega = 2 * Double.pi * estimate / Double(sampleRate)
        let taper = (0..<window).map { 0.5 - 0.5 * cos(2 * Double.pi * (Double($0) + 0.5) / Double(window)) }
        var phases = [Double]()
        var magnitudes = [Double]()
        var windowStart = start
        while windowStart + window <= end + 1 {
            var real = 0.0
            var imaginary = 0.0
            for offset in 0..<window {
                let index = windowStart + offset
                let value = Double(samples[index]) * taper[offset]
                let angle = omega * Double(index - start)
                real += value * cos(angle)
                imaginary -= value * sin(angle)
            }
            phases.append(atan2(imaginary, real))
            magnitudes.append((real * real + imaginary * imaginary).squareRoot())
            windowStart += window
        }
        let threshold = 0.5 * magnitudes.sorted()[magnitudes.count / 2]
        var advances = [Double]()
        for index in 1..<phases.count where magnitudes[index - 1] >= threshold && magnitudes[index] >= threshold {
            var advance = phases[index] - phases[index - 1]
            advance -= 2 * Double.pi * (advance / (2 * Double.pi)).rounded()
            advances.append(advance)
        }
        guard advances.count >= 3 else { return estimate }
        advances.sort()
        let median = advances[advances.count / 2]
        return estimate + median * Double(sampleRate) / (2 * Double.pi * Double(window))
    }

    /// Counts samples that break the recurrence x[n] = 2cos(ω)x[n−1] − x[n−2] that every sine obeys, by
    /// more than a tolerance scaled to the tone's level, away from the edges and known gaps.
    static func countDiscontinuities(
        _ samples: [Float], from start: Int, to end: Int, gaps: [Gap], frequency: Double, sampleRate: Int,
        edgeFrames: Int
    ) -> Int {
        guard frequency > 0, end - start > 2 * edgeFrames + 2 else { return 0 }
        let coefficient = 2 * cos(2 * Double.pi * frequency / Double(sampleRate))
        var peak = 0.0
        for index in start...end { peak = max(peak, Double(abs(samples[index]))) }
        let tolerance = max(1e-4, peak * 0.01)
        var excluded = [(Int, Int)]()
        excluded.append((start, start + edgeFrames))
        excluded.append((end - edgeFrames, end))
        for gap in gaps { excluded.append((gap.start - edgeFrames, gap.start + gap.length + edgeFrames)) }
        var count = 0
        for index in (start + 2)...end {
            if excluded.contains(where: { index >= $0.0 && index <= $0.1 }) { continue }
            let predicted = coefficient * Double(samples[index - 1]) - Double(samples[index - 2])
            if abs(Double(samples[index]) - predicted) > tolerance { count += 1 }
        }
        return count
    }

    /// Compares a recording with the signal that was sent: finds where the recording's active span
    /// starts in `reference` (exact match of a window after the fade-in) and counts differing samples
    /// from there to the end of the shorter of the two, leaving out `tailFrames` where the stream's end fades.
    ///
    /// - Returns: `nil` when no alignment is found; otherwise where the comparison window (first sound +
    ///   `skipFrames`) was found in the reference, and the number of compared and differing samples.
    public static func compare(
        recording: [Float], reference: [Float], skipFrames: Int = 480, windowFrames: Int = 64, tailFrames: Int = 256
    ) -> (offset: Int, compared: Int, differing: Int)? {
        guard let first = recording.firstIndex(where: { abs($0) >= silenceThreshold }) else { return nil }
        let windowStart = first + skipFrames
        guard windowStart + windowFrames <= recording.count, reference.count >= windowFrames else { return nil }
        let window = recording[windowStart..<(windowStart + windowFrames)]
        for candidate in 0...(reference.count - windowFrames)
        where reference[candidate..<(candidate + windowFrames)].elementsEqual(window) {
            let shift = candidate - windowStart
            let last = min(recording.count, reference.count - shift)
            guard let lastActive = recording.lastIndex(where: { abs($0) >= silenceThreshold }) else { return nil }
            let end = min(last, lastActive + 1 - tailFrames)
            guard end > windowStart else { return nil }
            var differing = 0
            for index in windowStart..<end where recording[index] != reference[index + shift] { differing += 1 }
            return (candidate, end - windowStart, differing)
        }
        return nil
    }
}
