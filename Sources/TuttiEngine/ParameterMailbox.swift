import Synchronization

/// Parameter values on their way from the control plane to a filter's processor on the engine thread, without
/// a lock: the control plane stores a value in its slot and marks the slot; the engine thread, once per
/// period, takes the marks and applies the slots' values (the newest one, if a value changed twice). The other
/// way, the engine thread publishes the processor's latency (an LV2 plug-in reports its own as it runs).
///
/// Thread rules: `post` on the control plane; `drain` on the engine thread. Realtime-safe: `drain`.
package final class ParameterMailbox: @unchecked Sendable {
    /// Parameters a processor has at most.
    package static let capacity = 16
    private let slots: UnsafeMutablePointer<Atomic<UInt64>>
    private let marks = Atomic<UInt64>(0)
    /// The processor's latency in frames as the engine thread last saw it (the other way: engine → control plane).
    private let latency = Atomic<Int>(0)

    package init() {
        slots = .allocate(capacity: Self.capacity)
        for index in 0..<Self.capacity { (slots + index).initialize(to: Atomic(0)) }
    }

    deinit {
        slots.deinitialize(count: Self.capacity)
        slots.deallocate()
    }

    /// Hands parameter `index` (below `capacity`) its new `value`, already checked against its range.
    package func post(_ index: Int, _ value: Double) {
        precondition((0..<Self.capacity).contains(index))
        slots[index].store(value.bitPattern, ordering: .relaxed)
        marks.bitwiseOr(1 << UInt64(index), ordering: .releasing)
    }

    /// The processor's latency in frames, as the engine thread last published it. Any thread.
    package var latencyFrames: Int { latency.load(ordering: .relaxed) }

    /// Publishes the processor's latency (engine thread, when it changed).
    @inline(__always)
    package func publishLatency(_ frames: Int) { latency.store(frames, ordering: .relaxed) }

    /// Calls `apply` with every parameter posted since the last drain, lowest index first.
    @inline(__always)
    package func drain(_ apply: (Int, Double) -> Void) {
        var pending = marks.exchange(0, ordering: .acquiring)
        while pending != 0 {
            let index = pending.trailingZeroBitCount
            pending &= pending - 1
            apply(index, Double(bitPattern: slots[index].load(ordering: .relaxed)))
        }
    }
}
