import TuttiCore

/// A jitter buffer's packet slots and sequence: where each packet sits on the grid of `packetFrames`
/// frames anchored at the first packet's extended RTP timestamp, its decoded samples and capture time, and
/// the extension of 16-bit sequence numbers and 32-bit timestamps across wrap-around.
///
/// Packet `index` on the grid starts at `anchorTimestamp + index × packetFrames` and sits in slot
/// `index mod capacity` (a power of two). A slot holds a packet when its timestamp is the packet's start.
///
/// Realtime-safe: every method after `init` (no allocation, lock or log). Thread-safe: no (the jitter
/// buffer's owner thread).
struct PacketSlots: ~Copyable {
    let capacity: Int
    let packetFrames: Int
    let samplesPerPacket: Int
    /// Extended RTP timestamp of each slot's packet, or `Int64.min` when empty.
    let timestamps: UnsafeMutableBufferPointer<Int64>
    /// Capture time of each slot's first frame (capture-clock nanoseconds), or `Int64.min` when unknown.
    let captureTimes: UnsafeMutableBufferPointer<Int64>
    /// Decoded samples, `samplesPerPacket` per slot.
    let samples: UnsafeMutableBufferPointer<Float>

    /// Extended timestamp of the packet the grid is anchored on.
    private(set) var anchorTimestamp: Int64 = 0
    /// Extended timestamp of the newest packet received since the anchor, `Int64.min` before one.
    private(set) var highestTimestamp = Int64.min
    private var highestSequence = Int64.min
    private var sequenceExtender = CounterExtender<UInt16>()
    private var timestampExtender = CounterExtender<UInt32>()

    /// Control plane (allocates `capacity` slots of `format`'s packets).
    init(format: StreamFormat, capacity: Int) {
        self.capacity = capacity
        packetFrames = format.packetFrames
        samplesPerPacket = format.samplesPerPacket
        timestamps = .allocate(capacity: capacity)
        timestamps.initialize(repeating: .min)
        captureTimes = .allocate(capacity: capacity)
        captureTimes.initialize(repeating: .min)
        samples = .allocate(capacity: capacity * format.samplesPerPacket)
        samples.initialize(repeating: 0)
    }

    deinit {
        timestamps.deallocate()
        captureTimes.deallocate()
        samples.deallocate()
    }

    /// Empties the slots and anchors the grid and both extensions on a packet.
    mutating func reanchor(sequenceNumber: UInt16, timestamp: UInt32) {
        sequenceExtender = CounterExtender()
        timestampExtender = CounterExtender()
        anchorTimestamp = timestampExtender.extend(timestamp)
        highestSequence = sequenceExtender.peek(sequenceNumber) - 1
        highestTimestamp = .min
        timestamps.update(repeating: .min)
    }

    /// A timestamp extended against the ones accepted so far, without accepting it.
    @inline(__always)
    func peekTimestamp(_ timestamp: UInt32) -> Int64 { timestampExtender.peek(timestamp) }

    /// Accepts a packet's sequence number and timestamp (the extensions move on; the newest timestamp
    /// follows). Returns whether it came after a packet with a higher sequence number (reordered).
    mutating func accept(sequenceNumber: UInt16, timestamp: UInt32, extendedTimestamp: Int64) -> Bool {
        _ = timestampExtender.extend(timestamp)
        let extendedSequence = sequenceExtender.extend(sequenceNumber)
        let reordered = extendedSequence < highestSequence
        if !reordered { highestSequence = extendedSequence }
        if extendedTimestamp > highestTimestamp || highestTimestamp == .min { highestTimestamp = extendedTimestamp }
        return reordered
    }

    /// The sequence number and timestamp of the newest packet accepted since the anchor, or nil.
    var newestAccepted: (sequenceNumber: UInt16, timestamp: UInt32)? {
        guard highestTimestamp != .min else { return nil }
        return (UInt16(truncatingIfNeeded: highestSequence), UInt32(truncatingIfNeeded: highestTimestamp))
    }

    /// The packet index on the grid of the frame at `position` (rounded down; negative before the anchor).
    @inline(__always)
    func packetIndex(of position: Int64) -> Int64 { floorDivide(position - anchorTimestamp, Int64(packetFrames)) }

    /// Where packet `index` starts.
    @inline(__always)
    func packetStart(_ index: Int64) -> Int64 { anchorTimestamp + index * Int64(packetFrames) }

    /// The slot of packet `index`.
    @inline(__always)
    func slot(_ index: Int64) -> Int { Int(index & Int64(capacity - 1)) }

    /// Whether packet `index` (at or after the anchor) has arrived.
    @inline(__always)
    func holds(_ index: Int64) -> Bool { index >= 0 && timestamps[slot(index)] == packetStart(index) }

    /// Where the newest packet ends, or `otherwise` before one.
    @inline(__always)
    func highestEnd(otherwise: Int64) -> Int64 { highestTimestamp == .min ? otherwise : highestTimestamp + Int64(packetFrames) }

    /// Whether every packet covering `frames` frames from `position` is in the buffer.
    @_noLocks @_noAllocation
    func isPresent(from position: Int64, frames: Int) -> Bool {
        var index = packetIndex(of: position)
        let last = packetIndex(of: position + Int64(frames) - 1)
        while index <= last {
            if !holds(index) { return false }
            index += 1
        }
        return true
    }

    /// How many frames from `position` are in the buffer without a gap, up to `limit`: whole packets that
    /// have arrived, counted from `position` (which may be inside one).
    @_noLocks @_noAllocation
    func presentFrames(from position: Int64, atMost limit: Int) -> Int {
        var index = packetIndex(of: position)
        let last = packetIndex(of: position + Int64(limit) - 1)
        var end = position
        while index <= last, holds(index) {
            end = packetStart(index + 1)
            index += 1
        }
        return Int(min(end - position, Int64(limit)))
    }

    /// A slot's samples (`samplesPerPacket`).
    @inline(__always)
    func samples(slot: Int) -> UnsafeMutableBufferPointer<Float> {
        UnsafeMutableBufferPointer(rebasing: samples[(slot * samplesPerPacket)...].prefix(samplesPerPacket))
    }
}

@inline(__always)
func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
    let quotient = value / divisor
    return (value % divisor != 0 && (value < 0) != (divisor < 0)) ? quotient - 1 : quotient
}
