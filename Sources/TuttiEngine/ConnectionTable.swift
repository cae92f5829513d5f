import Synchronization

/// A fixed set of connection slots shared by the control plane (which adds and removes connections) and
/// a port's device thread (which processes them every period), without locks.
///
/// Each slot has an atomic state: empty → active (control plane publishes a connection with release
/// ordering) → retiring (control plane asks) → retired (device thread acknowledges, and never touches the
/// connection again) → empty (control plane releases it). So a connection is never freed under the device
/// thread, and the device thread never waits.
///
/// The device thread visits only the slots below the highest one ever used (`usedSlots`), so a table sized for
/// hundreds of connections costs a port with a few of them a few slot reads per period.
///
/// Thread rules: `insert`/`remove` on the control plane only (one caller at a time: the peer actor);
/// `forEachActive` on the device thread only. Realtime-safe: `forEachActive`.
package final class ConnectionTable<Connection: AnyObject>: @unchecked Sendable {
    private enum SlotState: Int {
        case empty = 0
        case active = 1
        case retiring = 2
        case retired = 3
    }

    package let capacity: Int
    private let states: UnsafeMutablePointer<Atomic<Int>>
    /// Written by the control plane while a slot is empty; read by the device thread while it is active.
    private let objects: UnsafeMutablePointer<Unmanaged<Connection>?>
    /// One past the highest slot ever made active: raised (releasing) before a slot above it is published.
    private let usedSlots = Atomic<Int>(0)

    /// Connections a port holds at most: enough for a mixing desk's inputs or a wide fan-out.
    package static var portCapacity: Int { 256 }

    package init(capacity: Int) {
        self.capacity = capacity
        states = .allocate(capacity: capacity)
        for index in 0..<capacity { (states + index).initialize(to: Atomic(SlotState.empty.rawValue)) }
        objects = .allocate(capacity: capacity)
        objects.initialize(repeating: nil, count: capacity)
    }

    deinit {
        for index in 0..<capacity { objects[index]?.release() }
        states.deinitialize(count: capacity)
        states.deallocate()
        objects.deallocate()
    }

    /// Publishes `connection`. Returns `false` when every slot is taken.
    package func insert(_ connection: Connection) -> Bool {
        for index in 0..<capacity where states[index].load(ordering: .acquiring) == SlotState.empty.rawValue {
            objects[index] = Unmanaged.passRetained(connection)
            if index >= usedSlots.load(ordering: .relaxed) { usedSlots.store(index + 1, ordering: .releasing) }
            states[index].store(SlotState.active.rawValue, ordering: .releasing)
            return true
        }
        return false
    }

    /// Withdraws `connection`; when `deviceRunning`, waits (sleeping, up to `timeout`) for the device thread to
    /// let go of it. Returns `false` if it was not in the table.
    package func remove(_ connection: Connection, deviceRunning: Bool, timeout: Duration = .seconds(2)) async -> Bool {
        guard let index = activeSlot(of: connection) else { return false }
        if deviceRunning {
            states[index].store(SlotState.retiring.rawValue, ordering: .releasing)
            let clock = ContinuousClock()
            let deadline = clock.now + timeout
            while states[index].load(ordering: .acquiring) != SlotState.retired.rawValue, clock.now < deadline {
                try? await Task.sleep(for: .milliseconds(1))
            }
        }
        release(slot: index)
        return true
    }

    /// Withdraws `connection` from a table no device thread reads (its clock does not run). Returns `false` if
    /// it was not in the table.
    package func removeIdle(_ connection: Connection) -> Bool {
        guard let index = activeSlot(of: connection) else { return false }
        release(slot: index)
        return true
    }

    private func activeSlot(of connection: Connection) -> Int? {
        (0..<capacity).first { index in
            states[index].load(ordering: .acquiring) == SlotState.active.rawValue
                && objects[index]?.takeUnretainedValue() === connection
        }
    }

    private func release(slot index: Int) {
        let object = objects[index]
        objects[index] = nil
        object?.release()
        states[index].store(SlotState.empty.rawValue, ordering: .releasing)
    }

    /// Calls `body` with every active connection; acknowledges retiring ones. Device thread only.
    @inline(__always)
    package func forEachActive(_ body: (Connection) -> Void) {
        // A slot published after this load is visited from the next period on.
        for index in 0..<usedSlots.load(ordering: .acquiring) {
            let state = states[index].load(ordering: .acquiring)
            if state == SlotState.active.rawValue {
                objects[index]!._withUnsafeGuaranteedRef { body($0) }
            } else if state == SlotState.retiring.rawValue {
                states[index].store(SlotState.retired.rawValue, ordering: .releasing)
            }
        }
    }

    /// How many slots `forEachActive` reads: one past the highest slot ever made active (not the capacity).
    /// Any thread.
    package var visitedSlots: Int { usedSlots.load(ordering: .acquiring) }

    /// Whether every slot is empty: no connection published, and none still being withdrawn by a `remove`
    /// that waits for the device thread. Control plane only.
    package var isEmpty: Bool {
        (0..<capacity).allSatisfy { states[$0].load(ordering: .acquiring) == SlotState.empty.rawValue }
    }

    /// Every published connection. Control plane only.
    package var all: [Connection] {
        (0..<capacity).compactMap { index in
            states[index].load(ordering: .acquiring) == SlotState.active.rawValue ? objects[index]?.takeUnretainedValue() : nil
        }
    }
}
