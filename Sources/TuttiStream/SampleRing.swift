import Synchronization

/// A single-producer, single-consumer ring of interleaved `Float` samples, between the device thread and a
/// file or pipe thread (sinks: device → writer; sources: reader → device). Fixed capacity, preallocated;
/// a full ring refuses the excess and counts it, it never grows.
///
/// Thread rules: `write` from one producer thread, `read` from one consumer thread; counters from any.
/// Realtime-safe: `write`, `read` (no allocation, no lock).
public final class SampleRing: @unchecked Sendable {
    public let capacity: Int
    private let storage: UnsafeMutableBufferPointer<Float>
    /// Total samples written. Producer writes.
    private let written = Atomic<Int>(0)
    /// Total samples read. Consumer writes.
    private let consumed = Atomic<Int>(0)
    private let droppedCount = Atomic<UInt64>(0)

    /// - Parameter capacity: samples the ring holds (rounded up to a power of two).
    public init(capacity: Int) {
        var size = 2
        while size < capacity { size *= 2 }
        self.capacity = size
        storage = .allocate(capacity: size)
        storage.initialize(repeating: 0)
    }

    deinit { storage.deallocate() }

    /// Samples refused because the ring was full (the consumer fell behind).
    public var dropped: UInt64 { droppedCount.load(ordering: .relaxed) }

    /// Samples waiting to be read. Any thread (a snapshot).
    public var available: Int { written.load(ordering: .acquiring) &- consumed.load(ordering: .acquiring) }

    /// Appends as many of `samples` as fit; the rest are dropped and counted. Producer thread only.
    @discardableResult
    public func write(_ samples: UnsafeBufferPointer<Float>) -> Int {
        let head = written.load(ordering: .relaxed)
        let tail = consumed.load(ordering: .acquiring)
        let space = capacity - (head &- tail)
        let count = min(space, samples.count)
        if count < samples.count { droppedCount.add(UInt64(samples.count - count), ordering: .relaxed) }
        for index in 0..<count { storage[(head &+ index) & (capacity - 1)] = samples[index] }
        written.store(head &+ count, ordering: .releasing)
        return count
    }

    /// Moves up to `output.count` samples into `output`. Consumer thread only.
    /// - Returns: the number of samples read.
    @discardableResult
    public func read(into output: UnsafeMutableBufferPointer<Float>) -> Int {
        let tail = consumed.load(ordering: .relaxed)
        let head = written.load(ordering: .acquiring)
        let count = min(head &- tail, output.count)
        for index in 0..<count { output[index] = storage[(tail &+ index) & (capacity - 1)] }
        consumed.store(tail &+ count, ordering: .releasing)
        return count
    }
}
