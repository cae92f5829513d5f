/// A jitter buffer's loss accounting: which packets the play head passed while they were missing, and
/// whether each is lost, still pending, or turned out late.
///
/// A packet the play head passes missing is **lost** if a newer packet had arrived, else **pending** (the
/// stream's end, or a loss not yet confirmed): pending ones become lost when a newer packet arrives. A passed
/// packet that arrives after all is taken back out of the lost (or pending) count: the buffer counts it late.
/// Each passed packet is marked in its slot (by its extended timestamp), so a late arrival can be told apart
/// from a stale duplicate, and noted once wherever the play head enters it.
///
/// **Never below zero.** A packet that comes back from further behind than the ring reaches
/// (`arrivedAfterPassingLongAgo`) can no longer be told apart by its slot: it takes a pending miss out of the
/// count, which may be another packet's whose slot is still marked (the play head skipped it unmarked, or
/// passed it while not playing). When that packet arrives after all, its count is already gone: the
/// decrement stops at zero, and counts it in `countsAlreadyTaken` (a stall of hundreds of streams on one core
/// did this; a trap there crashed the peer).
///
/// Realtime-safe: every method after `init` (no allocation, lock or log). Thread-safe: no (the jitter
/// buffer's owner thread).
package struct LossAccounting: ~Copyable {
    /// Timestamp of the packet the play head passed missing in each slot, or `Int64.min`.
    private let missed: UnsafeMutableBufferPointer<Int64>
    /// Whether that miss is still pending (nothing newer had arrived), rather than counted lost.
    private let missedPending: UnsafeMutableBufferPointer<Bool>
    /// Packets lost (confirmed), as `JitterBufferStatistics.lost` reports them.
    package private(set) var lost: UInt64 = 0
    /// Packets passed missing while nothing newer had arrived (`JitterBufferStatistics.pendingMissing`).
    package private(set) var pending: UInt64 = 0
    /// Late arrivals whose lost or pending count had already been taken back (see the type's comment).
    package private(set) var countsAlreadyTaken: UInt64 = 0
    private var pendingUpTo: Int64 = .min
    /// The last packet (index on the grid) the play head entered while it was missing.
    private var lastPassed: Int64 = .min

    /// Control plane (allocates `capacity` slots).
    package init(capacity: Int) {
        missed = .allocate(capacity: capacity)
        missed.initialize(repeating: .min)
        missedPending = .allocate(capacity: capacity)
        missedPending.initialize(repeating: false)
    }

    deinit {
        missed.deallocate()
        missedPending.deallocate()
    }

    /// The stream came back after a loss of signal with `packets` never received in between: lost. (The
    /// misses the play head noted while it ran on are among them, pending; `reanchor` drops those.)
    @_noLocks @_noAllocation
    package mutating func lostInSilence(_ packets: UInt64) { lost &+= packets }

    /// One of the packets `lostInSilence` counted came after all (late): out of the lost count.
    @_noLocks @_noAllocation
    package mutating func arrivedAfterSilence() { takeBackLost() }

    /// One out of `lost` (or `pending`), unless it is already zero: then counted in `countsAlreadyTaken`.
    @inline(__always)
    private mutating func takeBackLost() {
        if lost > 0 { lost -= 1 } else { countsAlreadyTaken &+= 1 }
    }

    @inline(__always)
    private mutating func takeBackPending() {
        if pending > 0 { pending -= 1 } else { countsAlreadyTaken &+= 1 }
    }

    /// A new anchor: nothing passed yet (the lost count stays: it is cumulative).
    @_noLocks @_noAllocation
    package mutating func reanchor() {
        missed.update(repeating: .min)
        missedPending.update(repeating: false)
        pending = 0
        pendingUpTo = .min
        lastPassed = .min
    }

    /// Whether the packet at `timestamp` was passed missing in `slot`.
    @inline(__always)
    package func wasMissed(slot: Int, timestamp: Int64) -> Bool { missed[slot] == timestamp }

    /// The play head entered packet `index` (starting at `packetStart`, in `slot`) while it was missing:
    /// noted once per packet; while `playing`, counted lost if a packet newer than it had arrived
    /// (`newestTimestamp`), else pending.
    @_noLocks @_noAllocation
    package mutating func passedMissing(index: Int64, packetStart: Int64, slot: Int, newestTimestamp: Int64, playing: Bool) {
        guard index != lastPassed else { return }
        lastPassed = index
        guard playing else { return }
        missed[slot] = packetStart
        if newestTimestamp > packetStart {
            lost &+= 1
            missedPending[slot] = false
        } else {
            pending &+= 1
            pendingUpTo = packetStart
            missedPending[slot] = true
        }
    }

    /// A packet newer than any that arrived, passed missing so long ago that its slot has been passed again
    /// since, has arrived after all: nothing newer had come, so it was counted pending; out of that count.
    @_noLocks @_noAllocation
    package mutating func arrivedAfterPassingLongAgo() {
        if pending > 0 { pending -= 1 }
    }

    /// A packet counted missing in `slot` has arrived after all: out of the lost (or pending) count.
    @_noLocks @_noAllocation
    package mutating func arrivedAfterAll(slot: Int) {
        if missedPending[slot] {
            takeBackPending()
        } else {
            takeBackLost()
        }
        missed[slot] = .min
        missedPending[slot] = false
    }

    /// A packet arrived in `slot` in time: whatever was missed there before is history.
    @inline(__always)
    package mutating func filled(slot: Int) { missed[slot] = .min }

    /// A packet at `timestamp` arrived: if it is newer than the pending misses, they were losses, not the end.
    @_noLocks @_noAllocation
    package mutating func newer(timestamp: Int64) {
        guard pending > 0, timestamp > pendingUpTo else { return }
        lost &+= pending
        pending = 0
        missedPending.update(repeating: false)
    }
}
