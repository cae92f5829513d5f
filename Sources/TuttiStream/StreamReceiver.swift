import Synchronization
import TuttiCore
import TuttiResample
import TuttiWire

/// The receiving end of one stream, apart from its socket: the network thread hands it datagrams, the
/// device thread takes one period at a time, the control plane reads its counters.
///
/// - Network thread: `accept(datagram:arrival:)` decodes and validates (SSRC, payload type, size) and
///   queues the packet in a `PacketRing`; anything else is counted invalid and dropped.
/// - Device thread: `render(frames:now:captureClockNow:)` drains the ring into the `JitterBuffer`, lets the
///   `LatencyPolicy` place and hold the latency, plays `frames` frames into `output`, and publishes the buffer's
///   counters (every 10 ms of audio, and at once when its state changes) and the level of `output`
///   (`LevelMeter`, relaxed atomics).
///
/// **Rate conversion and drift.** With `outputSampleRate` different from the stream's rate, or with drift
/// compensation on, the buffer's audio goes through a variable-ratio `Resampler` (the near-unity polyphase
/// sinc at equal rates, 19 frames; libsamplerate for a real conversion, 0.4 ms): each period takes as
/// many stream frames as the device period needs, and a `DriftController` steers the ratio so that the
/// buffer's latency (measured against the fastest recent packet) stays at its target while the sender's
/// sample clock and the receiver's drift apart. Streams from one remote device clock share one estimate
/// (`joinDriftGroup`, `DriftGroup`): one leads, the others apply its correction. The resampler's delay is
/// counted in the latency.
/// - Any thread: `snapshot()`, `driftFigures()`, `levelReading()`.
///
/// Realtime-safe: `accept` and `render` (no allocation, lock or log after `init`; measured by
/// `Benchmarks/`). Hold it through `unowned(unsafe)` or a retained context on the data threads.
public final class StreamReceiver: @unchecked Sendable {
    public let format: StreamFormat
    public let ssrc: UInt32
    public let payloadType: UInt8
    /// The last period played (`format.channels` interleaved, up to `maxPeriodFrames`). Device thread.
    public let output: UnsafeMutableBufferPointer<Float>
    private let ring: PacketRing
    /// How long after a read's time a packet may have arrived and still be taken in by it when the device
    /// catches up (`JitterBuffer.arrivalHorizonFrames`).
    private let arrivalHorizon: Duration
    /// Device thread only.
    private var jitterBuffer: JitterBuffer
    private let published = PublishedJitterStatistics()
    private let invalidDatagrams = Atomic<UInt64>(0)
    /// The device's rate (frames per second of `output`).
    public let outputSampleRate: Int
    /// Rate conversion and drift compensation (nil: the buffer plays straight into `output`).
    private var resampler: Resampler?
    private var drift: DriftController
    private let driftCompensation: Bool
    /// The streams of the same remote device clock, when the receiver joined one (`joinDriftGroup`); written
    /// on the control plane before the device thread first renders, then the device thread's.
    private var driftGroup: DriftGroup?
    /// Whether the receiver still follows or leads its group (false once it left it: its stream strayed).
    /// Written by the control plane before the first render, then by the device thread; read by any.
    private let inDriftGroupFlag = Atomic<Bool>(false)
    private var inDriftGroup: Bool {
        get { inDriftGroupFlag.load(ordering: .relaxed) }
        set { inDriftGroupFlag.store(newValue, ordering: .relaxed) }
    }
    /// Whether this receiver leads its group now. Device thread.
    private var leadsDriftGroup = false
    /// Times the receiver left its group because its buffer strayed under the shared correction.
    private let driftGroupDepartures = Atomic<UInt64>(0)
    /// Whether audio goes through the resampler (fixed at init; readable from any thread).
    public let resamples: Bool
    /// Stream frames read from the buffer for one period (resampler input). Device thread.
    private let resamplerInput: UnsafeMutableBufferPointer<Float>
    /// Every latency decision (start placement, anchor trimming, drift setpoint). Device thread.
    private var policy: LatencyPolicy
    /// What the last `render` asked of the device that plays the stream alone (`takeDeviceTimingRequest`).
    private var deviceTimingRequest = DeviceTimingRequest.none
    /// The latest start delay asked of the device (device frames), −1 before any, and the moves asked since
    /// the start: published for `deviceAlignment`.
    private let latestDeviceDelay = Atomic<Int>(-1)
    private let deviceMoves = Atomic<UInt64>(0)
    /// Stream frames read since the counters were last published, and how many make a publication.
    private var framesSincePublished = 0
    private let publishEveryFrames: Int
    private var publishedState: JitterBufferState = .idle
    private let driftBits = Atomic<UInt64>(0)
    private let ratioBits = Atomic<UInt64>(0)
    /// The level of what `render` plays (after rate conversion and drift compensation, before any mix).
    /// Device thread; published to `level`.
    private var meter: LevelMeter
    private let level = PublishedLevel()

    /// Allocates everything the stream needs. Control plane.
    public init(
        format: StreamFormat, ssrc: UInt32, payloadType: UInt8, maxPeriodFrames: Int, signalLossTimeout: Duration = .seconds(1),
        concealment: Concealment = .repetition, codecDelayFrames: Int = 0, outputSampleRate: Int? = nil,
        driftCompensation: Bool = true
    ) {
        self.format = format
        let outputRate = outputSampleRate ?? format.sampleRate
        self.outputSampleRate = outputRate
        self.driftCompensation = driftCompensation
        policy = LatencyPolicy(format: format, periodsPerSecond: outputRate / max(1, maxPeriodFrames))
        publishEveryFrames = max(1, format.sampleRate / 100)
        // A slower loop than the controller's default (10 s instead of 3 s; the level averaged over 3 s):
        // clocks drift steadily, and a slow loop keeps network jitter out of the pitch. ±500 ppm covers
        // sound cards, which differ by up to a few hundred ppm.
        drift = DriftController(
            DriftController.Configuration(
                sampleRate: outputRate, periodFrames: maxPeriodFrames, levelTimeConstant: 3, loopTimeConstant: 10,
                maximumCorrectionPPM: 500))
        if outputRate != format.sampleRate || driftCompensation {
            do throws(ResamplerError) {
                resampler = Optional(
                    try Resampler(
                        inputRate: format.sampleRate, outputRate: outputRate, channels: format.channels,
                        maximumOutputFrames: maxPeriodFrames,
                        mode: .driftCompensation(inputRate: format.sampleRate, outputRate: outputRate, maximumCorrectionPPM: 1_000)))
            } catch {
                preconditionFailure("the resampler refused a supported conversion \(format.sampleRate) → \(outputRate) Hz: \(error)")
            }
        }
        resamples = outputRate != format.sampleRate || driftCompensation
        let maximumInput = resampler?.maximumInputFrames ?? 0
        resamplerInput = .allocate(capacity: max(1, maximumInput) * format.channels)
        resamplerInput.initialize(repeating: 0)
        self.ssrc = ssrc
        self.payloadType = payloadType
        jitterBuffer = JitterBuffer(
            format: format, signalLossTimeout: signalLossTimeout, concealment: concealment, codecDelayFrames: codecDelayFrames)
        // Twice the jitter buffer's ring, and at least what arrives while a paced device clock falls behind
        // as far as it catches up (100 ms, `PacedDeviceClock.maxLateFrames`) plus that ring: a clock that
        // catches up leaves what arrived meanwhile here for the reads it belongs to (`render`).
        let catchUpPackets = (format.sampleRate / 10 + format.packetFrames - 1) / format.packetFrames
        ring = PacketRing(
            capacity: max(64, 2 * jitterBuffer.capacity, jitterBuffer.capacity + catchUpPackets), maxPayloadBytes: format.payloadBytes)
        arrivalHorizon = .nanoseconds(Int64(jitterBuffer.arrivalHorizonFrames) * 1_000_000_000 / Int64(format.sampleRate))
        output = .allocate(capacity: maxPeriodFrames * format.channels)
        output.initialize(repeating: 0)
        meter = LevelMeter(windowFrames: LevelMeter.standardWindowFrames(sampleRate: outputRate))
    }

    deinit {
        // A leaving leader hands the group on: the next member to play takes over.
        if let driftGroup { _ = driftGroup.leader.compareExchange(expected: groupToken, desired: 0, ordering: .acquiringAndReleasing) }
        output.deallocate()
        resamplerInput.deallocate()
    }

    /// Takes one datagram off the network. Network thread only.
    /// - Returns: `false` when it was dropped as invalid (not RTP, another stream, wrong size) or the ring was full.
    @discardableResult
    public func accept(datagram: UnsafeRawBufferPointer, arrival: HostTime) -> Bool {
        guard let packet = try? RTPPacketView.decode(datagram), packet.header.ssrc == ssrc,
            packet.header.payloadType == payloadType, format.acceptsPayload(count: packet.payloadCount)
        else {
            invalidDatagrams.add(1, ordering: .relaxed)
            return false
        }
        let payload = UnsafeRawBufferPointer(rebasing: datagram[packet.payloadOffset..<(packet.payloadOffset + packet.payloadCount)])
        return ring.push(
            PacketRing.Entry(
                sequenceNumber: packet.header.sequenceNumber, timestamp: packet.header.timestamp,
                captureTime: packet.header.captureTime, arrival: arrival, payloadCount: payload.count),
            payload: payload)
    }

    /// Counts a datagram the network thread could not even read whole (larger than its buffer).
    public func countInvalidDatagram() { invalidDatagrams.add(1, ordering: .relaxed) }

    /// Drains arrived packets into the jitter buffer and plays `frames` frames into `output`.
    /// Device thread only.
    /// - Parameters:
    ///   - now: the period's time on the monotonic clock.
    ///   - captureClockNow: the same instant on the stream's capture clock (for the latency figure and
    ///     synchronized playout), `Int64.min` if unknown.
    ///   - deviceCatchesUp: the device's periods may come late and then run back to back (a paced clock
    ///     catching up after a stall): a packet that arrived later than `now` by more than the jitter
    ///     buffer's `arrivalHorizonFrames` stays queued for the read it belongs to, as if the device had not
    ///     stalled (taken in at once, a stall's worth of packets would overrun the buffer's ring, which then
    ///     skips them). false: every queued packet is taken in (a JACK cycle, whose time is a fitted line).
    ///   - deviceDelayLimitFrames: how many frames (of the device's rate) the device could move its next
    ///     period by, its clock playing nothing else: 0, it cannot. With a fixed target, when the stream starts
    ///     at a phase that adds to its latency (`LatencyPolicy.phaseDelayFrames`), this period plays silence and
    ///     the device is asked to come later; while it plays, to keep the reads' phase a frame at a time
    ///     (`LatencyPolicy.deviceMove`). `takeDeviceTimingRequest()` says what, after each call.
    ///   - deviceTimeStepped: the device's time base stepped just before this read (a JACK timeline caught up
    ///     a server's stall or missed cycles): with a fixed target, a latency left a packet below its setpoint is
    ///     brought back at once within the next second (`LatencyPolicy.levelCorrection`).
    /// - Returns: the capture time of `output`'s first frame on the stream's capture clock (nanoseconds), or
    ///   `Int64.min` when unknown (concealment): what latency compensation needs, as the Audiobus receiver
    ///   port's timestamps give.
    @discardableResult
    public func render(
        frames: Int, now: HostTime, captureClockNow: Int64, deviceCatchesUp: Bool = false, deviceDelayLimitFrames: Int = 0,
        deviceTimeStepped: Bool = false
    ) -> Int64 {
        if deviceTimeStepped { policy.deviceTimeStepped() }
        let arrivedBy = deviceCatchesUp ? now + arrivalHorizon : HostTime(nanoseconds: .max)
        while ring.pop(arrivedBy: arrivedBy, { entry, payload in take(entry, payload) }) {}
        // In stream frames, rounded down: the delay asked for, rounded up to device frames, stays within the limit.
        let delayLimit = deviceDelayLimitFrames * format.sampleRate / outputSampleRate
        guard resampler != nil else {
            let deviceDelay = policy.beforeRead(
                &jitterBuffer, now: now, readFrames: frames, nominalReadFrames: frames, resampled: false,
                deviceDelayLimitFrames: delayLimit)
            if deviceDelay > 0 { return waitForDevice(delayFrames: deviceDelay, frames: frames) }
            let captureTime = jitterBuffer.read(into: output, frames: frames, now: now, captureClockNow: captureClockNow)
            if delayLimit > 0 { followDevicePhase(now: now, readFrames: frames, nominalReadFrames: frames) }
            publishIfDue(jitterBuffer.statistics, state: jitterBuffer.state, streamFrames: frames)
            measureLevel(frames: frames)
            return captureTime
        }
        let needed = resampler!.inputFramesNeeded(forOutputFrames: frames)
        let nominal = max(1, Int((Double(frames) * Double(format.sampleRate) / Double(outputSampleRate)).rounded()))
        let deviceDelay = policy.beforeRead(
            &jitterBuffer, now: now, readFrames: needed, nominalReadFrames: nominal, resampled: true, deviceDelayLimitFrames: delayLimit)
        if deviceDelay > 0 { return waitForDevice(delayFrames: deviceDelay, frames: frames) }
        var captureTime = jitterBuffer.read(
            into: resamplerInput, frames: needed, now: now, captureClockNow: captureClockNow, nominalFrames: nominal)
        do throws(ResamplerError) {
            _ = try resampler!.process(
                input: UnsafeBufferPointer(resamplerInput), inputFrames: needed, output: output, outputFrames: frames)
        } catch {
            for index in 0..<(frames * format.channels) { output[index] = 0 }
        }
        if delayLimit > 0 { followDevicePhase(now: now, readFrames: needed, nominalReadFrames: nominal) }
        var statistics = jitterBuffer.statistics
        let state = jitterBuffer.state
        if driftCompensation { steerDrift(statistics, state: state, readFrames: needed, correctsSteps: deviceCatchesUp) }
        // The resampler delays the audio: the output's first frame was captured that much earlier.
        let delay = Int64((resampler?.delayFrames ?? 0) * 1e9 / Double(outputSampleRate))
        if captureTime != .min { captureTime -= delay }
        if let latency = statistics.latencyNanoseconds { statistics.latencyNanoseconds = latency + delay }
        if publishIfDue(statistics, state: state, streamFrames: needed) {
            driftBits.store((followedEstimate ?? drift.driftEstimatePPM).bitPattern, ordering: .relaxed)
            ratioBits.store(
                (Double(format.sampleRate) / Double(outputSampleRate) * (resampler?.correction ?? 1)).bitPattern, ordering: .relaxed)
        }
        measureLevel(frames: frames)
        return captureTime
    }

    /// What the last `render` asked of the device that plays the stream alone (`.none` when it asked nothing, or
    /// was not given `deviceDelayLimitFrames`); taking it clears it. Device thread.
    public func takeDeviceTimingRequest() -> DeviceTimingRequest {
        defer { deviceTimingRequest = .none }
        return deviceTimingRequest
    }

    /// A period the stream does not read, because the device delays its next one (`LatencyPolicy.beforeRead`):
    /// silence, the buffer untouched, the delay kept in device frames (rounded up) for the device. Device thread.
    private func waitForDevice(delayFrames: Int, frames: Int) -> Int64 {
        let deviceFrames = (delayFrames * outputSampleRate + format.sampleRate - 1) / format.sampleRate
        deviceTimingRequest = .startLater(frames: deviceFrames)
        latestDeviceDelay.store(deviceFrames, ordering: .relaxed)
        deviceMoves.store(0, ordering: .relaxed)
        for index in 0..<(frames * format.channels) { output[index] = 0 }
        publishIfDue(jitterBuffer.statistics, state: jitterBuffer.state, streamFrames: frames)
        measureLevel(frames: frames)
        return .min
    }

    /// After a read, on a device that plays the stream alone: the frame's move that keeps its reads' phase
    /// against the packets (`LatencyPolicy.deviceMove`), asked of the device while the stream plays. Device thread.
    /// Only at the device's own rate: the phase and its band of two frames are the stream's frames, the move the
    /// device's (a stream at another rate gets the start's delay only). Device thread.
    @inline(__always)
    private func followDevicePhase(now: HostTime, readFrames: Int, nominalReadFrames: Int) {
        guard outputSampleRate == format.sampleRate else { return }
        let move = policy.deviceMove(afterReading: readFrames, nominalReadFrames: nominalReadFrames) {
            jitterBuffer.state == .playing ? jitterBuffer.arrivalPhaseFrames(now: now) : nil
        }
        guard move != 0 else { return }
        // Aligned by chance at the start (no delay asked): the device follows all the same.
        if latestDeviceDelay.load(ordering: .relaxed) < 0 { latestDeviceDelay.store(0, ordering: .relaxed) }
        deviceTimingRequest = .follow(frames: move)
        deviceMoves.add(1, ordering: .relaxed)
    }

    /// The device refused what the last `render` asked (another port came to its clock): the published figures
    /// take it back. Device thread.
    public func deviceTimingRefused(_ request: DeviceTimingRequest) {
        switch request {
        case .none: break
        case .startLater: latestDeviceDelay.store(-1, ordering: .relaxed)
        case .follow: deviceMoves.subtract(1, ordering: .relaxed)
        }
    }

    /// One queued packet into the jitter buffer (a re-anchor tells the latency policy). Device thread.
    @inline(__always)
    private func take(_ entry: PacketRing.Entry, _ payload: UnsafeRawBufferPointer) {
        let inserted = jitterBuffer.insert(
            sequenceNumber: entry.sequenceNumber, timestamp: entry.timestamp, captureTime: entry.captureTime,
            arrival: entry.arrival, payload: payload)
        if inserted == .resynchronized {
            policy.anchored(arrival: entry.arrival)
            // The figures are the start's: a new start, new figures.
            latestDeviceDelay.store(-1, ordering: .relaxed)
            deviceMoves.store(0, ordering: .relaxed)
        }
    }

    /// Publishes the counters when 10 ms of the stream have been read since the last time, or the state
    /// changed: the control plane reads at human rates, so a publication every period (19 relaxed stores)
    /// would be spent on nobody. Device thread.
    /// - Returns: whether it published.
    @inline(__always)
    @discardableResult
    private func publishIfDue(_ statistics: JitterBufferStatistics, state: JitterBufferState, streamFrames: Int) -> Bool {
        framesSincePublished += streamFrames
        guard framesSincePublished >= publishEveryFrames || state != publishedState else { return false }
        framesSincePublished = 0
        publishedState = state
        published.publish(statistics, state: state)
        return true
    }

    /// Meters the period just played into `output` and publishes a completed window. Device thread.
    @inline(__always)
    private func measureLevel(frames: Int) {
        if let reading = meter.measure(UnsafeBufferPointer(output), frames: frames, channels: format.channels) {
            level.publish(reading)
        }
    }

    /// The level of the audio played over the last completed window (`LevelMeter.standardWindowFrames`), nil
    /// before the first completes. Any thread.
    public func levelReading() -> LevelReading? { level.latest }

    /// Once per period while playing: holds the buffer's latency, measured against the fastest recent packet
    /// (`measuredLatencyFrames`, which jitter hardly moves and drift moves steadily), at the setpoint the
    /// latency policy gives (`LatencyPolicy.driftSetpoint`); the correction goes to the resampler.
    private func steerDrift(_ statistics: JitterBufferStatistics, state: JitterBufferState, readFrames: Int, correctsSteps: Bool) {
        guard state == .playing, let latency = statistics.measuredLatencyFrames else { return }
        let estimate = drift.driftEstimatePPM
        guard let setpoint = policy.driftSetpoint(statistics, measuredLatency: latency, reset: { drift.reset(driftPPM: estimate) })
        else { return }
        // Steps from one read to the next on paced clocks only: on a JACK cycle the fitted timeline itself
        // steps by part of a cycle now and then (the JACK loop test saw both legs "corrected" by 45 frames and
        // the real round trip grow by as much); there, only a packet's fall below the setpoint held for 50 ms
        // after the timeline stepped.
        if correctsSteps, let shift = policy.stepCorrection(measuredLatency: latency, readFrames: readFrames) {
            // A step, not drift: the play head goes back to where it stood at once (drift compensation saw the
            // step for 20 ms: too briefly to move its estimate).
            jitterBuffer.realign(byFrames: shift)
        } else if !correctsSteps,
            let shift = policy.levelCorrection(measuredLatency: latency, setpoint: setpoint, readFrames: readFrames)
        {
            jitterBuffer.realign(byFrames: shift)
        }
        if let group = driftGroup, inDriftGroup, !leadsDriftGroup {
            if group.leader.compareExchange(expected: 0, desired: groupToken, ordering: .acquiringAndReleasing).exchanged {
                // The group's leader left (or there was none): lead from where the group's estimate stands.
                leadsDriftGroup = true
                if group.correction != nil { drift.reset(driftPPM: group.estimatePPM) }
            } else if let correction = group.correction {
                // Follow the leader's correction, unless this stream strays under it: then it is not that clock's.
                if abs(latency - setpoint) > Double(DriftGroup.tolerancePackets * format.packetFrames) {
                    inDriftGroup = false
                    driftGroupDepartures.add(1, ordering: .relaxed)
                    drift.reset(driftPPM: group.estimatePPM)
                } else {
                    followedEstimate = group.estimatePPM
                    apply(correction)
                    return
                }
            }
        }
        let correction = drift.update(level: latency, target: setpoint)
        if leadsDriftGroup, let group = driftGroup { group.publish(correction: correction, estimatePPM: drift.driftEstimatePPM) }
        followedEstimate = nil
        apply(correction)
    }

    /// Steers the resampler to `correction` and publishes the ratio it makes (every period it changes, so a
    /// drift group's members show the same ratio once they have read the same period). Device thread.
    @inline(__always)
    private func apply(_ correction: Double) {
        try? resampler!.setCorrection(correction, transitionFrames: 4 * format.packetFrames)
        ratioBits.store((Double(format.sampleRate) / Double(outputSampleRate) * correction).bitPattern, ordering: .relaxed)
    }

    /// While following a drift group: the leader's estimate, which `driftFigures` reports. Device thread.
    private var followedEstimate: Double?

    /// Makes the receiver one of `group`'s streams (see `DriftGroup`): it leads the group's drift estimate
    /// or follows it. Control plane, before the stream is first rendered; ignored without drift compensation.
    public func joinDriftGroup(_ group: DriftGroup) {
        guard driftCompensation else { return }
        driftGroup = group
        inDriftGroup = true
    }

    /// Whether the receiver leads its drift group now (false without a group). Any thread, approximate.
    public var leadsItsDriftGroup: Bool {
        guard let driftGroup else { return false }
        return driftGroup.leader.load(ordering: .relaxed) == groupToken
    }

    /// Where the receiver stands in its drift group: nil without one (or without drift compensation).
    /// Any thread, approximate.
    public var driftGroupRole: DriftGroupRole? {
        guard driftGroup != nil else { return nil }
        if !inDriftGroup { return .left }
        return leadsItsDriftGroup ? .leads : .follows
    }

    /// Times the receiver left its drift group because its buffer strayed under the shared correction.
    /// Any thread.
    public var driftGroupLeaves: UInt64 { driftGroupDepartures.load(ordering: .relaxed) }

    /// This receiver's token in its drift group: its identity, never 0.
    private var groupToken: Int { Int(bitPattern: UInt(bitPattern: ObjectIdentifier(self).hashValue)) | 1 }

    /// Frames (of the device's rate) the device delayed its periods by, the last time the stream started, so
    /// that its reads come just as its packets have waited their slack (`render`'s `deviceDelayLimitFrames`),
    /// and the moves it was asked for since to keep that phase; nil when it never asked. Any thread.
    public var deviceAlignment: (startFrames: Int, moves: UInt64)? {
        let frames = latestDeviceDelay.load(ordering: .relaxed)
        return frames < 0 ? nil : (frames, deviceMoves.load(ordering: .relaxed))
    }

    /// Drift compensation's figures: the estimated drift of the sender's clock against the receiver's (ppm)
    /// and the ratio applied (stream frames per output frame); nil without a resampler. Any thread.
    public func driftFigures() -> (partsPerMillion: Double, ratio: Double)? {
        guard resamples else { return nil }
        return (Double(bitPattern: driftBits.load(ordering: .relaxed)), Double(bitPattern: ratioBits.load(ordering: .relaxed)))
    }

    /// The counters as last published by the device thread, and the datagrams dropped before the buffer
    /// (invalid, or ring overflow) added to `invalid`. Any thread.
    public func snapshot() -> (statistics: JitterBufferStatistics, state: JitterBufferState) {
        var (statistics, state) = published.load()
        statistics.invalid &+= invalidDatagrams.load(ordering: .relaxed) &+ ring.overflows
        return (statistics, state)
    }
}

/// Jitter-buffer counters published by the device thread every 10 ms of audio (relaxed atomic stores) and
/// read by the control plane. A reader may see counters from two consecutive publications mixed: each is a
/// cumulative count, so a display is at most 10 ms and a period stale.
final class PublishedJitterStatistics: @unchecked Sendable {
    private let received = Atomic<UInt64>(0)
    private let lost = Atomic<UInt64>(0)
    private let late = Atomic<UInt64>(0)
    private let duplicated = Atomic<UInt64>(0)
    private let reordered = Atomic<UInt64>(0)
    private let invalid = Atomic<UInt64>(0)
    private let underruns = Atomic<UInt64>(0)
    private let concealed = Atomic<UInt64>(0)
    private let resynchronizations = Atomic<UInt64>(0)
    private let bufferedFrames = Atomic<Int>(0)
    private let jitterBits = Atomic<UInt64>(0)
    private let latencyNanoseconds = Atomic<Int64>(.min)
    private let targetFrames = Atomic<Int>(0)
    private let latencyChanges = Atomic<UInt64>(0)
    private let stretchedFrames = Atomic<UInt64>(0)
    private let skippedFrames = Atomic<UInt64>(0)
    private let fecRecoveredFrames = Atomic<UInt64>(0)
    private let pendingMissing = Atomic<UInt64>(0)
    private let stateCode = Atomic<Int>(0)

    /// Device thread.
    @inline(__always)
    func publish(_ statistics: JitterBufferStatistics, state: JitterBufferState) {
        received.store(statistics.received, ordering: .relaxed)
        lost.store(statistics.lost, ordering: .relaxed)
        late.store(statistics.late, ordering: .relaxed)
        duplicated.store(statistics.duplicated, ordering: .relaxed)
        reordered.store(statistics.reordered, ordering: .relaxed)
        invalid.store(statistics.invalid, ordering: .relaxed)
        underruns.store(statistics.underruns, ordering: .relaxed)
        concealed.store(statistics.concealedFrames, ordering: .relaxed)
        resynchronizations.store(statistics.resynchronizations, ordering: .relaxed)
        bufferedFrames.store(statistics.bufferedFrames, ordering: .relaxed)
        jitterBits.store(statistics.jitterFrames.bitPattern, ordering: .relaxed)
        latencyNanoseconds.store(statistics.latencyNanoseconds ?? .min, ordering: .relaxed)
        targetFrames.store(statistics.targetFrames, ordering: .relaxed)
        latencyChanges.store(statistics.latencyChanges, ordering: .relaxed)
        stretchedFrames.store(statistics.stretchedFrames, ordering: .relaxed)
        skippedFrames.store(statistics.skippedFrames, ordering: .relaxed)
        fecRecoveredFrames.store(statistics.fecRecoveredFrames, ordering: .relaxed)
        pendingMissing.store(statistics.pendingMissing, ordering: .relaxed)
        let code: Int
        switch state {
        case .idle: code = 0
        case .buffering: code = 1
        case .playing: code = 2
        case .lost: code = 3
        }
        stateCode.store(code, ordering: .relaxed)
    }

    /// Any thread.
    func load() -> (JitterBufferStatistics, JitterBufferState) {
        var statistics = JitterBufferStatistics()
        statistics.received = received.load(ordering: .relaxed)
        statistics.lost = lost.load(ordering: .relaxed)
        statistics.late = late.load(ordering: .relaxed)
        statistics.duplicated = duplicated.load(ordering: .relaxed)
        statistics.reordered = reordered.load(ordering: .relaxed)
        statistics.invalid = invalid.load(ordering: .relaxed)
        statistics.underruns = underruns.load(ordering: .relaxed)
        statistics.concealedFrames = concealed.load(ordering: .relaxed)
        statistics.resynchronizations = resynchronizations.load(ordering: .relaxed)
        statistics.bufferedFrames = bufferedFrames.load(ordering: .relaxed)
        statistics.jitterFrames = Double(bitPattern: jitterBits.load(ordering: .relaxed))
        statistics.targetFrames = targetFrames.load(ordering: .relaxed)
        statistics.latencyChanges = latencyChanges.load(ordering: .relaxed)
        statistics.stretchedFrames = stretchedFrames.load(ordering: .relaxed)
        statistics.skippedFrames = skippedFrames.load(ordering: .relaxed)
        statistics.fecRecoveredFrames = fecRecoveredFrames.load(ordering: .relaxed)
        statistics.pendingMissing = pendingMissing.load(ordering: .relaxed)
        let latency = latencyNanoseconds.load(ordering: .relaxed)
        statistics.latencyNanoseconds = latency == .min ? nil : latency
        let state: JitterBufferState
        switch stateCode.load(ordering: .relaxed) {
        case 1: state = .buffering
        case 2: state = .playing
        case 3: state = .lost
        default: state = .idle
        }
        return (statistics, state)
    }
}
