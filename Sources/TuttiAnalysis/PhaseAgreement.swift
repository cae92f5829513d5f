// Phase agreement between Link peers from their sample streams (the Link lab tests' figure; formerly
// scripts/link/agreement.py, whose method this keeps exactly, with the project's one percentile definition).

/// One sample of a peer's beat timeline: when it was taken, where the timeline was, at what tempo.
///
/// Thread-safe: a value.
public struct LinkTimelineSample: Hashable, Sendable {
    /// CLOCK_MONOTONIC nanoseconds.
    public var time: Int
    /// The phase (or the beat: only the phase modulo the quantum is used) in beats.
    public var phase: Double
    /// Beats per minute.
    public var tempo: Double
    /// The quantum the peer reported, if it did.
    public var quantum: Double?

    public init(time: Int, phase: Double, tempo: Double, quantum: Double? = nil) {
        self.time = time
        self.phase = phase
        self.tempo = tempo
        self.quantum = quantum
    }
}

/// Phase agreement between two or more peers' sample streams.
///
/// Method: a common grid of instants (every `step`) over the time all streams overlap. At each instant every
/// stream is evaluated from its nearest sample, extrapolated along its own tempo (phase(g) = phase(s) + (g -
/// t_s) · bpm / 60e9, mod q). An instant is skipped for a stream when its two neighbouring samples are more
/// than `maxGap` apart or carry different tempos (the stream's timeline changed between them). For every pair
/// (a, b): dphase = phase_a − phase_b wrapped into [−q/2, q/2) beats (beat magnitudes of Link apps differ by
/// multiples of q by design; only phase is shared), and dus = dphase · 60e6 / bpm_a microseconds. Reported
/// per pair and pooled over all pairs: n, the median of the signed error (the constant offset), the median,
/// 95th and 99th percentile and maximum of |error| (nearest rank, `Percentile`), in beats and microseconds.
///
/// With a step threshold, each pair's signed error is also split where it steps by more than the threshold
/// and stays there (a re-measured ghost offset: Link applies it as a step every 30 s), and every segment is
/// reported on its own (`Segment`); instants within the guard of a step are left out of both segments.
///
/// Thread-safe: pure functions on values, any thread.
public enum PhaseAgreement {
    /// A named stream of samples.
    public struct Stream: Hashable, Sendable {
        public var name: String
        /// In time order.
        public var samples: [LinkTimelineSample]
        /// Samples of the input dropped for a bracket wider than the limit (reported only).
        public var droppedWideBracket: Int

        public init(name: String, samples: [LinkTimelineSample], droppedWideBracket: Int = 0) {
            self.name = name
            self.samples = samples
            self.droppedWideBracket = droppedWideBracket
        }
    }

    /// One sample line of a log as read: the file and stream it belongs to and its bracket width.
    public struct Line: Hashable, Sendable {
        public var file: String
        /// The line's stream name (`src`), `nil` when it has none (the stream is then the file).
        public var source: String?
        public var sample: LinkTimelineSample
        /// Nanoseconds between the clock reads that bracket the sample, if known.
        public var bracket: Double?

        public init(file: String, source: String?, sample: LinkTimelineSample, bracket: Double?) {
            self.file = file
            self.source = source
            self.sample = sample
            self.bracket = bracket
        }
    }

    /// The measurement's settings; the defaults are the lab scripts'.
    public struct Options: Hashable, Sendable {
        /// In beats; `nil`: the quantum the samples report (all the same), else 4.
        public var quantum: Double?
        /// Grid step, nanoseconds.
        public var step: Int = 1_000_000
        /// An instant whose neighbouring samples are further apart (ns) is skipped for that stream.
        public var maxGap: Double = 5e6
        /// Only instants at or after this time (ns).
        public var start: Int?
        /// Only instants before this time (ns).
        public var end: Int?
        /// The first nanoseconds of the overlap are skipped.
        public var skip: Int = 0
        /// Skip instants where the streams' tempos differ (the transients of a tempo change).
        public var settledOnly = false
        /// Compare every stream with this one only (default: all pairs).
        public var reference: String?
        /// Split each pair's error where it steps by more than this many microseconds.
        public var stepThreshold: Double?
        /// With `stepThreshold`: instants this close (ns) to a step are left out of the segments.
        public var guardTime: Double = 5e6

        public init() {}
    }

    /// The figures of one pair (or all pairs pooled). With `n` 0 every other figure is `nil`.
    public struct Figures: Hashable, Sendable {
        public var n = 0
        public var signedMedianMicroseconds: Double?
        public var medianMicroseconds: Double?
        public var p95Microseconds: Double?
        public var p99Microseconds: Double?
        public var maxMicroseconds: Double?
        public var meanMicroseconds: Double?
        public var medianBeats: Double?
        public var p99Beats: Double?
        public var maxBeats: Double?
        /// With a step threshold: the error split at its steps.
        public var segments: [Segment]?

        /// The figures of the errors `beats` and `microseconds` (the same instants in both units).
        public init(beats: [Double], microseconds: [Double]) {
            n = microseconds.count
            guard n > 0 else { return }
            let signed = microseconds.sorted()
            let magnitudes = microseconds.map { abs($0) }.sorted()
            let beatMagnitudes = beats.map { abs($0) }.sorted()
            signedMedianMicroseconds = Percentile.nearestRank(50, ofSorted: signed)
            medianMicroseconds = Percentile.nearestRank(50, ofSorted: magnitudes)
            p95Microseconds = Percentile.nearestRank(95, ofSorted: magnitudes)
            p99Microseconds = Percentile.nearestRank(99, ofSorted: magnitudes)
            maxMicroseconds = magnitudes.last
            meanMicroseconds = microseconds.reduce(0, +) / Double(n)
            medianBeats = Percentile.nearestRank(50, ofSorted: beatMagnitudes)
            p99Beats = Percentile.nearestRank(99, ofSorted: beatMagnitudes)
            maxBeats = beatMagnitudes.last
        }
    }

    /// A stretch of a pair's error between two steps: its span, and its figures without the guard instants.
    public struct Segment: Hashable, Sendable {
        /// The first and last instant of the segment (ns), guard instants included.
        public var start: Int
        public var end: Int
        /// Instants outside the guards.
        public var n: Int
        public var signedMedianMicroseconds: Double?
        /// 99th percentile of |error|.
        public var p99Microseconds: Double?
        /// 99th percentile and maximum of |error − signed median|.
        public var spreadP99Microseconds: Double?
        public var spreadMaxMicroseconds: Double?
    }

    /// One compared pair: `first` minus `second`.
    public struct Pair: Hashable, Sendable {
        public var first: String
        public var second: String
        public var figures: Figures
    }

    /// How many samples a stream had.
    public struct StreamCount: Hashable, Sendable {
        public var name: String
        public var inWindow: Int
        public var inInput: Int
        public var droppedWideBracket: Int
    }

    /// The measurement.
    public struct Result: Hashable, Sendable {
        public var quantum: Double
        /// The grid's window [start, end) in ns.
        public var windowStart: Int
        public var windowEnd: Int
        public var gridInstants: Int
        public var skippedUnsettled: Int
        public var streams: [StreamCount]
        public var pairs: [Pair]
        /// Every pair's instants pooled.
        public var all: Figures
    }

    /// Why nothing could be measured.
    public enum Failure: Error, Hashable, Sendable, CustomStringConvertible {
        case tooFewStreams([String])
        case differentQuanta([Double])
        case noSuchStream(String, have: [String])

        public var description: String {
            switch self {
            case .tooFewStreams(let names):
                "need at least two sample streams, found \(names.count) (\(names.joined(separator: ", ")))"
            case .differentQuanta(let quanta): "streams use different quanta \(quanta); pass --quantum"
            case .noSuchStream(let name, let have): "no stream '\(name)' (have \(have.joined(separator: ", ")))"
            }
        }
    }

    /// The streams of `lines` (in the order they first appear): a stream per file and `src`, named by its `src`
    /// alone when no other file has one of that name, else `FILE:SRC`; samples in time order. Lines whose
    /// bracket is wider than `maxBracket` ns are dropped (scheduler hiccups), and counted.
    public static func streams(_ lines: [Line], maxBracket: Double?) -> [Stream] {
        struct Key: Hashable {
            var file: String
            var source: String
        }
        var order: [Key] = []
        var samples: [Key: [LinkTimelineSample]] = [:]
        var dropped: [Key: Int] = [:]
        for line in lines {
            let key = Key(file: line.file, source: line.source ?? line.file)
            if let maxBracket, let bracket = line.bracket, bracket > maxBracket {
                dropped[key, default: 0] += 1
                continue
            }
            if samples[key] == nil { order.append(key) }
            samples[key, default: []].append(line.sample)
        }
        return order.map { key in
            let unique = order.count(where: { $0.source == key.source }) == 1
            let sorted = samples[key, default: []].enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }
            return Stream(
                name: unique ? key.source : "\(key.file):\(key.source)", samples: sorted.map(\.element),
                droppedWideBracket: dropped[key, default: 0])
        }
    }

    /// Measures the agreement of `streams` (each in time order).
    public static func measure(_ streams: [Stream], options: Options = Options()) throws(Failure) -> Result {
        guard streams.count >= 2 else { throw .tooFewStreams(streams.map(\.name)) }
        let quantum: Double
        if let given = options.quantum {
            quantum = given
        } else {
            let reported = Set(streams.flatMap { $0.samples.compactMap(\.quantum) }).sorted()
            guard reported.count <= 1 else { throw .differentQuanta(reported) }
            quantum = reported.first ?? 4
        }
        let timelines = streams.filter { !$0.samples.isEmpty }.map { Timeline($0, quantum: quantum, maxGap: options.maxGap) }
        guard timelines.count >= 2 else { throw .tooFewStreams(timelines.map(\.name)) }
        var low = timelines.map { $0.times[0] }.max()! + options.skip
        var high = timelines.map { $0.times[$0.times.count - 1] }.min()!
        if let start = options.start { low = max(low, start) }
        if let end = options.end { high = min(high, end) }

        var pairs: [(Int, Int)] = []
        if let reference = options.reference {
            guard let r = timelines.firstIndex(where: { $0.name == reference }) else {
                throw .noSuchStream(reference, have: timelines.map(\.name))
            }
            pairs = timelines.indices.filter { $0 != r }.map { (r, $0) }
        } else {
            for i in timelines.indices { for j in timelines.indices where j > i { pairs.append((i, j)) } }
        }

        var beats = [[Double]](repeating: [], count: pairs.count)
        var micros = [[Double]](repeating: [], count: pairs.count)
        var instants = [[Int]](repeating: [], count: pairs.count)
        var grid = 0
        var skipped = 0
        var g = low
        while g < high {
            defer { g += options.step }
            grid += 1
            let values = timelines.map { $0.at(g) }
            if options.settledOnly {
                let tempos = values.compactMap { $0?.tempo }
                if let top = tempos.max(), let bottom = tempos.min(), top - bottom > 1e-6 {
                    skipped += 1
                    continue
                }
            }
            for (k, (a, b)) in pairs.enumerated() {
                guard let x = values[a], let y = values[b] else { continue }
                let d = wrap(x.phase - y.phase, quantum)
                beats[k].append(d)
                micros[k].append(d * 60e6 / x.tempo)
                instants[k].append(g)
            }
        }

        var measured: [Pair] = []
        for (k, (a, b)) in pairs.enumerated() {
            var figures = Figures(beats: beats[k], microseconds: micros[k])
            if let threshold = options.stepThreshold, !micros[k].isEmpty {
                figures.segments = segments(instants[k], micros[k], threshold: threshold, guardTime: options.guardTime)
            }
            measured.append(Pair(first: timelines[a].name, second: timelines[b].name, figures: figures))
        }
        let counts = streams.map { stream in
            StreamCount(
                name: stream.name, inWindow: stream.samples.count(where: { low <= $0.time && $0.time < high }),
                inInput: stream.samples.count,
                droppedWideBracket: stream.droppedWideBracket)
        }
        return Result(
            quantum: quantum, windowStart: low, windowEnd: high, gridInstants: grid, skippedUnsettled: skipped, streams: counts,
            pairs: measured, all: Figures(beats: beats.flatMap { $0 }, microseconds: micros.flatMap { $0 }))
    }

    /// `d` wrapped into [−q/2, q/2).
    public static func wrap(_ d: Double, _ quantum: Double) -> Double {
        floorModulo(d + quantum / 2, quantum) - quantum / 2
    }

    /// The indices where `errors` steps by more than `threshold` from the current segment's running median (of
    /// its last `history` values) and stays beyond it for `confirm` values.
    public static func steps(_ errors: [Double], threshold: Double, confirm: Int = 5, history: Int = 50) -> [Int] {
        var cuts: [Int] = []
        var recent: [Double] = []
        for i in errors.indices {
            if let reference = Percentile.nearestRank(50, of: recent), abs(errors[i] - reference) > threshold,
                i + confirm <= errors.count, (i..<i + confirm).allSatisfy({ abs(errors[$0] - reference) > threshold })
            {
                cuts.append(i)
                recent = []
            }
            recent.append(errors[i])
            if recent.count > history { recent.removeFirst() }
        }
        return cuts
    }

    /// The error series `errors` (at `instants`, ns) cut at its steps.
    public static func segments(_ instants: [Int], _ errors: [Double], threshold: Double, guardTime: Double) -> [Segment] {
        let bounds = [0] + steps(errors, threshold: threshold) + [errors.count]
        var result: [Segment] = []
        for k in 0..<bounds.count - 1 {
            let range = bounds[k]..<bounds[k + 1]
            let first = Double(instants[range.lowerBound]) + (k > 0 ? guardTime : 0)
            let last = Double(instants[range.upperBound - 1]) - (k + 1 < bounds.count - 1 ? guardTime : 0)
            let values = range.filter { first <= Double(instants[$0]) && Double(instants[$0]) <= last }.map { errors[$0] }
            var segment = Segment(start: instants[range.lowerBound], end: instants[range.upperBound - 1], n: values.count)
            if let median = Percentile.nearestRank(50, of: values) {
                let spread = values.map { abs($0 - median) }.sorted()
                segment.signedMedianMicroseconds = median
                segment.p99Microseconds = Percentile.nearestRank(99, of: values.map { abs($0) })
                segment.spreadP99Microseconds = Percentile.nearestRank(99, ofSorted: spread)
                segment.spreadMaxMicroseconds = spread.last
            }
            result.append(segment)
        }
        return result
    }

    /// `x` modulo `m` with the sign of `m` (Python's `%` on floats).
    static func floorModulo(_ x: Double, _ m: Double) -> Double {
        var r = x.truncatingRemainder(dividingBy: m)
        if r != 0 && (r < 0) != (m < 0) { r += m }
        return r
    }

    /// A stream evaluated at any instant.
    private struct Timeline {
        var name: String
        var times: [Int]
        var phases: [Double]
        var tempos: [Double]
        var quantum: Double
        var maxGap: Double

        init(_ stream: Stream, quantum: Double, maxGap: Double) {
            name = stream.name
            times = stream.samples.map(\.time)
            phases = stream.samples.map { floorModulo($0.phase, quantum) }
            tempos = stream.samples.map(\.tempo)
            self.quantum = quantum
            self.maxGap = maxGap
        }

        /// Phase and tempo at `g` (ns) from the nearer neighbouring sample, or `nil` before the first or after
        /// the last sample, across a gap, or across a tempo change.
        func at(_ g: Int) -> (phase: Double, tempo: Double)? {
            // The last sample at or before g.
            var lo = 0
            var hi = times.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if times[mid] <= g { lo = mid + 1 } else { hi = mid }
            }
            let i = lo - 1
            guard i >= 0, i + 1 < times.count else { return nil }
            let t0 = times[i]
            let t1 = times[i + 1]
            guard Double(t1 - t0) <= maxGap else { return nil }
            guard abs(tempos[i] - tempos[i + 1]) <= 1e-9 * max(tempos[i], 1) else { return nil }
            let j = g - t0 <= t1 - g ? i : i + 1
            return (floorModulo(phases[j] + Double(g - times[j]) * tempos[j] / 60e9, quantum), tempos[j])
        }
    }
}
