// A stream's glitches grouped into episodes, each set beside the late wake-ups that came with it.

/// The glitches of one stream over a run, grouped into episodes (samples with new glitches no more than
/// `gapSeconds` apart), each with the late wake-ups of the machine's threads seen around it: the sending and
/// receiving peers' own device clocks (their `deviceLateWakes` counters), probe threads that run nothing else
/// (`wake_lateness`: the machine's own scheduling, one pinned to each CPU when it runs `--per-cpu`), and the
/// time the hypervisor took from each virtual CPU (`/proc/stat`'s steal). An episode with a late wake-up of
/// either clock came when something kept a clock's thread from running in time; one with a probe's late
/// wake-up or stolen time, when the machine did; one with none is the stream's own.
///
/// Thread-safe: a pure value, any thread.
public struct GlitchEpisodes: Sendable, Codable, Equatable {
    /// One sample of the series: its time (seconds on any clock shared with `probeLateWakes`), and the
    /// cumulative counters then (glitches: lost + late + underruns of the receiving connection).
    public struct Sample: Sendable, Equatable {
        public var time: Double
        public var glitches: Int
        public var senderLateWakes: Int
        public var receiverLateWakes: Int

        public init(time: Double, glitches: Int, senderLateWakes: Int, receiverLateWakes: Int) {
            self.time = time
            self.glitches = glitches
            self.senderLateWakes = senderLateWakes
            self.receiverLateWakes = receiverLateWakes
        }
    }

    public struct Episode: Sendable, Codable, Equatable {
        /// Seconds from the first sample to the sample that first showed the episode's glitches.
        public var start: Double
        public var seconds: Double
        public var glitches: Int
        /// Late wake-ups of each peer's device clock from the sample before the episode to its last.
        public var senderLateWakes: Int
        public var receiverLateWakes: Int
        /// The probe's wake-ups later than its threshold within the same span, and the latest of them (µs).
        public var probeLateWakes: Int
        public var probeWorstMicroseconds: Double
        /// The CPUs whose pinned probe woke late within the span (empty for an unpinned probe's).
        public var probeCPUs: [Int]
        /// Time the hypervisor took from the machine's CPUs within the span, widened by `stealMarginSeconds`
        /// (the kernel's steal count is read every 50 ms and moves in clock ticks), ms.
        public var stealMilliseconds: Double
    }

    /// A probe's late wake-up: when (seconds on the samples' clock), how late (µs), and the CPU it was pinned
    /// to (nil: not pinned).
    public struct ProbeWake: Sendable, Equatable {
        public var time: Double
        public var microseconds: Double
        public var cpu: Int?

        public init(time: Double, microseconds: Double, cpu: Int? = nil) {
            self.time = time
            self.microseconds = microseconds
            self.cpu = cpu
        }
    }

    /// Stolen time that a read of the kernel's counters found: when (seconds on the samples' clock), which
    /// CPU, and how much since the read before (ms).
    public struct Steal: Sendable, Equatable {
        public var time: Double
        public var cpu: Int
        public var milliseconds: Double

        public init(time: Double, cpu: Int, milliseconds: Double) {
            self.time = time
            self.cpu = cpu
            self.milliseconds = milliseconds
        }
    }

    /// How far before and after an episode's span a read that found stolen time still counts for it.
    public static let stealMarginSeconds = 0.1

    public var episodes: [Episode] = []
    /// Episodes with a late wake-up of the sender's or the receiver's device clock.
    public var withPeerLateWake = 0
    /// Episodes with a late wake-up of the probe thread (the machine, with nothing of Tutti's in the loop).
    public var withProbeLateWake = 0
    /// Episodes with stolen time.
    public var withSteal = 0
    /// Episodes with a probe's late wake-up or stolen time: the machine, with nothing of Tutti's in the loop.
    public var withMachineEvidence = 0
    /// Episodes with no late wake-up of any thread seen and no stolen time.
    public var unexplained = 0
    /// Late wake-ups over the whole run: each peer's clock, and the probe's.
    public var senderLateWakes = 0
    public var receiverLateWakes = 0
    public var probeLateWakes = 0
    /// Stolen time over the whole run, ms (all CPUs).
    public var stealMilliseconds = 0.0

    /// - Parameters:
    ///   - samples: in time order; counters that go down (a restarted connection) start a new baseline.
    ///   - probeLateWakes: the probes' late wake-ups on the samples' clock; nil when no probe ran (its figures
    ///     stay 0).
    ///   - steal: the reads that found stolen time, on the samples' clock; nil when none was read.
    ///   - gapSeconds: samples with new glitches closer than this belong to one episode.
    public init(samples: [Sample], probeLateWakes: [ProbeWake]? = nil, steal: [Steal]? = nil, gapSeconds: Double = 0.3) {
        guard let first = samples.first else { return }
        let probe = probeLateWakes ?? []
        let stolen = steal ?? []
        let end = samples[samples.count - 1].time
        self.probeLateWakes = probe.filter { $0.time >= first.time && $0.time <= end }.count
        self.stealMilliseconds = stolen.filter { $0.time >= first.time && $0.time <= end }.reduce(0) { $0 + $1.milliseconds }
        func step(_ key: KeyPath<Sample, Int>, _ from: Int, _ to: Int) -> Int {
            let before = samples[from][keyPath: key]
            let after = samples[to][keyPath: key]
            return after >= before ? after - before : after
        }
        var open: (from: Int, to: Int, glitches: Int)?
        func close() {
            guard let span = open else { return }
            let from = samples[span.from].time
            let to = samples[span.to].time
            let seen = probe.filter { $0.time >= from && $0.time <= to }
            let margin = Self.stealMarginSeconds
            let stealSeen = stolen.filter { $0.time >= from - margin && $0.time <= to + margin }
            var episode = Episode(
                start: samples[span.from + 1].time - first.time, seconds: to - samples[span.from + 1].time,
                glitches: span.glitches, senderLateWakes: 0, receiverLateWakes: 0, probeLateWakes: seen.count,
                probeWorstMicroseconds: seen.map(\.microseconds).max() ?? 0,
                probeCPUs: Set(seen.compactMap(\.cpu)).sorted(),
                stealMilliseconds: stealSeen.reduce(0) { $0 + $1.milliseconds })
            for k in span.from..<span.to {
                episode.senderLateWakes += step(\.senderLateWakes, k, k + 1)
                episode.receiverLateWakes += step(\.receiverLateWakes, k, k + 1)
            }
            episodes.append(episode)
            let peer = episode.senderLateWakes + episode.receiverLateWakes > 0
            if peer { withPeerLateWake += 1 }
            if episode.probeLateWakes > 0 { withProbeLateWake += 1 }
            if episode.stealMilliseconds > 0 { withSteal += 1 }
            let machine = episode.probeLateWakes > 0 || episode.stealMilliseconds > 0
            if machine { withMachineEvidence += 1 }
            if !peer && !machine { unexplained += 1 }
            open = nil
        }
        for k in 1..<max(samples.count, 1) {
            senderLateWakes += step(\.senderLateWakes, k - 1, k)
            receiverLateWakes += step(\.receiverLateWakes, k - 1, k)
            let new = step(\.glitches, k - 1, k)
            if let span = open, samples[k].time - samples[span.to].time > gapSeconds { close() }
            guard new > 0 else { continue }
            if let span = open {
                open = (span.from, k, span.glitches + new)
            } else {
                open = (k - 1, k, new)
            }
        }
        close()
    }
}
