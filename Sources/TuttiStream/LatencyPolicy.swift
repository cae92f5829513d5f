import TuttiCore

/// The one owner of a receiving stream's latency policy, for fixed and adaptive targets alike: where playout
/// starts, what latency the buffer is held at, and what drift compensation steers toward.
///
/// **The target.** A target of T frames is one packet (P frames: the packet must be whole before it is sent)
/// plus the jitter slack S = T − P: every packet that arrives up to S after the fastest one plays. The lowest
/// target is one packet (S = 0: a jitter-free network). Latency is counted as the buffer measures it: how far
/// the play head is behind the arrival of the fastest recent packet, plus one packet
/// (`JitterBufferStatistics.measuredLatencyFrames`); capture-to-playout adds the network's own delay.
///
/// **Reads aligned to the packet grid.** The device reads R frames at a time, at instants whose phase against
/// the packets' arrivals is whatever it is. A read needs all of its frames, so its slack is set by the packet
/// holding its last frame. `alignedLatency` gives the lowest latency, at or above the target, at which every
/// read keeps the whole slack: with R equal to P (or dividing it) reads end on packet boundaries, and the
/// latency is the target plus the part of the phase that the slack does not already cover (0 … R − 1 frames,
/// 0 when the reads come just as the packets have waited the slack), instead of the target plus R − 1 for
/// every phase. The phase itself cannot be removed by the buffer: a read cannot come earlier than the device's
/// clock. A device clock that nothing else plays on (a paced receiver port with one stream) can come later,
/// though: `phaseDelayFrames` is how much later its reads must come for the excess to be 0, and `beforeRead`
/// asks for it once, at the first read after an anchor, before the start is placed.
///
/// **Fixed target** (`startPlayout`, `learnSetpoint`): the buffer anchors on the first
/// packet; at the first read after that, the play head is placed at the aligned latency (moved back, or forward
/// over audio that has already waited longer, as when packets came in a burst before the read). Once audio
/// plays, a fixed target never splices it: a first packet that came slower than most keeps its extra delay
/// (at most the jitter), which drift compensation then holds with the latency of the first second. Trimming it
/// a second in, as this policy once did, spliced clean streams whenever an arrival time was a few frames off;
/// a user who wants the lowest latency the network allows asks for `--latency auto`.
///
/// **Adaptive target** (`adaptiveTargetFrames`, `adaptiveStep`): the controller's 99th percentile of lateness
/// plus one packet and 0.5 ms, aligned the same way, and when to move toward it; the jitter buffer moves its
/// play head (stretching or skipping audio, `JitterBuffer.read`).
///
/// Realtime-safe: yes (no allocation, lock or log). Thread-safe: no (the device thread owns it).
public struct LatencyPolicy: Sendable {
    public let format: StreamFormat
    /// Whether this stream uses a fixed target without synchronized playout (start placement).
    public let placesFixedStart: Bool

    /// Arrival of the packet the buffer last anchored on, until the first read after it placed the start.
    private var anchorArrival: HostTime?
    /// Whether the device was asked to delay its reads for the pending anchor (asked once per anchor).
    private var askedDeviceDelay = false
    /// Stream frames read since the device's phase was last checked (`deviceMove`).
    private var framesSincePhaseCheck = 0
    /// How often a device that plays the stream alone has its phase checked: every 16 packets (21 ms at 64
    /// frames; the reads slide by a fifth of a frame in that time at 200 ppm).
    public var phaseCheckFrames: Int { 16 * format.packetFrames }
    /// Drift compensation's setpoint with a fixed target: the latency averaged over the first second of playout.
    public private(set) var levelSetpoint: Double
    private var learnedLatencyChanges: UInt64 = 0
    private var learnedResynchronizations: UInt64 = 0
    private var learningPeriods = 0
    private var learningSum = 0.0
    private let learningLength: Int
    /// `stepCorrection`: the latency at the last read, the latency before a jump being confirmed and the
    /// frames read since that jump, and the frames read since the last correction.
    private var previousLatency: Double?
    private var latencyBeforeJump: Double?
    private var framesSinceJump = 0
    private var framesSinceStep = Int.max / 2
    /// How far (frames) a fixed target's latency must jump from one read to the next to be a step, not drift.
    public let stepThresholdFrames: Int
    /// How long (frames) it must stay there before the play head is moved back.
    public let stepConfirmationFrames: Int
    /// `levelCorrection`: reads (frames) in a row that the latency has stood below the setpoint, and the frames
    /// read since the last correction.
    private var framesBelowLevel = 0
    private var framesSinceLevelCorrection = Int.max / 2
    private var levelHoldoffFrames = 0
    /// Frames of reads left in which `levelCorrection` watches, after the device's time base last stepped.
    private var levelWatchFrames = 0
    /// How far (frames) a fixed target's latency must stand below drift compensation's setpoint, on a clock
    /// whose steps `stepCorrection` does not follow, to be moved back at once: three quarters of a packet (a
    /// packet's move, measured a fraction of a frame short, counts), and at least 1 ms.
    public let levelThresholdFrames: Int
    /// How long (frames of reads) it must stand there: 50 ms.
    public let levelConfirmationFrames: Int
    /// How long (frames of reads) after the device's time base stepped `levelCorrection` watches: 1 s.
    public let levelWatchLengthFrames: Int

    /// - Parameters:
    ///   - format: the negotiated stream.
    ///   - periodsPerSecond: device periods per second (how many periods the setpoint is learned over).
    public init(format: StreamFormat, periodsPerSecond: Int) {
        self.format = format
        placesFixedStart = format.adaptiveLatencyFrames == nil && format.synchronizedLatencyNanoseconds == nil
        levelSetpoint = Double(format.targetLatencyFrames)
        learningLength = max(1, periodsPerSecond)
        stepThresholdFrames = max(format.packetFrames / 2, format.sampleRate / 2_000)
        stepConfirmationFrames = format.sampleRate / 50
        levelThresholdFrames = max(format.packetFrames * 3 / 4, format.sampleRate / 1_000)
        levelConfirmationFrames = format.sampleRate / 20
        levelWatchLengthFrames = format.sampleRate
    }

    /// The lowest latency, at or above `targetFrames`, at which reads of `readFrames` that come `phaseFrames`
    /// after a packet on the grid arrived (any such packet: only the phase modulo the packet counts) all keep
    /// the slack `targetFrames − packetFrames`. Pure.
    ///
    /// A read at t playing frames [h, h + R) at latency L (h = t − L, on the fastest packets' arrival axis)
    /// needs the packet holding h + R − 1, which arrived at its start plus P; its slack is
    /// L − P − R + 1 + ((h + R − 1) mod P) measured from the grid. Over consecutive reads, (h + R − 1) mod P takes
    /// every value congruent to it modulo g = gcd(R, P), so the worst read's slack is
    /// L − P − R + 1 + ((h + R − 1) mod g): the answer is the smallest excess e ≥ 0 that makes it ≥ T − P.
    /// - Returns: `targetFrames` plus 0 … R + g − 2 frames (R − g of them only when reads are longer than packets
    ///   or off their grid: a read's first frame then waits for its last).
    @_noLocks @_noAllocation
    public static func alignedLatency(targetFrames: Int, packetFrames: Int, readFrames: Int, phaseFrames: Int) -> Int {
        precondition(packetFrames > 0 && readFrames > 0)
        let grid = greatestCommonDivisor(readFrames, packetFrames)
        // (h + R − 1) mod g at latency exactly T, where h = phase + P − T on the grid's own axis.
        let atTarget = modulo(phaseFrames + packetFrames - targetFrames + readFrames - 1, grid)
        var excess = 0
        while excess - readFrames + 1 + modulo(atTarget - excess, grid) < 0 { excess += 1 }
        return targetFrames + excess
    }

    /// How many frames later reads of `readFrames` that come `phaseFrames` after a packet on the grid arrived
    /// must come for `alignedLatency` to add the least to the target (nothing, when reads are a packet or divide
    /// it): 0 … g − 1 frames, g = gcd(R, P). Pure.
    ///
    /// Only the phase modulo g counts (`alignedLatency`), and the excess is least when the worst read's slack
    /// term (h + R − 1) mod g is g − 1, its largest: the read then comes just as the packet holding its last frame
    /// has waited the slack.
    @_noLocks @_noAllocation
    public static func phaseDelayFrames(targetFrames: Int, packetFrames: Int, readFrames: Int, phaseFrames: Int) -> Int {
        precondition(packetFrames > 0 && readFrames > 0)
        let grid = greatestCommonDivisor(readFrames, packetFrames)
        let atTarget = modulo(phaseFrames + packetFrames - targetFrames + readFrames - 1, grid)
        return modulo(grid - 1 - atTarget, grid)
    }

    /// The move (frames: +1 later, −1 earlier, 0 none) that brings reads at `phaseFrames` a frame closer to where
    /// `beforeRead` puts them when the stream starts: a frame after the phase that `phaseDelayFrames` aims at, or
    /// two (the start and this measure round to whole frames differently, which must not make the device
    /// move to and fro). The shorter way round the grid of g = gcd(R, P) frames. Pure.
    @_noLocks @_noAllocation
    public static func phaseMoveFrames(targetFrames: Int, packetFrames: Int, readFrames: Int, phaseFrames: Int) -> Int {
        let grid = greatestCommonDivisor(readFrames, packetFrames)
        // Frames to a frame past the edge, later: 0 there, g − 1 a frame further.
        let later = modulo(
            phaseDelayFrames(targetFrames: targetFrames, packetFrames: packetFrames, readFrames: readFrames, phaseFrames: phaseFrames)
                + 1, grid)
        if later == 0 || later == grid - 1 { return 0 }
        return later * 2 <= grid ? 1 : -1
    }

    /// The adaptive target for a lateness percentile (frames) and reads of `readFrames` at `phaseFrames`: the
    /// lateness plus the controller's margin (one packet and 0.5 ms), within the negotiated range, aligned
    /// (`alignedLatency`; the alignment may take it up to a read above the ceiling). Pure.
    public static func adaptiveTargetFrames(
        latenessFrames: Double, controller: borrowing AdaptiveLatencyController, packetFrames: Int, readFrames: Int,
        phaseFrames: Int
    ) -> Int {
        let target = controller.targetFrames(latenessFrames: latenessFrames, periodFrames: 0)
        return alignedLatency(targetFrames: target, packetFrames: packetFrames, readFrames: readFrames, phaseFrames: phaseFrames)
    }

    /// What an adaptive buffer should do with its latency now (it asks at most every 100 ms).
    public enum AdaptiveStep: Hashable, Sendable {
        case hold
        /// Raise by at least this many frames (rounded up to whole periods of the audio).
        case raise(Int)
        /// Lower by at most this many frames (whole periods of the audio that have arrived).
        case lower(atMost: Int)
    }

    /// The adaptive buffer's move from its measured latency to its aligned target (`adaptiveTargetFrames`):
    /// up as soon as it is below (a frame below the aligned target loses a whole step of slack), by at most
    /// 10 ms at a time; down only when half a packet above (each move is a crossfaded splice: not worth less).
    /// Pure.
    @_noLocks @_noAllocation
    public static func adaptiveStep(currentFrames: Int, desiredFrames: Int, packetFrames: Int, sampleRate: Int) -> AdaptiveStep {
        let difference = desiredFrames - currentFrames
        if difference > 0 { return .raise(min(difference, sampleRate / 100)) }
        if -difference * 2 >= packetFrames { return .lower(atMost: -difference) }
        return .hold
    }

    /// Fixed target, after each read of `readFrames` on a device that plays the stream alone and follows it
    /// (`StreamReceiver.render`'s `deviceDelayLimitFrames`): every `phaseCheckFrames`, a frame's move of the
    /// device toward the phase the start put its reads at (`phaseMoveFrames`), measured by `phase` (the reads'
    /// phase against the fastest recent packets, `JitterBuffer.arrivalPhaseFrames`, nil when unknown).
    ///
    /// The two peers' clocks drift apart: at 50 ppm the reads slide past the packet grid by a packet in half a
    /// minute, and with them the slack of the worst read, by up to a period. A frame at a time, the device's time
    /// follows the sender's, as a sound card slaved to word clock follows its master: the buffer's latency stays
    /// where it started and drift compensation has little left to correct. It also brings the reads to the
    /// fastest packets when the first one came slow (while drift compensation learns its setpoint in the first
    /// second, part of that may stay as latency, never as lost slack). Device thread.
    public mutating func deviceMove(afterReading readFrames: Int, nominalReadFrames: Int, phase: () -> Int?) -> Int {
        guard placesFixedStart, anchorArrival == nil else { return 0 }
        framesSincePhaseCheck += readFrames
        guard framesSincePhaseCheck >= phaseCheckFrames else { return 0 }
        framesSincePhaseCheck = 0
        guard let phase = phase() else { return 0 }
        return Self.phaseMoveFrames(
            targetFrames: format.targetLatencyFrames, packetFrames: format.packetFrames, readFrames: nominalReadFrames,
            phaseFrames: phase)
    }

    /// Whether the buffer anchored and the start is not placed yet (the next read places it). Device thread.
    public var awaitsPlacement: Bool { anchorArrival != nil }

    /// The buffer (re)anchored on a packet that arrived at `arrival`. Device thread.
    public mutating func anchored(arrival: HostTime) {
        guard placesFixedStart else { return }
        anchorArrival = arrival
        askedDeviceDelay = false
    }

    /// Before each read of `readFrames` stream frames at `now`: places the start at the first read after an
    /// anchor. `nominalReadFrames` is what the reads come in on average (they differ by a frame through a
    /// resampler).
    ///
    /// With `deviceDelayLimitFrames` above 0 the device may delay its reads by up to that many stream frames
    /// (its clock plays nothing else). At the first read after an anchor whose phase adds to the latency, the
    /// policy then asks for `phaseDelayFrames` instead of placing the start: this read must not take place
    /// (the buffer stays unread), and the next one, that much later, places the start with no excess (a frame,
    /// for rounding).
    /// - Returns: stream frames the device should delay its reads by before the next one, else 0 (read now).
    /// Device thread.
    @discardableResult
    public mutating func beforeRead(
        _ buffer: inout JitterBuffer, now: HostTime, readFrames: Int, nominalReadFrames: Int, resampled: Bool,
        deviceDelayLimitFrames: Int = 0
    ) -> Int {
        guard placesFixedStart, let arrival = anchorArrival else { return 0 }
        let elapsed = Self.frames(from: arrival, to: now, sampleRate: format.sampleRate)
        if deviceDelayLimitFrames > 0, !askedDeviceDelay {
            askedDeviceDelay = true
            let delay = Self.phaseDelayFrames(
                targetFrames: format.targetLatencyFrames, packetFrames: format.packetFrames, readFrames: nominalReadFrames,
                phaseFrames: elapsed)
            // One frame more: the read then comes a frame after the edge, not on it, where the arrival's and the
            // clock's rounding to whole frames and nanoseconds could put it a frame before (which costs a read).
            if delay > 0, delay + 1 <= deviceDelayLimitFrames { return delay + 1 }
        }
        anchorArrival = nil
        askedDeviceDelay = false
        startPlayout(&buffer, elapsed: elapsed, nominalReadFrames: nominalReadFrames, resampled: resampled)
        return 0
    }

    /// Whole frames from `start` to `end` at `sampleRate` (rounded down).
    @inline(__always)
    private static func frames(from start: HostTime, to end: HostTime, sampleRate: Int) -> Int {
        Int((end.nanoseconds - start.nanoseconds) * Int64(sampleRate) / 1_000_000_000)
    }

    /// Fixed target, once per read while drift compensation holds the setpoint: the frames to move the play
    /// head by (positive: ahead, skipping audio; negative: back, repeating it) when the latency has jumped by
    /// at least `stepThresholdFrames` from one read to the next and stayed there for `stepConfirmationFrames`
    /// of reads (back to where it stood before the jump), else nil.
    ///
    /// Drift moves the latency by a fraction of a frame per read, however far drift compensation lets it
    /// wander (at ±500 ppm and its 10 s loop, some tens of frames, over seconds); jitter does not move it (it is
    /// measured against the fastest recent packet). A jump of half a packet from one read to the next is
    /// something else: a play head that skipped a device period its time base did not lose (a JACK timeline
    /// that counted a server's stall as a lost cycle when the server had not lost it), or the fastest packets'
    /// delay that stepped. Left to drift compensation, a jump of one 64-frame cycle down took 10 s to give
    /// back at −140 ppm, with every packet late under a 2-packet target (lab, 2026-11-29: 2,000 late packets
    /// in a minute). Moved back at once, it costs one splice. Device thread.
    @_noLocks @_noAllocation
    public mutating func stepCorrection(measuredLatency latency: Double, readFrames: Int) -> Int? {
        guard placesFixedStart else { return nil }
        defer { previousLatency = latency }
        if framesSinceStep < stepConfirmationFrames {
            // A correction's own splice plays out (a repetition takes as long as it is): no jump is looked for.
            framesSinceStep += readFrames
            return nil
        }
        if let base = latencyBeforeJump {
            let moved = latency - base
            guard abs(moved) >= Double(stepThresholdFrames) else {
                latencyBeforeJump = nil  // it came back by itself
                return nil
            }
            framesSinceJump += readFrames
            guard framesSinceJump >= stepConfirmationFrames else { return nil }
            latencyBeforeJump = nil
            framesSinceStep = 0
            return Int(moved < 0 ? moved - 0.5 : moved + 0.5)  // to the nearest frame
        }
        if let previous = previousLatency, abs(latency - previous) >= Double(stepThresholdFrames) {
            latencyBeforeJump = previous
            framesSinceJump = 0
        }
        return nil
    }

    /// The device's time base stepped just before this read: a JACK timeline caught up frames of a server's
    /// stall or of missed cycles. `levelCorrection` watches for the next second. Device thread.
    public mutating func deviceTimeStepped() { levelWatchFrames = levelWatchLengthFrames }

    /// Fixed target on a JACK cycle, once per read while drift compensation holds `setpoint`, within a second
    /// after the device's time base stepped (`deviceTimeStepped`): the frames to move the play head back by
    /// (negative: repeating audio) when the latency has stood about a packet or more (`levelThresholdFrames`)
    /// below the setpoint for 50 ms of reads (`levelConfirmationFrames`), else nil.
    ///
    /// `stepCorrection` cannot run on a JACK cycle: there the fitted timeline itself moves the measured latency
    /// now and then (a stall's remainder, a line fitted again), and each such move would be spliced. But a burst
    /// of server stalls and xruns can leave the play head a packet or two ahead of where it stood: the lab's
    /// JACK loop (2026-11-29, 64-frame cycles, 4 ms target) lost 2.6 ms of its buffer at once and then played
    /// 5,222 late packets while drift compensation slewed back for 8 s. Drift moves the latency slowly, but
    /// while drift compensation converges on a clock hundreds of ppm off its level swings by more than a
    /// packet: the watch opens only when the device's time base stepped.
    ///
    /// Only down, never up. After a step the measured latency itself can stand a millisecond off for longer
    /// than 50 ms while the timeline's line settles: moved ahead on such a reading (an earlier version did, in
    /// either direction), the head played a millisecond short, and the lab's JACK loop at 2.5 packets counted
    /// 83 glitches in 2 minutes against 30 without the correction. Moved back on a wrong reading, the stream
    /// plays a millisecond later until drift compensation has slewed it back, without a late packet; moved back
    /// on a right one, it costs one splice and the packets of those 50 ms instead of seconds of late ones.
    /// Device thread.
    @_noLocks @_noAllocation
    public mutating func levelCorrection(measuredLatency latency: Double, setpoint: Double, readFrames: Int) -> Int? {
        guard placesFixedStart, levelWatchFrames > 0 else {
            framesBelowLevel = 0  // a count from an earlier watch must not shorten the next one's 50 ms
            return nil
        }
        levelWatchFrames -= readFrames
        if framesSinceLevelCorrection < levelHoldoffFrames {
            // The correction's own splice plays out (a repetition takes as long as it is).
            framesSinceLevelCorrection += readFrames
            return nil
        }
        let below = setpoint - latency
        guard below >= Double(levelThresholdFrames) else {
            framesBelowLevel = 0
            return nil
        }
        framesBelowLevel += readFrames
        guard framesBelowLevel >= levelConfirmationFrames else { return nil }
        framesBelowLevel = 0
        let shift = -Int(below + 0.5)  // back, to the nearest frame
        framesSinceLevelCorrection = 0
        levelHoldoffFrames = stepConfirmationFrames - shift
        return shift
    }

    /// Frames added to the aligned latency when reads vary by a frame around their nominal size (a resampler
    /// asks for one more or one fewer now and then): the latency may then wobble by that much and stays inside
    /// the aligned step, where the slack is the same.
    private static func wobbleFrames(resampled: Bool) -> Int { resampled ? 2 : 0 }

    /// Fixed target, first read after the anchor: moves the play head so that the latency is the aligned one
    /// for the phase of this read against the anchor packet's arrival. The buffer placed the head as if reads
    /// were continuous (the anchor packet waiting T − P); the read came `elapsed` frames after the anchor
    /// packet arrived, so every packet has already waited that much longer.
    private func startPlayout(_ buffer: inout JitterBuffer, elapsed: Int, nominalReadFrames: Int, resampled: Bool) {
        let latency =
            Self.alignedLatency(
                targetFrames: format.targetLatencyFrames, packetFrames: format.packetFrames, readFrames: nominalReadFrames,
                phaseFrames: elapsed) + Self.wobbleFrames(resampled: resampled)
        // At latency T the head would be `elapsed` ahead of where the buffer put it; at the aligned latency,
        // `latency − T` less.
        buffer.moveStart(byFrames: elapsed - (latency - format.targetLatencyFrames))
    }

    /// Once per period while playing, for drift compensation: the latency to hold. Adaptive: the buffer's
    /// target now. Fixed: nil while the latency of the first second of playout is learned (again after every
    /// re-anchor and after a trim), then that latency. `reset` is called when learning starts again (the
    /// drift loop restarts from its estimate). Device thread.
    public mutating func driftSetpoint(_ statistics: JitterBufferStatistics, measuredLatency latency: Double, reset: () -> Void) -> Double?
    {
        let trimmed = format.adaptiveLatencyFrames == nil && statistics.latencyChanges != learnedLatencyChanges
        if statistics.resynchronizations != learnedResynchronizations || trimmed {
            learnedResynchronizations = statistics.resynchronizations
            learnedLatencyChanges = statistics.latencyChanges
            learningPeriods = 0
            learningSum = 0
            previousLatency = nil
            latencyBeforeJump = nil
            framesBelowLevel = 0
            reset()
        }
        if format.adaptiveLatencyFrames != nil { return Double(statistics.targetFrames) }
        guard learningPeriods >= learningLength else {
            learningSum += latency
            learningPeriods += 1
            if learningPeriods == learningLength { levelSetpoint = learningSum / Double(learningLength) }
            return nil
        }
        return levelSetpoint
    }
}

@inline(__always)
private func modulo(_ value: Int, _ divisor: Int) -> Int {
    let remainder = value % divisor
    return remainder < 0 ? remainder + divisor : remainder
}

private func greatestCommonDivisor(_ a: Int, _ b: Int) -> Int {
    var (x, y) = (abs(a), abs(b))
    while y != 0 { (x, y) = (y, x % y) }
    return max(1, x)
}
