/// Fills a gap in a PCM stream from the audio just before it, better than silence: it finds the signal's
/// period in the recent output (the lag with the highest normalized correlation) and repeats the last
/// period, at full level for `holdFrames`, then fading to silence over `fadeFrames`; a long gap ends in
/// silence. When real audio returns, the receiver crossfades from the continuation of the repetition into
/// it over `crossfadeFrames` (`continuation`), so neither edge of a gap clicks.
///
/// This is pattern repetition in the manner of ITU-T G.711 Appendix I, for music as well as speech: the
/// period search spans 1 to 10 ms (about 100 Hz and up); for noise-like audio the best lag is still the
/// least discontinuous place to loop.
///
/// Usage on the device thread: `record` every output frame (played or concealed); at the first missing
/// frame `beginGap()`, then `conceal` for as long as the gap lasts; after it, `continuation` while
/// crossfading. Realtime-safe: every call (no allocation, lock or log after `init`; the period search at
/// the start of a gap is bounded: every lag over every fourth frame, then three lags in full).
/// Thread-safe: no (the device thread owns it).
public struct PacketLossConcealer: ~Copyable {
    public let channels: Int
    public let minPeriod: Int
    public let maxPeriod: Int
    /// Frames compared for each candidate period.
    public let window: Int
    /// Frames repeated at full level before the fade to silence starts.
    public let holdFrames: Int
    /// Frames over which a long gap fades to silence.
    public let fadeFrames: Int
    /// Frames of the crossfade from concealment back into real audio.
    public let crossfadeFrames: Int

    /// The last `historyFrames` output frames, a ring (interleaved).
    private let history: UnsafeMutableBufferPointer<Float>
    private let historyFrames: Int
    private var historyEnd = 0
    private var historyCount = 0
    /// The history in time order (oldest first), laid out at the start of a gap so the period search reads
    /// plain runs of memory.
    private let timeOrdered: UnsafeMutableBufferPointer<Float>
    /// The coarse search's running sums, one per candidate lag: the cross products with the recent window,
    /// then the earlier windows' energies.
    private let lagSums: UnsafeMutableBufferPointer<Float>
    /// The period being repeated (interleaved, `period` frames), captured at the start of the gap.
    private let pattern: UnsafeMutableBufferPointer<Float>
    private var period = 0
    /// Frames generated since the start of the gap.
    private var generated = 0

    /// - Parameters: durations in frames at the stream's rate; `sampleRate` sets the period search range.
    /// Control plane (allocates).
    public init(channels: Int, sampleRate: Int, holdMilliseconds: Int = 20, fadeMilliseconds: Int = 20, crossfadeMilliseconds: Double = 1) {
        precondition(channels > 0 && sampleRate > 0)
        self.channels = channels
        minPeriod = max(8, sampleRate / 1000)
        maxPeriod = max(minPeriod, sampleRate / 100)
        window = max(16, sampleRate / 200)
        holdFrames = sampleRate * holdMilliseconds / 1000
        fadeFrames = max(1, sampleRate * fadeMilliseconds / 1000)
        crossfadeFrames = max(1, Int(Double(sampleRate) * crossfadeMilliseconds / 1000))
        historyFrames = maxPeriod + window
        history = .allocate(capacity: historyFrames * channels)
        history.initialize(repeating: 0)
        timeOrdered = .allocate(capacity: historyFrames * channels)
        timeOrdered.initialize(repeating: 0)
        lagSums = .allocate(capacity: 2 * (maxPeriod + 1))
        lagSums.initialize(repeating: 0)
        pattern = .allocate(capacity: maxPeriod * channels)
        pattern.initialize(repeating: 0)
    }

    deinit {
        history.deallocate()
        timeOrdered.deallocate()
        lagSums.deallocate()
        pattern.deallocate()
    }

    /// Forgets the recent audio (after a loss of signal or a re-anchor): the next gap or crossfade is silence.
    /// Realtime-safe.
    public mutating func reset() {
        historyCount = 0
        period = 0
        generated = 0
        for channel in 0..<channels { pattern[channel] = 0 }
    }

    /// Remembers `frames` output frames (interleaved, starting at frame `start` of `samples`). Realtime-safe.
    public mutating func record(_ samples: UnsafeMutableBufferPointer<Float>, from start: Int, frames: Int) {
        guard frames > 0, let source = samples.baseAddress, let destination = history.baseAddress else { return }
        precondition(samples.count >= (start + frames) * channels)
        // Only the newest `historyFrames` frames can stay; they go in as at most two contiguous copies (up to
        // the ring's end, then from its start).
        let kept = min(frames, historyFrames)
        var from = start + frames - kept
        if kept < frames { historyEnd = (historyEnd + frames - kept) % historyFrames }
        var remaining = kept
        while remaining > 0 {
            let run = min(remaining, historyFrames - historyEnd)
            (destination + historyEnd * channels).update(from: source + from * channels, count: run * channels)
            historyEnd += run
            if historyEnd == historyFrames { historyEnd = 0 }
            from += run
            remaining -= run
        }
        historyCount = min(historyFrames, historyCount + frames)
    }

    /// Starts concealing: picks the period to repeat from the recent output. Realtime-safe.
    public mutating func beginGap() {
        generated = 0
        // Early in a stream the history is short: compare fewer frames (at least 32).
        let compared = min(window, historyCount - minPeriod)
        guard compared >= 32 else {
            // Too little audio to repeat (the stream just started): fade from the last sample to silence.
            period = 0
            let last = historyCount > 0 ? sampleIndex(framesBack: 1) : -1
            for channel in 0..<channels { pattern[channel] = last >= 0 ? history[last + channel] : 0 }
            return
        }
        let searchMax = min(maxPeriod, historyCount - compared)
        guard let end = layOutInTimeOrder() else { return }
        // Every lag on every fourth frame (a lag a whole number of periods long can be odd: 7 periods of
        // 997 Hz are 337.0 frames), then refine around the best lag on every frame. A longer lag must match
        // measurably better (by 5·10⁻⁵) to win, so a steady tone repeats its own period rather than a
        // multiple of it that only rounding favours: shorter patterns, and finer latency moves.
        let recent = end - compared * channels
        let coarseEnergy = energy(of: recent, frames: compared, frameStride: 4)
        let lags = searchMax - minPeriod + 1
        switch channels {
        case 1: sumCoarse(recent, frames: compared, lags: lags, channels: 1)
        case 2: sumCoarse(recent, frames: compared, lags: lags, channels: 2)
        default: sumCoarse(recent, frames: compared, lags: lags, channels: channels)
        }
        var bestLag = minPeriod
        var bestScore = -Float.infinity
        for index in 0..<lags {
            let score = Self.normalized(cross: lagSums[index], energies: coarseEnergy, lagSums[lags + index])
            if score > bestScore + 5e-5 { (bestScore, bestLag) = (score, minPeriod + index) }
        }
        let coarse = bestLag
        let fineEnergy = energy(of: recent, frames: compared, frameStride: 1)
        bestScore = -Float.infinity
        for lag in max(minPeriod, coarse - 1)...min(searchMax, coarse + 1) {
            let score = correlation(recent, lag: lag, frames: compared, energyRecent: fineEnergy)
            if score > bestScore { (bestScore, bestLag) = (score, lag) }
        }
        period = bestLag
        pattern.baseAddress!.update(from: end - period * channels, count: period * channels)
    }

    /// Copies the history into `timeOrdered`, oldest frame first; returns the end of its newest frame.
    @inline(__always)
    private func layOutInTimeOrder() -> UnsafeMutablePointer<Float>? {
        guard let ordered = timeOrdered.baseAddress, let ring = history.baseAddress else { return nil }
        let oldest = sampleIndex(framesBack: historyCount)
        let firstRun = min(historyCount * channels, historyFrames * channels - oldest)
        ordered.update(from: ring + oldest, count: firstRun)
        (ordered + firstRun).update(from: ring, count: historyCount * channels - firstRun)
        return ordered + historyCount * channels
    }

    /// For every lag from `minPeriod` on (`lags` of them), the cross products of the `frames` frames from
    /// `recent` on with those that lag earlier, and the earlier frames' energy, on every fourth frame, into
    /// `lagSums` (crosses, then energies). The loop over lags is innermost, so each step reads the history
    /// in one run and the compiler can vectorize it; each lag's sums still add the same products in the same
    /// order as one correlation at a time would. `channels` is a constant where the caller can make it one.
    @inline(__always)
    private func sumCoarse(_ recent: UnsafeMutablePointer<Float>, frames: Int, lags: Int, channels: Int) {
        guard let cross = lagSums.baseAddress else { return }
        let energies = cross + lags
        cross.update(repeating: 0, count: 2 * lags)
        for frame in stride(from: 0, to: frames, by: 4) {
            for channel in 0..<channels {
                let a = recent[frame * channels + channel]
                // The earlier sample at lag minPeriod + index is `index * channels` further back.
                let nearest = recent + frame * channels + channel - minPeriod * channels
                for index in 0..<lags {
                    let b = nearest[-index * channels]
                    cross[index] += a * b
                    energies[index] += b * b
                }
            }
        }
    }

    /// The energy of `frames` frames from `samples` on, on every `frameStride`-th frame.
    @inline(__always)
    private func energy(of samples: UnsafeMutablePointer<Float>, frames: Int, frameStride: Int) -> Float {
        var sum: Float = 0
        for frame in stride(from: 0, to: frames, by: frameStride) {
            let first = samples + frame * channels
            for channel in 0..<channels { sum += first[channel] * first[channel] }
        }
        return sum
    }

    /// Normalized correlation of the `frames` frames from `recent` on with the `frames` frames `lag` earlier,
    /// every frame; `energyRecent` is the recent frames' (`energy(of:)`).
    @inline(__always)
    private func correlation(_ recent: UnsafeMutablePointer<Float>, lag: Int, frames: Int, energyRecent: Float) -> Float {
        let earlier = recent - lag * channels
        var cross: Float = 0
        var energyEarlier: Float = 0
        for sample in 0..<(frames * channels) {
            cross += recent[sample] * earlier[sample]
            energyEarlier += earlier[sample] * earlier[sample]
        }
        return Self.normalized(cross: cross, energies: energyRecent, energyEarlier)
    }

    /// A cross product over the square root of the two windows' energies; 0 for silence.
    @inline(__always)
    private static func normalized(cross: Float, energies first: Float, _ second: Float) -> Float {
        let denominator = (first * second).squareRoot()
        return denominator > 1e-12 ? cross / denominator : 0
    }

    /// Writes `frames` concealment frames into `output` at frame `start`. Realtime-safe.
    public mutating func conceal(into output: UnsafeMutableBufferPointer<Float>, at start: Int, frames: Int) {
        for frame in 0..<frames {
            let destination = (start + frame) * channels
            writeNext(into: output, at: destination, weight: 1, adding: false)
        }
    }

    /// Crossfade after a gap: mixes the repetition's continuation into the real audio already in `output`
    /// at frame `start` (`frames` frames, the `offset`-th to `offset + frames`-th frames since the audio
    /// resumed). Returns how many frames of the crossfade remain after these. Realtime-safe.
    public mutating func continuation(
        into output: UnsafeMutableBufferPointer<Float>, at start: Int, frames: Int, offset: Int
    ) -> Int {
        let count = min(frames, max(0, crossfadeFrames - offset))
        for frame in 0..<count {
            let realGain = Float(offset + frame + 1) / Float(crossfadeFrames + 1)
            let destination = (start + frame) * channels
            for channel in 0..<channels { output[destination + channel] *= realGain }
            writeNext(into: output, at: destination, weight: 1 - realGain, adding: true)
        }
        return crossfadeFrames - offset - count
    }

    /// The period chosen by the last `beginGap()`, in frames (0: silence, too little audio to repeat).
    public var repeatedPeriod: Int { period }

    /// Whether the repetition has faded out completely (the gap is now silence).
    public var isSilent: Bool { period == 0 ? generated >= crossfadeFrames : generated >= holdFrames + fadeFrames }

    @inline(__always)
    private mutating func writeNext(into output: UnsafeMutableBufferPointer<Float>, at destination: Int, weight: Float, adding: Bool) {
        let gain = weight * envelope(at: generated)
        if period == 0 {
            // Nothing to repeat: the last sample, fading to silence over the crossfade length.
            let fade = weight * max(0, 1 - Float(generated + 1) / Float(crossfadeFrames))
            for channel in 0..<channels {
                let value = pattern[channel] * fade
                output[destination + channel] = adding ? output[destination + channel] + value : value
            }
        } else if gain == 0 {
            if !adding { for channel in 0..<channels { output[destination + channel] = 0 } }
        } else {
            let source = (generated % period) * channels
            for channel in 0..<channels {
                let value = pattern[source + channel] * gain
                output[destination + channel] = adding ? output[destination + channel] + value : value
            }
        }
        generated += 1
    }

    @inline(__always)
    private func envelope(at frame: Int) -> Float {
        if frame < holdFrames { return 1 }
        let intoFade = frame - holdFrames
        return intoFade >= fadeFrames ? 0 : 1 - Float(intoFade + 1) / Float(fadeFrames)
    }

    /// Index of the first sample of the frame `framesBack` frames before the end of the history.
    @inline(__always)
    private func sampleIndex(framesBack: Int) -> Int {
        var frame = historyEnd - framesBack
        if frame < 0 { frame += historyFrames }
        return frame * channels
    }
}
