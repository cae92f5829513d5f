import TuttiCore

/// The host time of every frame a JACK client processes, and the frames it must catch up: the JACK
/// counterpart of `PacedDeviceClock`'s exact deadlines.
///
/// **Time.** Each cycle the client observes when the server started the cycle, on `CLOCK_MONOTONIC`
/// (its own wake-up less `jack_frames_since_cycle_start`), against JACK's frame counter at that start
/// (`jack_last_frame_time`). A least-squares line through the last `capacity` observations maps frames to
/// host time (as Link's `HostTimeFilter` maps sample time): it follows the server's real rate, so a
/// receiver's play head and its packets' arrivals (stamped by the network thread on the same clock) keep
/// one time base, and wake-up jitter (tens of µs) is averaged down to a few µs.
///
/// JACK's own cycle times (`jack_get_cycle_times`) are not used: they come from the server's delay-locked
/// loop, which after late wake-ups (a loaded machine, the dummy backend) wanders milliseconds from the
/// cycles' real starts for seconds at a time (measured on jackd2 1.9.21: −42…+11 ms after a stall, −1.5…+1.7
/// ms on a non-realtime server). A receiver's drift compensation reads such wander as a clock hundreds of
/// ppm off and follows it (±500 ppm, its limit), draining or filling the buffer by milliseconds. They are
/// also on `CLOCK_MONOTONIC_RAW` there, which would need a mapping; a difference of two JACK times (frames
/// since the cycle started) needs none.
///
/// **Stalls.** A server that stalls (a late wake-up past its next deadline; the dummy backend then
/// re-anchors its cycle) starts its later cycles later than its frame counter says: time was lost, as a
/// paced device thread loses it when it wakes late. As `PacedDeviceClock` runs the missed periods, the
/// timeline counts the lost time as frames: once `stepCycles` cycles in a row start
/// `stepThresholdNanoseconds` or more after the line, their mean delay, in whole cycles (what is left over
/// is carried to the next stall), is added to the timeline's frames, and the clients catch those frames up (`skippedFrames`: a receiver skips them, a sender sends silence). So a
/// stream's timeline stays on the host clock, and neither its latency nor its measured level steps at a
/// stall (a level step is what drift compensation would chase). A stall over `maxCatchUpFrames` (100 ms)
/// starts the line again instead.
/// Each client decides the whole cycles from its own readings (floored to a frame): two clients of one
/// server may round a stall lying within some 20 µs of a half cycle differently, and a stream between
/// them then runs a cycle longer one way and shorter the other until drift compensation evens it out.
/// Streams between different servers, the usual case, are not affected.
///
/// **Missed cycles.** A client normally runs every cycle once; on an overloaded server it may miss one (the
/// counter stays a cycle ahead of it) or run late and read the next cycle's counter once. A lead that
/// persists over two callbacks is caught up the same way. A counter that jumps back, or ahead of the
/// elapsed time, is followed without catching up.
///
/// Pure: every time is passed in. Realtime-safe: `advance` (no allocation; O(`capacity`)). Thread-safe:
/// no (JACK's process thread owns it).
package struct JACKTimeline: ~Copyable {
    /// One callback's share of the timeline.
    package struct Cycle: Hashable, Sendable {
        /// Host time of the first frame this callback processes, and of the frame after its last.
        package var start: HostTime
        package var end: HostTime
        /// Frames of the timeline just before `start` that this client missed: catch them up first (they
        /// run from `start` less `skippedFrames` frames to `start`). 0 almost always.
        package var skippedFrames: Int
        /// The callback woke more than a period plus 1 ms after its cycle started (an overloaded server).
        package var late: Bool
    }

    /// Observations the line is fitted through (512 cycles: 0.7 s at 64 frames, 11 s at 1024).
    package let capacity: Int
    /// Frames caught up at most (100 ms at the current rate); a longer gap starts the line again.
    package var maxCatchUpFrames: Int { sampleRate / 10 }
    /// A cycle starting this much later (or earlier) than the line, `stepCycles` cycles in a row, is a step.
    package static let stepThresholdNanoseconds: Int64 = 1_500_000
    /// Cycles in a row off the line that make a step.
    /// Cycles in a row off the line that make a step: eight, whose mean delay every client of the server
    /// measures alike to a few µs (a single reading is floored to a frame, 21 µs), so that they round a
    /// stall to the same whole cycles.
    package static let stepCycles = 8

    package private(set) var sampleRate: Int
    /// The next timeline frame this client processes; valid once started.
    package private(set) var position: Int64 = 0
    /// Cycles this client missed, server stalls caught up, and restarts of the line, so far.
    package private(set) var missedCycles: UInt64 = 0
    package private(set) var stalls: UInt64 = 0
    package private(set) var rebases: UInt64 = 0

    /// Observations: timeline frame and host time (ns) of a cycle's start, in a ring; `newest` is the last.
    private let frames: UnsafeMutableBufferPointer<Int64>
    private let times: UnsafeMutableBufferPointer<Int64>
    private var count = 0
    private var newest = -1
    private var counter = CounterExtender<UInt32>()
    private var started = false
    /// Timeline frame minus JACK's (extended) frame counter: the stalls caught up, less counter jumps.
    private var offset: Int64 = 0
    /// Frames added for stalls that the position has not caught up yet (to tell them from missed cycles).
    private var uncaughtStallFrames: Int64 = 0
    /// The client's lead over `position` at the last callback (a lead must persist to be caught up).
    private var pendingLead: Int64 = 0
    /// Cycles in a row that started off the line (positive: late), and the sum of their offsets (ns).
    private var offLineRun = 0
    private var offLineSum: Int64 = 0
    /// Time lost to stalls and not caught up as frames (the part under half a cycle, which the line holds), in
    /// frames: added to the next stall, so whole-cycle catch-ups follow the lost time without a bias.
    private var stallCarryFrames = 0.0
    /// The line, relative to the newest observation: ns = times[newest] + intercept + slope × (frame − frames[newest]).
    private var intercept = 0.0
    private var slope = 0.0

    /// Allocates the observation ring. Control plane.
    package init(sampleRate: Int, capacity: Int = 512) {
        precondition(sampleRate > 0 && capacity >= 2)
        self.sampleRate = sampleRate
        self.capacity = capacity
        frames = .allocate(capacity: capacity)
        frames.initialize(repeating: 0)
        times = .allocate(capacity: capacity)
        times.initialize(repeating: 0)
        slope = 1e9 / Double(sampleRate)
    }

    deinit {
        frames.deallocate()
        times.deallocate()
    }

    private var nominalSlope: Double { 1e9 / Double(sampleRate) }

    /// Host time of timeline frame `frame` on the line (0 before any observation). Realtime-safe: yes.
    package func hostTime(ofFrame frame: Int64) -> HostTime {
        guard newest >= 0 else { return HostTime(nanoseconds: 0) }
        let offset = intercept + slope * Double(frame - frames[newest])
        return HostTime(nanoseconds: times[newest] &+ nearest(offset))
    }

    /// Takes one process callback and returns the host times of the frames it processes.
    ///
    /// - Parameters:
    ///   - frameCounter: JACK's frame counter at the start of the server's current cycle (`jack_last_frame_time`).
    ///   - cycleStart: when the server started that cycle (host time), or nil when it could not be read
    ///     consistently (the cycle changed between the reads): the line then goes on without it.
    ///   - wake: when the callback woke (host time), for `late`.
    ///   - frames: frames in this callback (the buffer size).
    ///   - sampleRate: the server's rate now; a change starts the timeline again.
    /// Realtime-safe: yes.
    @_noLocks @_noAllocation
    package mutating func advance(
        frameCounter: UInt32, cycleStart: HostTime?, wake: HostTime, frames cycleFrames: Int, sampleRate rate: Int
    ) -> Cycle {
        if rate > 0, rate != sampleRate {
            sampleRate = rate
            forget()
            started = false
            stallCarryFrames = 0
        }
        let cycle = Int64(max(cycleFrames, 1))
        var frame = counter.extend(frameCounter) &+ offset
        if !started {
            started = true
            offset = 0
            frame = counter.extend(frameCounter)
            position = frame
            pendingLead = 0
            uncaughtStallFrames = 0
        }
        // Where the server's current cycle lies on the timeline, and the line through the cycles' starts.
        if let cycleStart {
            if newest >= 0 {
                let elapsedFrames = Double(cycleStart.nanoseconds - times[newest]) / nominalSlope
                let advanced = frame - frames[newest]
                if Double(advanced) > elapsedFrames + Double(cycle) + Double(sampleRate) * 0.005 {
                    // The counter ran ahead of the time elapsed: a jump of the counter, not time. Follow the time.
                    let jump = advanced - max(0, nearest(elapsedFrames / Double(cycle))) * cycle
                    offset -= jump
                    frame -= jump
                    rebases &+= 1
                }
            }
            placeOnLine(frame: &frame, start: cycleStart.nanoseconds, cycleFrames: cycle)
        } else if newest < 0 {
            record(frame: frame, time: wake.nanoseconds)  // the very first cycle: the wake-up will do
        }
        // This client's position against the server's cycle.
        var skipped = 0
        let lead = frame - position
        if lead > Int64(maxCatchUpFrames) || lead < -Int64(maxCatchUpFrames) {
            if lead > 0 { missedCycles &+= UInt64(max(0, lead - uncaughtStallFrames) / cycle) }
            uncaughtStallFrames = 0
            position = frame
            rebases &+= 1
        } else if lead != 0, lead == pendingLead {
            // The same lead twice: not an early read of the next cycle's counter, but cycles missed or a
            // stall (caught up), or cycles run twice (the position follows the server's).
            if lead > 0 {
                skipped = Int(lead)
                let stalled = min(lead, uncaughtStallFrames)
                uncaughtStallFrames -= stalled
                missedCycles &+= UInt64((lead - stalled + cycle - 1) / cycle)
            }
            position = frame
        }
        pendingLead = frame - position
        let start = hostTime(ofFrame: position)
        let end = hostTime(ofFrame: position + Int64(cycleFrames))
        let periodNanoseconds = Int64(Double(cycleFrames) * nominalSlope)
        let late = wake.nanoseconds - hostTime(ofFrame: frame).nanoseconds > periodNanoseconds + 1_000_000
        position += Int64(cycleFrames)
        return Cycle(start: start, end: end, skippedFrames: skipped, late: late)
    }

    /// Adds the cycle starting at `start` (host ns) at timeline frame `frame` to the line, unless it starts
    /// off the line: then it is held back until `stepCycles` cycles in a row agree, and the timeline steps
    /// by the stall in whole cycles (`frame` moves on; the rest, under half a cycle, the line absorbs) or,
    /// for a stall too long to catch up, shorter than half a cycle, or an early start, the line starts again.
    /// Whole cycles keep the streams' packets aligned with the cycles: a sender catching up 89 frames would
    /// hold 25 of every cycle's frames in its packetizer until the next cycle (measured: both legs' buffers
    /// then run 0.5 ms lower, which drift compensation chases).
    private mutating func placeOnLine(frame: inout Int64, start: Int64, cycleFrames cycle: Int64) {
        guard newest >= 0 else {
            record(frame: frame, time: start)
            return
        }
        if frame <= frames[newest] { return }  // this cycle is on the line already
        let residual = start - hostTime(ofFrame: frame).nanoseconds
        guard abs(residual) >= Self.stepThresholdNanoseconds else {
            offLineRun = 0
            record(frame: frame, time: start)
            return
        }
        if offLineRun == 0 || (residual > 0) != (offLineSum > 0) {
            offLineRun = 1
            offLineSum = residual
        } else {
            offLineRun += 1
            offLineSum += residual
        }
        guard offLineRun >= Self.stepCycles else { return }
        let offLine = offLineSum / Int64(offLineRun)
        // The stall in frames, with what earlier stalls left over (the line holds it, the frames do not).
        let lost = Double(offLine) / slope + stallCarryFrames
        let stallFrames = max(0, nearest(lost / Double(cycle))) * cycle
        offLineRun = 0
        if offLine > 0, stallFrames <= Int64(maxCatchUpFrames) {
            stallCarryFrames = lost - Double(stallFrames)
            if stallFrames > 0 {
                offset += stallFrames
                frame += stallFrames
                uncaughtStallFrames += stallFrames
                stalls &+= 1
            } else {
                forget()  // under half a cycle: the line takes it at once, and it is carried
                rebases &+= 1
            }
        } else {
            stallCarryFrames = offLine > 0 ? 0 : lost
            forget()
            rebases &+= 1
        }
        record(frame: frame, time: start)
    }

    private mutating func forget() {
        count = 0
        newest = -1
        intercept = 0
        slope = nominalSlope
        offLineRun = 0
    }

    /// Adds one observation and fits the line again.
    private mutating func record(frame: Int64, time: Int64) {
        newest = (newest + 1) % capacity
        frames[newest] = frame
        times[newest] = time
        count = min(count + 1, capacity)
        fit()
    }

    /// Least squares through the observations, relative to the newest; the slope is the nominal one until
    /// 16 cycles are in, and stays within 1 % of it (no JACK server runs further off).
    private mutating func fit() {
        let nominal = nominalSlope
        let baseFrame = frames[newest]
        let baseTime = times[newest]
        var meanX = 0.0
        var meanY = 0.0
        for index in 0..<count {
            meanX += Double(frames[index] - baseFrame)
            meanY += Double(times[index] - baseTime)
        }
        meanX /= Double(count)
        meanY /= Double(count)
        var fitted = nominal
        if count >= 16 {
            var sxx = 0.0
            var sxy = 0.0
            for index in 0..<count {
                let x = Double(frames[index] - baseFrame) - meanX
                sxx += x * x
                sxy += x * (Double(times[index] - baseTime) - meanY)
            }
            if sxx > 0 { fitted = min(max(sxy / sxx, nominal * 0.99), nominal * 1.01) }
        }
        slope = fitted
        intercept = meanY - fitted * meanX
    }

    /// `value` rounded half away from zero (`rounded()` would bring in metadata for its rounding rule).
    @inline(__always)
    private func nearest(_ value: Double) -> Int64 { Int64(value + (value < 0 ? -0.5 : 0.5)) }

    /// Host time of the frame `offset` frames into a span of `frames` frames running from `start` to `end`:
    /// linear, so consecutive chunks of one cycle abut. Realtime-safe: yes.
    @inlinable
    package static func hostTime(atFrameOffset offset: Int, frames: Int, start: HostTime, end: HostTime) -> HostTime {
        guard frames > 0 else { return start }
        return HostTime(nanoseconds: start.nanoseconds &+ (end.nanoseconds &- start.nanoseconds) &* Int64(offset) / Int64(frames))
    }
}
