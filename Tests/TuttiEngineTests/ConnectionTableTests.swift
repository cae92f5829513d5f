#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import TuttiEngine
import TuttiTesting
import XCTest

/// `ConnectionTable`'s retire protocol: the control plane adds and removes connections while a device thread
/// visits them every period; a removed slot is freed, and reused, only after the device thread has passed it.
/// Here the test is the device thread (calling `forEachActive` itself), except in the last test, where a real
/// thread reads in a loop while the test adds and removes (run it under ThreadSanitizer too).
final class ConnectionTableTests: XCTestCase {
    private final class Connection: Sendable {
        let id: Int
        /// Device thread only (relaxed: read by the control plane after the protocol's release/acquire).
        let visits = Atomic<Int>(0)
        init(_ id: Int) { self.id = id }
    }

    /// What a `remove` running in another task returned: -1 while it runs, then 1 (removed) or 0.
    private final class Outcome: Sendable {
        let value = Atomic<Int>(-1)
    }

    /// One device-thread pass: the ids visited, in slot order.
    private func pass(_ table: ConnectionTable<Connection>) -> [Int] {
        var ids: [Int] = []
        table.forEachActive { ids.append($0.id) }
        return ids
    }

    /// Polls `condition` (sleeping 1 ms) until it holds, for at most 10 s.
    private func eventually(_ condition: () -> Bool) -> Bool {
        let deadline = ContinuousClock.now + .seconds(10)
        while !condition() {
            guard ContinuousClock.now < deadline else { return false }
            usleep(1_000)
        }
        return true
    }

    func testConnectionsAreVisitedInSlotOrderAndAFreedSlotIsTakenFirst() {
        let table = ConnectionTable<Connection>(capacity: 4)
        XCTAssertTrue(table.isEmpty)
        XCTAssertEqual(pass(table), [])
        let connections = (0..<3).map(Connection.init)
        for connection in connections { XCTAssertTrue(table.insert(connection)) }
        XCTAssertEqual(pass(table), [0, 1, 2])
        XCTAssertEqual(table.all.map(\.id), [0, 1, 2])

        XCTAssertTrue(table.removeIdle(connections[1]))
        XCTAssertEqual(pass(table), [0, 2])
        XCTAssertTrue(table.insert(Connection(3)))
        XCTAssertEqual(pass(table), [0, 3, 2], "the lowest empty slot is reused")
        XCTAssertFalse(table.isEmpty)
        XCTAssertEqual(connections.map { $0.visits.load(ordering: .relaxed) }, [0, 0, 0], "the bodies here do not count")
    }

    /// A port's table is sized for 256 connections; a pass reads only the slots up to the highest ever used, so
    /// a port with three connections costs three slot reads a period, not 256.
    func testAPassReadsOnlyTheSlotsInUse() {
        let table = ConnectionTable<Connection>(capacity: ConnectionTable<Connection>.portCapacity)
        XCTAssertEqual(table.visitedSlots, 0)
        let connections = (0..<3).map(Connection.init)
        for connection in connections { XCTAssertTrue(table.insert(connection)) }
        XCTAssertEqual(table.visitedSlots, 3)
        XCTAssertTrue(table.removeIdle(connections[1]))
        XCTAssertTrue(table.insert(Connection(3)))
        XCTAssertEqual(table.visitedSlots, 3, "a freed slot below the highest is reused")
        XCTAssertEqual(pass(table), [0, 3, 2])
        for id in 4...256 { XCTAssertTrue(table.insert(Connection(id))) }
        XCTAssertFalse(table.insert(Connection(257)), "full")
        XCTAssertEqual(table.visitedSlots, 256)
        XCTAssertEqual(pass(table).count, 256)
    }

    /// Without a running device thread, `remove` frees the slot at once, waiting for nobody.
    func testRemovingFromATableNoDeviceThreadReadsFreesTheSlotAtOnce() async {
        let table = ConnectionTable<Connection>(capacity: 1)
        let first = Connection(0)
        XCTAssertTrue(table.insert(first))
        let start = ContinuousClock.now
        let removed = await table.remove(first, deviceRunning: false, timeout: .seconds(30))
        XCTAssertTrue(removed)
        XCTAssertLessThan(ContinuousClock.now - start, .seconds(30), "it did not wait out its timeout")
        XCTAssertTrue(table.isEmpty)
        XCTAssertTrue(table.insert(Connection(1)))
        XCTAssertEqual(pass(table), [1])
    }

    /// The device thread is inside the body for a connection when the control plane starts removing it: the
    /// connection stays valid for the rest of that pass, its slot is not reused, and `remove` returns only
    /// after the next pass has acknowledged it.
    func testASlotRemovedMidPassIsFreedOnlyAfterTheDeviceThreadsNextPass() {
        let table = ConnectionTable<Connection>(capacity: 2)
        let first = Connection(0)
        let second = Connection(1)
        XCTAssertTrue(table.insert(first))
        XCTAssertTrue(table.insert(second))
        let result = Outcome()

        var visited: [Int] = []
        table.forEachActive { connection in
            visited.append(connection.id)
            guard connection === first else { return }
            Task.detached {
                let removed = await table.remove(first, deviceRunning: true, timeout: .seconds(30))
                result.value.store(removed ? 1 : 0, ordering: .releasing)
            }
            XCTAssertTrue(eventually { table.all.map(\.id) == [1] }, "remove marks the slot retiring")
            XCTAssertEqual(connection.id, 0, "still readable for the rest of the pass")
        }
        XCTAssertEqual(visited, [0, 1])

        // Retiring, not yet acknowledged: the slot is neither empty nor free, and remove still waits.
        XCTAssertFalse(table.isEmpty)
        XCTAssertFalse(table.insert(Connection(2)), "the retiring slot is not reused, the other is taken")
        usleep(50_000)
        XCTAssertEqual(result.value.load(ordering: .acquiring), -1, "remove returned before the device thread passed")

        XCTAssertEqual(pass(table), [1], "the next pass skips the retiring slot and acknowledges it")
        XCTAssertTrue(eventually { result.value.load(ordering: .acquiring) == 1 }, "remove returns after the acknowledgement")
        XCTAssertTrue(table.insert(Connection(2)))
        XCTAssertEqual(pass(table), [2, 1], "the freed slot is reused")
    }

    func testAFullTableRefusesTheNextConnectionUntilOneIsRemoved() {
        let table = ConnectionTable<Connection>(capacity: ConnectionTable<Connection>.portCapacity)
        XCTAssertEqual(table.capacity, 256)
        let connections = (0..<256).map(Connection.init)
        for connection in connections { XCTAssertTrue(table.insert(connection)) }
        XCTAssertFalse(table.insert(Connection(256)), "257th")
        XCTAssertEqual(pass(table), Array(0..<256))

        XCTAssertTrue(table.removeIdle(connections[100]))
        XCTAssertTrue(table.insert(Connection(256)))
        XCTAssertFalse(table.insert(Connection(257)))
        XCTAssertEqual(pass(table), Array(0..<100) + [256] + Array(101..<256))
        XCTAssertEqual(table.all.count, 256)
    }

    /// A connection never added, or already removed, is not found; nothing changes, and `remove` does not
    /// wait for the device thread.
    func testRemovingAConnectionNotInTheTableReturnsFalseAtOnce() async {
        let table = ConnectionTable<Connection>(capacity: 4)
        let member = Connection(0)
        let stranger = Connection(1)
        XCTAssertTrue(table.insert(member))
        let start = ContinuousClock.now
        let strangerRemoved = await table.remove(stranger, deviceRunning: true, timeout: .seconds(30))
        XCTAssertFalse(strangerRemoved)
        XCTAssertFalse(table.removeIdle(stranger))
        XCTAssertEqual(pass(table), [0])

        XCTAssertTrue(table.removeIdle(member))
        let removedTwice = await table.remove(member, deviceRunning: true, timeout: .seconds(30))
        XCTAssertFalse(removedTwice)
        XCTAssertFalse(table.removeIdle(member))
        XCTAssertLessThan(ContinuousClock.now - start, .seconds(30), "no removal of an unknown connection waited out its timeout")
        XCTAssertTrue(table.isEmpty)
    }

    /// The table keeps what it holds alive, lets go of it on removal, and releases the rest when it goes.
    func testTheTableRetainsItsConnectionsUntilRemovedOrGone() {
        weak var removed: Connection?
        weak var kept: Connection?
        var table: ConnectionTable<Connection>? = ConnectionTable(capacity: 2)
        do {
            let first = Connection(0)
            let second = Connection(1)
            removed = first
            kept = second
            XCTAssertTrue(table!.insert(first))
            XCTAssertTrue(table!.insert(second))
        }
        XCTAssertNotNil(removed)
        XCTAssertNotNil(kept)
        XCTAssertTrue(table!.removeIdle(removed!))
        XCTAssertNil(removed)
        XCTAssertNotNil(kept)
        table = nil
        XCTAssertNil(kept)
    }

    /// A device thread that never acknowledges (stopped without saying so) does not hold `remove` forever:
    /// after its timeout the slot is freed anyway.
    func testRemoveGivesUpWaitingAfterItsTimeout() async {
        let table = ConnectionTable<Connection>(capacity: 1)
        let connection = Connection(0)
        XCTAssertTrue(table.insert(connection))
        let removed = await table.remove(connection, deviceRunning: true, timeout: .milliseconds(20))
        XCTAssertTrue(removed)
        XCTAssertTrue(table.isEmpty)
    }

    /// A real device thread runs `forEachActive` in a loop while the control plane adds and removes
    /// connections at random (seeded): every added connection is visited, and none is visited once its
    /// `remove` has returned. Run under ThreadSanitizer as well:
    /// `swift test --sanitize=thread --filter ConnectionTableTests.testAReaderThreadNeverVisitsAConnectionAfterItsRemovalReturned`.
    func testAReaderThreadNeverVisitsAConnectionAfterItsRemovalReturned() async {
        final class Reader: Sendable {
            let stop = Atomic<Bool>(false)
            let stopped = Atomic<Bool>(false)
            let passes = Atomic<Int>(0)
        }
        let table = ConnectionTable<Connection>(capacity: ConnectionTable<Connection>.portCapacity)
        let reader = Reader()
        let thread = Thread {
            while !reader.stop.load(ordering: .acquiring) {
                table.forEachActive { $0.visits.add(1, ordering: .relaxed) }
                reader.passes.add(1, ordering: .releasing)
                sched_yield()
            }
            reader.stopped.store(true, ordering: .releasing)
        }
        thread.start()

        var random = SeededGenerator(seed: 0x7AB1E)
        var live: [Connection] = []
        var removed: [(connection: Connection, visitsWhenRemoved: Int)] = []
        var next = 0
        for _ in 0..<600 {
            if live.isEmpty || (live.count < 24 && Bool.random(using: &random)) {
                let connection = Connection(next)
                next += 1
                XCTAssertTrue(table.insert(connection))
                live.append(connection)
            } else {
                let connection = live.remove(at: Int.random(in: 0..<live.count, using: &random))
                // Every added connection is visited: wait for its first visit before taking it away.
                let visited = eventually { connection.visits.load(ordering: .relaxed) > 0 }
                XCTAssertTrue(visited, "connection \(connection.id) was never visited")
                let started = ContinuousClock.now
                let wasRemoved = await table.remove(connection, deviceRunning: true, timeout: .seconds(30))
                XCTAssertTrue(wasRemoved)
                // Past its timeout `remove` frees the slot without the reader's acknowledgement: not the protocol.
                guard ContinuousClock.now - started < .seconds(30) else {
                    XCTFail("the reader never acknowledged connection \(connection.id)'s removal")
                    break
                }
                removed.append((connection, connection.visits.load(ordering: .relaxed)))
            }
        }
        // A few more passes, so that a late visit of a removed connection would be counted.
        let passes = reader.passes.load(ordering: .acquiring)
        XCTAssertTrue(eventually { reader.passes.load(ordering: .acquiring) > passes + 10 })
        reader.stop.store(true, ordering: .releasing)
        XCTAssertTrue(eventually { reader.stopped.load(ordering: .acquiring) })

        XCTAssertGreaterThan(removed.count, 250)
        for (connection, visitsWhenRemoved) in removed {
            XCTAssertEqual(
                connection.visits.load(ordering: .relaxed), visitsWhenRemoved, "connection \(connection.id) visited after its removal")
        }
        for connection in live {
            XCTAssertGreaterThan(connection.visits.load(ordering: .relaxed), 0, "connection \(connection.id) never visited")
            XCTAssertTrue(table.removeIdle(connection))
        }
        XCTAssertTrue(table.isEmpty)
    }
}
