import Synchronization
import TuttiCore

/// A single-producer, single-consumer ring of received packets: the network thread pushes, the device
/// thread pops into its jitter buffer. Fixed capacity, preallocated; a full ring drops the packet and
/// counts it (`overflows`), it never grows.
///
/// Thread rules: `push` from exactly one producer thread, `pop` from exactly one consumer thread; any
/// thread may read `overflows`. Realtime-safe: `push` and `pop` (no allocation, no lock; acquire/release
/// atomics on the two indices). Hold it through `unowned(unsafe)` on the device thread to avoid ARC.
public final class PacketRing: @unchecked Sendable {
    /// Metadata of one queued packet.
    public struct Entry: Sendable {
        public var sequenceNumber: UInt16
        public var timestamp: UInt32
        public var captureTime: Int64?
        public var arrival: HostTime
        public var payloadCount: Int

        public init(sequenceNumber: UInt16, timestamp: UInt32, captureTime: Int64?, arrival: HostTime, payloadCount: Int) {
            self.sequenceNumber = sequenceNumber
            self.timestamp = timestamp
            self.captureTime = captureTime
            self.arrival = arrival
            self.payloadCount = payloadCount
        }
    }

    public let capacity: Int
    public let maxPayloadBytes: Int
    private let entries: UnsafeMutableBufferPointer<Entry>
    private let payloads: UnsafeMutableRawBufferPointer
    /// Next slot to write. Written by the producer only.
    private let head = Atomic<Int>(0)
    /// Next slot to read. Written by the consumer only.
    private let tail = Atomic<Int>(0)
    private let overflowCount = Atomic<UInt64>(0)

    /// - Parameters:
    ///   - capacity: packets the ring holds (rounded up to a power of two).
    ///   - maxPayloadBytes: the largest payload a slot stores.
    public init(capacity: Int, maxPayloadBytes: Int) {
        var size = 2
        while size < capacity { size *= 2 }
        self.capacity = size
        self.maxPayloadBytes = maxPayloadBytes
        entries = .allocate(capacity: size)
        entries.initialize(
            repeating: Entry(sequenceNumber: 0, timestamp: 0, captureTime: nil, arrival: HostTime(nanoseconds: 0), payloadCount: 0))
        payloads = .allocate(byteCount: size * maxPayloadBytes, alignment: 16)
    }

    deinit {
        entries.deallocate()
        payloads.deallocate()
    }

    /// Packets dropped because the consumer fell behind.
    public var overflows: UInt64 { overflowCount.load(ordering: .relaxed) }

    /// Queues a packet. Producer thread only. Returns `false` (and counts an overflow) when full or the
    /// payload is larger than a slot.
    @discardableResult
    public func push(_ entry: Entry, payload: UnsafeRawBufferPointer) -> Bool {
        let writeIndex = head.load(ordering: .relaxed)
        let readIndex = tail.load(ordering: .acquiring)
        guard writeIndex &- readIndex < capacity, payload.count <= maxPayloadBytes else {
            overflowCount.add(1, ordering: .relaxed)
            return false
        }
        let slot = writeIndex & (capacity - 1)
        var stored = entry
        stored.payloadCount = payload.count
        entries[slot] = stored
        if let source = payload.baseAddress, payload.count > 0 {
            (payloads.baseAddress! + slot * maxPayloadBytes).copyMemory(from: source, byteCount: payload.count)
        }
        head.store(writeIndex &+ 1, ordering: .releasing)
        return true
    }

    /// Hands the oldest packet to `body` and removes it. Consumer thread only.
    /// Returns `false` when the ring is empty.
    @inline(__always)
    public func pop(_ body: (Entry, UnsafeRawBufferPointer) -> Void) -> Bool {
        pop(arrivedBy: HostTime(nanoseconds: .max), body)
    }

    /// Hands the oldest packet to `body` and removes it, if it arrived at or before `limit`; a later one stays
    /// queued, and so does everything behind it (the ring is in arrival order). Consumer thread only.
    /// Returns `false` when the ring is empty or its oldest packet arrived after `limit`.
    @inline(__always)
    public func pop(arrivedBy limit: HostTime, _ body: (Entry, UnsafeRawBufferPointer) -> Void) -> Bool {
        let readIndex = tail.load(ordering: .relaxed)
        let writeIndex = head.load(ordering: .acquiring)
        guard readIndex != writeIndex else { return false }
        let slot = readIndex & (capacity - 1)
        let entry = entries[slot]
        guard entry.arrival <= limit else { return false }
        let payload = UnsafeRawBufferPointer(start: payloads.baseAddress! + slot * maxPayloadBytes, count: entry.payloadCount)
        body(entry, payload)
        tail.store(readIndex &+ 1, ordering: .releasing)
        return true
    }
}
