import TuttiCodec
import TuttiCore

/// What `JitterBuffer.insert` did with a packet. Flow control, not an error: the caller counts and moves on.
public enum JitterBufferInsertResult: Hashable, Sendable {
    case accepted
    /// Arrived after a packet with a higher sequence number; accepted.
    case acceptedReordered
    case duplicate
    /// Entirely before the play head: too late to play.
    case late
    /// Payload size differs from the negotiated packet, or its timestamp is off the packet grid.
    case invalid
    /// The stream jumped (or came back after a loss of signal): the buffer re-anchored on this packet.
    case resynchronized
}

/// How a jitter buffer fills audio that did not arrive in time.
public enum Concealment: String, Hashable, Sendable, Codable {
    /// Silence, with short fades out before and in after the gap.
    case silence
    /// Repeat the last period of the audio (`PacketLossConcealer`), fading to silence in long gaps, and
    /// crossfade back into the real audio.
    case repetition
}

/// The state of the receiving end of a stream, as the jitter buffer sees it.
public enum JitterBufferState: Hashable, Sendable {
    /// No packet yet.
    case idle
    /// Packets arrived; the play head has not reached the first one yet (pre-buffering to the target).
    case buffering
    case playing
    /// No packet for longer than `signalLossTimeout`: output is silence until the stream returns.
    case lost
}

/// A receiver's jitter buffer for one PCM stream: it reorders packets, drops duplicates and late packets,
/// conceals gaps with silence and short fades, follows sequence and timestamp wrap-around, and plays out
/// at the target latency chosen at connect time.
///
/// **Model.** Packets sit on a grid of `packetFrames` frames anchored at the first packet's (extended) RTP
/// timestamp. The play head is a frame position on that timeline, advanced by every `read` by exactly the
/// frames read, so it follows the device clock, not the arrivals. When the first packet arrives the head is
/// placed `targetLatencyFrames` behind the end of that packet: from then on each packet waits in the buffer
/// for the target latency (plus whatever its own delay was smaller than the first packet's).
///
/// **Losses** are counted when the play head passes a missing packet while a later one has arrived (so the
/// end of a stream is an underrun, not a loss). A packet that arrives after its frames were played is
/// `late`, and no longer lost: every concealed packet is counted exactly once, as lost or as late. After `signalLossTimeout` without packets the state is `.lost`; the next packet re-anchors.
///
/// **Concealment** is either silence, where audio fades out over `fadeFrames` before a gap (the buffer
/// looks ahead at read time) and fades in after one, or the repetition of the last period of audio
/// (`PacketLossConcealer`) with a crossfade back into the real audio; either way gaps do not click.
///
/// **Parts**, one concept each: `PacketSlots` (the grid, slots, samples, sequence and timestamp extension),
/// `LossAccounting` (lost, pending and late-after-all packets), `PlayoutConcealment` (fades, repetition and
/// crossfades), `OpusPacketStore` (Opus payloads decoded in stream order) and `AdaptiveLatencyController`
/// (lateness). What latency to hold is `LatencyPolicy`'s decision; the buffer moves its play head.
///
/// Realtime-safe: `insert`, `read` and `statistics` (no allocation, lock or log after `init`).
/// Thread-safe: no. One thread (the device thread) owns it; packets reach it through a `PacketRing`.
public struct JitterBuffer: ~Copyable {
    public let format: StreamFormat
    /// Packet slots in the ring (a power of two, at least four times the target in packets).
    public let capacity: Int
    /// Frames over which audio fades out before and in after a concealed gap.
    public let fadeFrames: Int
    /// Time without packets after which the stream is reported `.lost`.
    public let signalLossTimeout: Duration
    public let concealment: Concealment

    /// The packets on their grid: slots, samples, capture times, sequence and timestamp extension.
    private var slots: PacketSlots
    /// Packets the play head passed missing: lost, pending, or late after all.
    private var loss: LossAccounting
    private var jitter = InterarrivalJitter()
    private var playHead: Int64 = 0
    private var lastArrival: HostTime?
    /// A packet far ahead of the window, waiting for the next one to confirm a jump.
    private var jumpCandidate: (sequenceNumber: UInt16, timestamp: UInt32)?
    /// Arrival of the first of the packets, each newer than any accepted, that have all come after their
    /// time since the last packet in time: the stream runs behind the play head (`followLateStream`).
    private var lateStreamSince: HostTime?
    /// A packet beyond the ring moved the play head ahead since the last read; the read brings it up to the
    /// newest packet (a burst's later packets came within the ring after the skip).
    private var catchingUp = false
    /// The packets the last silence counted lost: those after the timestamp `after`, numbered 1 to `packets`;
    /// the ones up to `takenBackUpTo` came after all (late) and were taken back out of the lost count.
    private var silenceLoss: (after: UInt32, packets: UInt64, takenBackUpTo: UInt64)?
    /// Synchronized playout: the play head is (re)placed from capture times at the next read.
    private var placeFromCaptureTime = false
    private var wasEmpty = true
    private var counters = JitterBufferStatistics()
    public private(set) var state: JitterBufferState = .idle
    /// Fades, repetition and crossfades: how received audio and what stands in for missing audio join.
    private var playout: PlayoutConcealment
    /// Adaptive latency (`format.adaptiveLatencyFrames`): the controller, the target now, and a pending raise.
    private var latencyController: AdaptiveLatencyController
    private var targetFrames: Int
    private var stretchRemaining = 0
    /// Frames played since the target last moved (changes are at least `latencyChangeInterval` apart).
    private var framesSinceLatencyChange = 0
    /// The audio's period when the last attempt to lower could not (the period was longer than the
    /// difference): smaller differences are not searched again for a second, larger ones at once.
    private var unskippablePeriod = 0
    /// The audio's period when the last attempt to lower found less audio past the read than a period, and
    /// when (`framesSinceLatencyChange`): for a quarter of a second the period is not searched again until
    /// that much has arrived (a search costs a pass over the recent output per candidate period).
    private var periodAwaited = 0
    private var periodAwaitedSince = 0
    private let latencyChangeInterval: Int
    /// The window's smallest transit (frames), as last computed, and the frames played since.
    private var minimumTransit: Double?
    private var framesSinceMinimumTransit = 0
    /// Adaptive: whether `targetFrames` has been set from the measured latency since the last anchor.
    private var targetMeasured = false
    /// Whether a read has come since the last anchor (the start can no longer be moved).
    private var readSinceAnchor = false
    /// Opus streams: each slot's packet as it came, decoded when the play head reaches it.
    private var opus: OpusPacketStore?
    /// The codec's delay (Opus lookahead), taken off capture times so that latency figures stay true.
    private let codecDelayNanoseconds: Int64

    /// Allocates every buffer the stream will need. Control plane only (allocates).
    ///
    /// - Parameters:
    ///   - format: the negotiated format; `validate` must have accepted it.
    ///   - fadeDuration: length of the fades around concealed gaps.
    ///   - signalLossTimeout: time without packets before the state is `.lost`.
    ///   - concealment: how missing audio is filled (PCM; Opus streams use the decoder's concealment and FEC).
    ///   - codecDelayFrames: frames by which decoded audio lags the encoder's input (Opus: the encoder's
    ///     lookahead).
    public init(
        format: StreamFormat, fadeDuration: Duration = .milliseconds(1), signalLossTimeout: Duration = .seconds(1),
        concealment: Concealment = .silence, codecDelayFrames: Int = 0
    ) {
        precondition(format.packetFrames > 0 && format.channels > 0 && format.targetLatencyFrames > 0)
        self.format = format
        self.concealment = concealment
        let range = format.adaptiveLatencyFrames ?? format.targetLatencyFrames...format.targetLatencyFrames
        latencyController = AdaptiveLatencyController(
            sampleRate: format.sampleRate, packetFrames: format.packetFrames, floorFrames: max(1, range.lowerBound),
            ceilingFrames: max(1, range.upperBound))
        targetFrames = format.targetLatencyFrames
        latencyChangeInterval = format.sampleRate / 10
        let largestTarget = max(format.targetLatencyFrames, format.adaptiveLatencyFrames?.upperBound ?? 0)
        let targetPackets = (largestTarget + format.packetFrames - 1) / format.packetFrames
        var capacity = 16
        while capacity < 4 * targetPackets + 4 { capacity *= 2 }
        self.capacity = capacity
        let fadeFrames = max(1, min(format.packetFrames, format.frames(in: fadeDuration)))
        self.fadeFrames = fadeFrames
        playout = PlayoutConcealment(
            mode: concealment, channels: format.channels, packetFrames: format.packetFrames, sampleRate: format.sampleRate,
            fadeFrames: fadeFrames)
        self.signalLossTimeout = signalLossTimeout
        slots = PacketSlots(format: format, capacity: capacity)
        loss = LossAccounting(capacity: capacity)
        codecDelayNanoseconds = Int64(codecDelayFrames) * 1_000_000_000 / Int64(format.sampleRate)
        if format.sampleFormat == .opus { opus = OpusPacketStore(format: format, capacity: capacity) }
    }

    /// How long after a read's time (frames) a packet may arrive and still fit in the ring ahead of the play
    /// head: the ring, less the largest latency the buffer may hold (its largest target and the alignment's
    /// up to one packet more) and the packet itself. A device that catches up after a stall must not take in
    /// packets that arrived later than that after the read it runs (`StreamReceiver.render`); taken in at
    /// once they are beyond the ring, which skips ahead to them.
    public var arrivalHorizonFrames: Int {
        let largestTarget = max(format.targetLatencyFrames, format.adaptiveLatencyFrames?.upperBound ?? 0)
        return capacity * format.packetFrames - largestTarget - 2 * format.packetFrames
    }

    /// A copy of the counters, with the current buffer level and jitter. Realtime-safe: yes.
    public var statistics: JitterBufferStatistics {
        var copy = counters
        copy.jitterFrames = jitter.frames
        copy.targetFrames = targetFrames
        copy.lost = loss.lost
        copy.pendingMissing = loss.pending
        if state == .idle || state == .lost { copy.bufferedFrames = 0 }
        return copy
    }

    private var highestEnd: Int64 { slots.highestEnd(otherwise: playHead) }

    /// Offers one packet's payload to the buffer.
    ///
    /// - Parameters:
    ///   - payload: exactly `format.payloadBytes` bytes of L16/L24 audio, else `.invalid`.
    ///   - captureTime: the packet's capture time on the stream's capture clock, if it carried one.
    ///   - arrival: when it arrived, on the receiver's monotonic clock (jitter and signal-loss detection).
    /// Realtime-safe: yes.
    public mutating func insert(
        sequenceNumber: UInt16, timestamp: UInt32, captureTime: Int64?, arrival: HostTime,
        payload: UnsafeRawBufferPointer
    ) -> JitterBufferInsertResult {
        guard format.acceptsPayload(count: payload.count) else {
            counters.invalid &+= 1
            return .invalid
        }
        let packetFrames = Int64(format.packetFrames)
        var resynchronized = false
        if state == .idle || state == .lost {
            if state == .lost { countSilence(until: sequenceNumber, timestamp: timestamp) }
            anchor(on: sequenceNumber, timestamp: timestamp)
            resynchronized = true
        }
        var extendedTimestamp = slots.peekTimestamp(timestamp)
        if extendedTimestamp + packetFrames <= playHead, state == .playing,
            followLateStream(sequenceNumber: sequenceNumber, timestamp: timestamp, arrival: arrival)
        {
            anchor(on: sequenceNumber, timestamp: timestamp)
            extendedTimestamp = slots.peekTimestamp(timestamp)
            resynchronized = true
        }
        let window = Int64(capacity) * packetFrames
        // Beyond the ring: its slot still holds a packet the play head has not wholly passed.
        let beyondRing = extendedTimestamp + packetFrames > playHead + window
        if beyondRing, continuesNewest(sequenceNumber: sequenceNumber, timestamp: timestamp) {
            // The stream itself, a ring ahead of the play head: audio came faster than it plays (a sender's
            // kernel delivering what it queued through an outage at once, then the live packets).
            skipAhead(to: extendedTimestamp + packetFrames - min(Int64(targetFrames), window))
            catchingUp = true
        } else if extendedTimestamp < playHead - window || beyondRing {
            if extendedTimestamp < playHead, precedesNewest(sequenceNumber: sequenceNumber, timestamp: timestamp) {
                // An older packet of this very stream, far behind (what a sender's kernel queued through an
                // outage, delivered after the first live packet): late, not a jump.
                noteLate(timestamp: timestamp)
                return .late
            }
            if extendedTimestamp < playHead, followsNewest(sequenceNumber: sequenceNumber, timestamp: timestamp) {
                // The stream's next packet, a ring behind the play head: the oldest of what a stalled sender
                // sends at once when it catches up (its ring slot has been passed again since): late, not a jump.
                loss.arrivedAfterPassingLongAgo()
                counters.late &+= 1
                return .late
            }
            // Far outside the ring: a jump (sender restart, clock step) only if the next packet agrees, as
            // RFC 3550 does for sequence jumps; a single straggler or stray packet must not reset the stream.
            if let candidate = jumpCandidate, sequenceNumber == candidate.sequenceNumber &+ 1,
                timestamp == candidate.timestamp &+ UInt32(format.packetFrames)
            {
                anchor(on: sequenceNumber, timestamp: timestamp)
                extendedTimestamp = slots.peekTimestamp(timestamp)
                resynchronized = true
            } else {
                jumpCandidate = (sequenceNumber, timestamp)
                if extendedTimestamp < playHead {
                    counters.late &+= 1  // too old to tell apart from what the ring holds now
                    return .late
                }
                counters.invalid &+= 1
                return .invalid
            }
        }
        jumpCandidate = nil
        do {
            // Every packet in the window counts, late and reordered ones above all: they are the lateness
            // (adaptive latency), and the fastest of them sets the buffer's latency (drift compensation).
            let arrivalFrames = Double(arrival.nanoseconds) * Double(format.sampleRate) / 1e9
            latencyController.observe(transitFrames: arrivalFrames - Double(extendedTimestamp))
        }
        let offset = extendedTimestamp - slots.anchorTimestamp
        if offset < 0 {
            // Older than the packet the buffer anchored on: its time has passed.
            noteLate(timestamp: timestamp)
            return .late
        }
        guard offset % packetFrames == 0 else {
            counters.invalid &+= 1
            return .invalid
        }
        let slot = Int((offset / packetFrames) & Int64(capacity - 1))
        if slots.timestamps[slot] == extendedTimestamp {
            counters.duplicated &+= 1
            return .duplicate
        }
        let wasMissed = loss.wasMissed(slot: slot, timestamp: extendedTimestamp)
        if extendedTimestamp + packetFrames <= playHead {
            guard wasMissed else {
                // Its time has passed and it was not missed, so it was played: a stale duplicate.
                counters.duplicated &+= 1
                return .duplicate
            }
            // Concealed when the play head passed; now known to be late rather than lost.
            loss.arrivedAfterAll(slot: slot)
            counters.late &+= 1
            return .late
        }
        if wasMissed {
            // Partly late: the head passed its start (concealed); the rest still plays. Late, not lost.
            loss.arrivedAfterAll(slot: slot)
            counters.late &+= 1
        }

        let reordered = slots.accept(sequenceNumber: sequenceNumber, timestamp: timestamp, extendedTimestamp: extendedTimestamp)
        if reordered { counters.reordered &+= 1 }
        // A newer packet exists, so the gaps the play head passed before it were losses, not the stream's end.
        loss.newer(timestamp: extendedTimestamp)

        slots.timestamps[slot] = extendedTimestamp
        loss.filled(slot: slot)
        slots.captureTimes[slot] = captureTime.map { $0 - codecDelayNanoseconds } ?? .min
        if opus != nil {
            // Kept as it came; decoded when the play head reaches it.
            opus!.store(payload, slot: slot, timestamp: extendedTimestamp)
        } else {
            PCMCodec.decode(payload, as: format.sampleFormat, into: slots.samples(slot: slot))
        }

        let arrivalFrames = Double(arrival.nanoseconds) * Double(format.sampleRate) / 1e9
        jitter.update(arrivalFrames: arrivalFrames, timestamp: extendedTimestamp)
        lastArrival = arrival
        lateStreamSince = nil
        counters.received &+= 1
        if resynchronized { return .resynchronized }
        return reordered ? .acceptedReordered : .accepted
    }

    /// The stream resumes after a loss of signal with this packet: every packet between the newest one before
    /// the silence and it was lost (however long the silence: counted on the RTP timestamps, which wrap after
    /// 12 hours at 96 kHz, not on sequence numbers, which wrap after 44 s of 64-frame packets at 48 kHz). Only
    /// when both agree on the count (modulo 2^16): a stream whose numbering restarted counts nothing.
    private mutating func countSilence(until sequenceNumber: UInt16, timestamp: UInt32) {
        silenceLoss = nil
        guard let newest = slots.newestAccepted else { return }
        let frames = UInt64(timestamp &- newest.timestamp)
        let packetFrames = UInt64(format.packetFrames)
        guard frames >= packetFrames, frames < 1 << 31, frames % packetFrames == 0 else { return }
        let packets = frames / packetFrames
        guard UInt16(truncatingIfNeeded: packets) == sequenceNumber &- newest.sequenceNumber else { return }
        loss.lostInSilence(packets - 1)
        silenceLoss = (after: newest.timestamp, packets: packets - 1, takenBackUpTo: 0)
    }

    /// Where a packet stands on the line of the stream whose newest packet was accepted, in packets (negative:
    /// older, positive: newer), when its sequence number is within 2^15 of the newest's and its timestamp is
    /// exactly that many packets' frames away (a restarted sender's packet agrees with both by chance about
    /// once in 2^32); nil otherwise, and for the newest itself.
    @inline(__always)
    private func packetsFromNewest(sequenceNumber: UInt16, timestamp: UInt32) -> Int? {
        guard let newest = slots.newestAccepted else { return nil }
        let offset = Int(Int16(bitPattern: sequenceNumber &- newest.sequenceNumber))
        guard offset != 0, offset != Int(Int16.min),
            timestamp &- newest.timestamp == UInt32(bitPattern: Int32(offset)) &* UInt32(format.packetFrames)
        else { return nil }
        return offset
    }

    /// Whether a packet is an older one of the stream whose newest packet was accepted (`packetsFromNewest`).
    @inline(__always)
    private func precedesNewest(sequenceNumber: UInt16, timestamp: UInt32) -> Bool {
        (packetsFromNewest(sequenceNumber: sequenceNumber, timestamp: timestamp) ?? 0) < 0
    }

    /// Counts a packet that came after its time. One the silence before the anchor counted lost
    /// (`countSilence`) is taken back out of the lost count, once, in stream order (a repeat of one already
    /// taken back stays counted late only).
    private mutating func noteLate(timestamp: UInt32) {
        counters.late &+= 1
        guard let silence = silenceLoss else { return }
        let frames = UInt64(timestamp &- silence.after)
        let packetFrames = UInt64(format.packetFrames)
        guard frames % packetFrames == 0 else { return }
        let packet = frames / packetFrames
        guard packet > silence.takenBackUpTo, packet <= silence.packets else { return }
        silenceLoss!.takenBackUpTo = packet
        loss.arrivedAfterSilence()
    }

    /// Whether a packet is a newer one of the stream whose newest packet was accepted (`packetsFromNewest`).
    @inline(__always)
    private func followsNewest(sequenceNumber: UInt16, timestamp: UInt32) -> Bool {
        (packetsFromNewest(sequenceNumber: sequenceNumber, timestamp: timestamp) ?? 0) > 0
    }

    /// How long the stream's packets may all come after their time before the buffer follows them: 50 ms.
    /// A stalled sender's burst comes at once, with its last packets in time, so it never lasts that long; a
    /// path whose delay stepped up by more than the slack makes every packet late from then on.
    public static let lateStreamPatience = Duration.milliseconds(50)

    /// A packet newer than any accepted came wholly after its time: whether the packets have all done so for
    /// `lateStreamPatience` (then the stream runs behind the play head for good, and the buffer re-anchors on
    /// this packet, instead of playing silence until the signal-loss timeout). One in time ends the run.
    /// Fixed targets only: an adaptive buffer raises its target to the lateness it measures (a re-anchor would
    /// throw that measurement away), and synchronized playout places its head from capture times.
    private mutating func followLateStream(sequenceNumber: UInt16, timestamp: UInt32, arrival: HostTime) -> Bool {
        guard format.adaptiveLatencyFrames == nil, format.synchronizedLatencyNanoseconds == nil,
            followsNewest(sequenceNumber: sequenceNumber, timestamp: timestamp)
        else { return false }
        guard let since = lateStreamSince else {
            lateStreamSince = arrival
            return false
        }
        return arrival - since >= Self.lateStreamPatience
    }

    /// Whether a packet is the one after the newest accepted: next sequence number, a packet's frames later.
    @inline(__always)
    private func continuesNewest(sequenceNumber: UInt16, timestamp: UInt32) -> Bool {
        guard let newest = slots.newestAccepted else { return false }
        return sequenceNumber == newest.sequenceNumber &+ 1 && timestamp == newest.timestamp &+ UInt32(format.packetFrames)
    }

    /// Moves the play head ahead to `newHead`, on the same grid (a packet beyond the ring is held at the target
    /// latency, or a ring back when the target is longer, as an anchor on it would hold it): the audio passed
    /// over was received and is counted skipped (frames); a packet passed over missing is lost (a newer one is
    /// here), and late if it comes after all.
    /// Unlike a re-anchor, nothing received goes uncounted and the stream keeps its grid, numbering and
    /// measurements. Looks at a ring of packets at most (a play head placed far back by synchronized playout
    /// has nothing older in the ring to account for).
    private mutating func skipAhead(to newHead: Int64) {
        guard newHead > playHead else { return }
        let end = slots.packetIndex(of: newHead)
        var index = max(0, slots.packetIndex(of: playHead), end - Int64(capacity))
        while index < end {
            if !slots.holds(index) {
                loss.passedMissing(
                    index: index, packetStart: slots.packetStart(index), slot: slots.slot(index),
                    newestTimestamp: slots.highestTimestamp, playing: true)
            }
            index += 1
        }
        counters.skippedFrames &+= UInt64(newHead - playHead)
        playHead = newHead
        stretchRemaining = 0
        if readSinceAnchor { playout.skipped() }  // crossfade from the audio played into the audio after the skip
    }

    /// Re-anchors the grid and the play head on a packet (first packet, or after a jump or a loss of signal).
    private mutating func anchor(on sequenceNumber: UInt16, timestamp: UInt32) {
        slots.reanchor(sequenceNumber: sequenceNumber, timestamp: timestamp)
        loss.reanchor()
        if opus != nil { opus!.reanchor() }
        jumpCandidate = nil
        lateStreamSince = nil
        catchingUp = false
        jitter.reset()
        latencyController.reset()
        stretchRemaining = 0
        framesSinceLatencyChange = 0
        playHead = slots.anchorTimestamp + Int64(format.packetFrames) - Int64(targetFrames)
        state = playHead >= slots.anchorTimestamp ? .playing : .buffering
        placeFromCaptureTime = format.synchronizedLatencyNanoseconds != nil
        wasEmpty = false
        targetMeasured = false
        readSinceAnchor = false
        minimumTransit = nil
        playout.reanchor()  // fade in from silence
        counters.resynchronizations &+= 1
    }

    /// Moves the play head of a playing stream by `frames`, to bring a fixed target's latency back after a step
    /// (`LatencyPolicy.stepCorrection`): positive, ahead, over audio that is counted skipped (crossfaded from
    /// what played before, as any skip); negative, back, repeating the audio's last period while the head
    /// waits (counted stretched). The target and the latency-change count stay as they are: this restores
    /// the latency they describe. Realtime-safe: yes.
    public mutating func realign(byFrames frames: Int) {
        guard state == .playing, frames != 0 else { return }
        if frames > 0 {
            skipAhead(to: playHead + Int64(frames))
        } else {
            stretchRemaining += -frames
        }
    }

    /// Moves the start of playout by `frames` (positive: later audio first, skipping what has waited longer
    /// than the latency wants; negative: silence first) before the first read after the buffer anchored. What a
    /// fixed target's owner uses to place the start at its aligned latency (`LatencyPolicy`).
    /// - Returns: false (nothing done) once a read has come since the anchor, or for a zero count.
    /// Realtime-safe: yes.
    @discardableResult
    public mutating func moveStart(byFrames frames: Int) -> Bool {
        guard !readSinceAnchor, state == .buffering || state == .playing, frames != 0 else { return false }
        playHead += Int64(frames)
        state = playHead >= slots.anchorTimestamp ? .playing : .buffering
        return true
    }

    /// Where a read at `now` falls against the packets' arrivals: frames since the packet grid's fastest
    /// arrival (`now` − the window's smallest transit − the anchor's timestamp, rounded down; only its value
    /// modulo the packet counts). nil before 16 packets. Realtime-safe: yes (a pass over the lateness window).
    public func arrivalPhaseFrames(now: HostTime) -> Int? {
        guard state != .idle, let minimum = latencyController.minimumTransitFrames() else { return nil }
        return phaseFrames(now: now, minimumTransitFrames: minimum)
    }

    @inline(__always)
    private func phaseFrames(now: HostTime, minimumTransitFrames: Double) -> Int {
        let nowFrames = Double(now.nanoseconds) * Double(format.sampleRate) / 1e9
        return Int((nowFrames - minimumTransitFrames - Double(slots.anchorTimestamp)).rounded(.down))
    }

    /// Plays `frames` frames into `output` (interleaved, `format.channels` per frame) and advances the play head.
    ///
    /// Missing audio is concealed (silence with fades) and counted; before the first packet and after a
    /// loss of signal the output is silence.
    /// - Parameters:
    ///   - now: the device's time for this period (monotonic), for signal-loss detection.
    ///   - captureClockNow: the same instant on the stream's capture clock (nanoseconds), to measure latency and
    ///     for synchronized playout; `Int64.min` when this receiver cannot read that clock.
    ///   - nominalFrames: the frames reads take on average, when they vary around it (through a resampler);
    ///     the adaptive target aligns to it (`LatencyPolicy.alignedLatency`). nil: `frames`.
    /// Realtime-safe: yes.
    /// - Returns: when the first output frame was captured, on the stream's capture clock (nanoseconds), or
    ///   `Int64.min` when it is concealment or the packet carried no capture time. Latency compensation: the
    ///   frame at output index i was captured at the returned time plus i frames.
    @discardableResult
    public mutating func read(
        into output: UnsafeMutableBufferPointer<Float>, frames: Int, now: HostTime, captureClockNow: Int64,
        nominalFrames: Int? = nil
    ) -> Int64 {
        let channels = format.channels
        precondition(output.count >= frames * channels)
        if let lastArrival, state != .idle, now - lastArrival > signalLossTimeout {
            state = .lost
        }
        guard state == .playing || state == .buffering else {
            output.update(repeating: 0)
            playout.silenced()
            if state == .lost { counters.latencyNanoseconds = nil }
            return .min
        }

        if let latency = format.synchronizedLatencyNanoseconds, captureClockNow != .min {
            placePlayHead(synchronizedLatency: latency, captureClockNow: captureClockNow)
        } else if catchingUp {
            // A burst went beyond the ring since the last read: what of it came after the skip waits too.
            skipAhead(to: highestEnd - min(Int64(targetFrames), Int64(capacity * format.packetFrames)))
        }
        catchingUp = false
        // The level the device finds when it comes to read: what the target latency is about.
        counters.bufferedFrames = max(0, Int(highestEnd - playHead))
        if format.adaptiveLatencyFrames != nil, state == .playing {
            followRecommendedLatency(now: now, frames: frames, nominalFrames: nominalFrames ?? frames)
        }
        // The window's fastest transit, refreshed every 1024 frames (a pass over the window costs up to
        // 2048 comparisons; drift moves it by a fraction of a frame in that time).
        framesSinceMinimumTransit += frames
        if framesSinceMinimumTransit >= 1_024 || minimumTransit == nil {
            let refreshed = latencyController.minimumTransitFrames()
            if let old = minimumTransit, let new = refreshed { followNetworkStep(fastestTransitMovedBy: new - old) }
            minimumTransit = refreshed
            framesSinceMinimumTransit = 0
        }
        if state == .playing, let minimum = minimumTransit {
            counters.measuredLatencyFrames = latencyFrames(now: now, minimumTransitFrames: minimum)
        } else {
            counters.measuredLatencyFrames = nil
        }
        var measuredLatency = false
        var firstCaptureTime = Int64.min
        var written = 0
        while written < frames {
            if stretchRemaining > 0 {
                // Raising the latency: repeat the audio's last period while the play head waits.
                let count = min(frames - written, stretchRemaining)
                playout.repeatAudio(into: output, at: written, frames: count, stretching: true)
                stretchRemaining -= count
                counters.stretchedFrames &+= UInt64(count)
                written += count
                continue
            }
            let position = playHead
            let packetIndex = slots.packetIndex(of: position)
            let packetStart = slots.packetStart(packetIndex)
            let offsetInPacket = Int(position - packetStart)
            let count = min(frames - written, format.packetFrames - offsetInPacket)
            let slot = slots.slot(packetIndex)
            let arrived = slots.holds(packetIndex)
            // Opus: decode (or recover, or conceal) the packet when the play head first reaches it.
            let present =
                opus != nil && packetIndex >= 0 && (arrived || state == .playing)
                ? decodeOpus(slot: slot, packetIndex: packetIndex, packetStart: packetStart, arrived: arrived)
                : arrived
            if present, !arrived { notePassedMissing(index: packetIndex, packetStart: packetStart, slot: slot) }

            if present {
                if state == .buffering { state = .playing }
                if written == 0, slots.captureTimes[slot] != .min {
                    firstCaptureTime = slots.captureTimes[slot] + Int64(offsetInPacket) * 1_000_000_000 / Int64(format.sampleRate)
                }
                if !measuredLatency, slots.captureTimes[slot] != .min, captureClockNow != .min {
                    measuredLatency = true
                    let captured = slots.captureTimes[slot] + Int64(offsetInPacket) * 1_000_000_000 / Int64(format.sampleRate)
                    counters.latencyNanoseconds = captureClockNow + Int64(written) * 1_000_000_000 / Int64(format.sampleRate) - captured
                }
                if playout.crossfades(always: format.adaptiveLatencyFrames != nil || opus != nil) {
                    playout.play(slots.samples(slot: slot), offset: offsetInPacket, count: count, into: output, at: written)
                } else {
                    playout.playFaded(
                        slots.samples(slot: slot), offset: offsetInPacket, count: count, into: output, at: written,
                        fadeOutAtEnd: !slots.holds(packetIndex + 1))
                }
                wasEmpty = false
            } else {
                if concealment == .repetition, state == .playing {
                    playout.repeatAudio(into: output, at: written, frames: count, stretching: false)
                    counters.concealedFrames &+= UInt64(count)
                } else {
                    playout.silence(into: output, at: written, frames: count)
                    if state == .playing { counters.concealedFrames &+= UInt64(count) }
                }
                // Noted once per packet, wherever the play head enters it (after a latency change it may
                // enter mid-packet).
                if packetIndex >= 0 { notePassedMissing(index: packetIndex, packetStart: packetStart, slot: slot) }
            }
            written += count
            playHead += Int64(count)
        }
        framesSinceLatencyChange += frames
        readSinceAnchor = true
        // Ran dry: the read went past what had arrived (a read that ends just where the audio does, as at the
        // one-packet floor, played all it needed).
        if highestEnd < playHead, state == .playing, !wasEmpty {
            counters.underruns &+= 1
            wasEmpty = true
        }
        return firstCaptureTime
    }

    /// Adaptive latency: moves the play head toward the controller's recommendation, at most every 100 ms and
    /// by at most 10 ms at a time, when it differs by half a packet or more. The latency is measured as a
    /// fixed target is: how far the play head is behind the arrival of the fastest recent packet, plus one
    /// packet (`now − playHead − minimum transit + packetFrames`, in frames). Raising repeats the audio's
    /// last period while the play head waits (`stretchRemaining`); lowering skips a whole number of the
    /// audio's periods that have arrived, and crossfades from the repetition into the audio after them.
    private mutating func followRecommendedLatency(now: HostTime, frames: Int, nominalFrames: Int) {
        guard stretchRemaining == 0, framesSinceLatencyChange >= latencyChangeInterval,
            let lateness = latencyController.lateness()
        else { return }
        let current = Int(latencyFrames(now: now, minimumTransitFrames: lateness.minimumTransitFrames).rounded())
        let desired = LatencyPolicy.adaptiveTargetFrames(
            latenessFrames: lateness.percentileFrames, controller: latencyController, packetFrames: format.packetFrames,
            readFrames: nominalFrames, phaseFrames: phaseFrames(now: now, minimumTransitFrames: lateness.minimumTransitFrames))
        if !targetMeasured {
            // The latency the buffer anchored at is its target until the first move.
            targetFrames = current
            targetMeasured = true
        }
        switch LatencyPolicy.adaptiveStep(
            currentFrames: current, desiredFrames: desired, packetFrames: format.packetFrames, sampleRate: format.sampleRate)
        {
        case .hold:
            return
        case .raise(let step):
            // Raise at once (in a gap, the repetition simply goes on while the play head waits), by whole
            // periods of the audio, so the repetition stays in phase with the audio it crossfades back into.
            let period = playout.enterGap()
            stretchRemaining = period > 0 ? max(1, (step + period - 1) / period) * period : step
            targetFrames = current + stretchRemaining
        case .lower(let limit):
            guard limit >= unskippablePeriod || framesSinceLatencyChange >= format.sampleRate else { return }
            switch skipAudio(upTo: limit, readFrames: frames) {
            case .notNow:
                return
            case .periodTooLong(let period):
                // When the audio's period is longer than the difference, look again in a second, or as soon as
                // the difference has grown to a period (as when the jitter is leaving the window).
                unskippablePeriod = period
                framesSinceLatencyChange = 0
                return
            case .skipped(let skip):
                targetFrames = current - skip
            }
        }
        counters.latencyChanges &+= 1
        framesSinceLatencyChange = 0
    }

    /// Adaptive: keeps the target the latency the buffer holds when the fastest recent transit steps (the
    /// network's delay changed: a delay line came or went, the fastest packets left the window). Latency is
    /// counted from the fastest transit, so a step of Δ moves the latency held by −Δ without a frame played
    /// differently; a target left where it was would be a latency the buffer no longer holds, which drift
    /// compensation (steering to the target) would then chase at its limit for seconds, bending the pitch
    /// (the lab saw 1 ms in 2 s). Clock drift moves the fastest transit smoothly, at most a frame per refresh
    /// (1000 ppm of 1024 frames): the target stays put for that, since holding against drift is what drift
    /// compensation is for.
    private mutating func followNetworkStep(fastestTransitMovedBy step: Double) {
        guard format.adaptiveLatencyFrames != nil, targetMeasured, abs(step) > 2 else { return }
        targetFrames = max(format.packetFrames, targetFrames - Int(step.rounded()))
    }

    /// The buffer's latency as targets count it, in frames: how far the play head is behind the arrival of
    /// the fastest recent packet (`minimumTransitFrames`), plus one packet. Jitter moves it little; a sender
    /// clock drifting against this one moves it steadily. Realtime-safe: yes.
    @inline(__always)
    private func latencyFrames(now: HostTime, minimumTransitFrames: Double) -> Double {
        let nowFrames = Double(now.nanoseconds) * Double(format.sampleRate) / 1e9
        return nowFrames - Double(playHead) - minimumTransitFrames + Double(format.packetFrames)
    }

    /// What `skipAudio` did.
    private enum SkipOutcome {
        /// Not from here: in a gap or a crossfade, or less than a period of the audio has arrived past the read.
        case notNow
        /// The audio's period (`associated`) is longer than the frames that may be skipped.
        case periodTooLong(Int)
        case skipped(Int)
    }

    /// Lowers the latency by skipping up to `limit` frames of audio that has arrived: small skips (up to
    /// 5 ms) move it gently; audio whose period is longer is skipped a whole number of its periods, up to 10 ms;
    /// the audio after the skip is crossfaded from the repetition of the audio before it.
    private mutating func skipAudio(upTo limit: Int, readFrames frames: Int) -> SkipOutcome {
        // Only from clean playout: not in a gap nor in a crossfade. A skip takes audio that has arrived beyond
        // what this read plays, up to the step asked for: when less has arrived than the whole step (a step
        // from 4.67 ms to 2.3 ms wants 176 frames past the play head, and 160 are there), it takes the whole
        // periods that are there and leaves the rest to the next step. (Checked before the period search,
        // which costs the most.)
        let most = min(limit, format.sampleRate / 100)
        guard playout.isClean else { return .notNow }
        let available = slots.presentFrames(from: playHead, atMost: most + frames) - frames
        guard available > 0 else { return .notNow }
        if available < periodAwaited, (0..<format.sampleRate / 4).contains(framesSinceLatencyChange - periodAwaitedSince) { return .notNow }
        let period = playout.periodBeforeSkip()
        let smallStep = format.sampleRate / 200
        let allowed = min(most, period > 0 && period > smallStep ? most : smallStep)
        if period > allowed { return .periodTooLong(period) }
        let takeable = min(allowed, available)
        let skip = period > 0 ? (takeable / period) * period : takeable
        guard skip > 0 else {
            (periodAwaited, periodAwaitedSince) = (period, framesSinceLatencyChange)
            return .notNow
        }
        periodAwaited = 0
        playHead += Int64(skip)
        counters.skippedFrames &+= UInt64(skip)
        playout.skipped()
        return .skipped(skip)
    }

    /// Opus: makes `slot` hold the audio of the packet at `packetStart`, in stream order (`OpusPacketStore`):
    /// decoded if it arrived, else recovered from the next packet's FEC or concealed (counted). A packet that
    /// does not decode is counted invalid and concealed. Returns whether the slot now holds that audio.
    private mutating func decodeOpus(slot: Int, packetIndex: Int64, packetStart: Int64, arrived: Bool) -> Bool {
        if opus!.holds(slot: slot, packetStart: packetStart) { return true }
        let packetFrames = format.packetFrames
        let (outcome, undecodable) = opus!.decode(
            slot: slot, packetStart: packetStart, arrived: arrived, playing: state == .playing, nextSlot: slots.slot(packetIndex + 1),
            nextArrived: slots.holds(packetIndex + 1), inBandFEC: format.opus?.inBandFEC == true, frames: packetFrames,
            into: slots.samples(slot: slot))
        if undecodable { counters.invalid &+= 1 }
        switch outcome {
        case .decoded: return true
        case .nothing: return false
        case .recovered: counters.fecRecoveredFrames &+= UInt64(packetFrames)
        case .concealed: counters.concealedFrames &+= UInt64(packetFrames)
        }
        if !arrived { slots.captureTimes[slot] = .min }
        return true
    }

    /// Synchronized playout: the frame due now is the one captured `latency` ago. Placed at the first read
    /// after anchoring, then corrected (a jump, counted as a resynchronization) only if it has drifted by
    /// more than a packet, e.g. after the shared clock was re-measured.
    private mutating func placePlayHead(synchronizedLatency latency: Int64, captureClockNow: Int64) {
        let highestTimestamp = slots.highestTimestamp
        guard highestTimestamp != .min else { return }
        let index = slots.packetIndex(of: highestTimestamp)
        let captured = slots.captureTimes[slots.slot(index)]
        guard slots.holds(index), captured != .min else { return }
        let elapsed = captureClockNow - latency - captured
        let due = highestTimestamp + elapsed * Int64(format.sampleRate) / 1_000_000_000
        if placeFromCaptureTime || abs(due - playHead) > Int64(format.packetFrames) {
            if !placeFromCaptureTime { counters.resynchronizations &+= 1 }
            placeFromCaptureTime = false
            playHead = due
            state = playHead >= slots.anchorTimestamp ? .playing : .buffering
        }
    }

    /// Notes a packet the play head entered while it was missing (once per packet; counted while playing).
    @inline(__always)
    private mutating func notePassedMissing(index: Int64, packetStart: Int64, slot: Int) {
        loss.passedMissing(
            index: index, packetStart: packetStart, slot: slot, newestTimestamp: slots.highestTimestamp, playing: state == .playing)
    }
}
