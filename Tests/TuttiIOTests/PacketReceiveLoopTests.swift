import Synchronization
import TuttiCore
import TuttiIO
import XCTest

/// One epoll thread serving many sockets: delivery, arrival times, unregistering under traffic, lifecycle.
final class PacketReceiveLoopTests: XCTestCase {
    /// What a test handler saw for one socket (the handler runs on the loop thread; tests read under the lock).
    final class Recorder: @unchecked Sendable {
        let index: Int
        let seen = Mutex<[(sequence: UInt32, length: Int, arrival: Int64)]>([])
        /// Set once its socket is unregistered: a call after that is a violation.
        let retired = Atomic<Bool>(false)
        let violations: Atomic<Int>
        init(index: Int) {
            self.index = index
            violations = Atomic(0)
        }
        var count: Int { seen.withLock { $0.count } }
        var context: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }
    }

    final class Flag: Sendable {
        let raised = Atomic<Bool>(true)
    }

    static let record: DatagramHandler = { context, bytes, length, arrival in
        let recorder = Unmanaged<Recorder>.fromOpaque(context!).takeUnretainedValue()
        if recorder.retired.load(ordering: .sequentiallyConsistent) { recorder.violations.add(1, ordering: .relaxed) }
        let sequence = length >= 4 ? bytes!.loadUnaligned(as: UInt32.self) : 0
        recorder.seen.withLock { $0.append((sequence, length, arrival)) }
    }

    /// `count` loopback sockets registered on `loop`, each with its own recorder.
    func registeredReceivers(_ count: Int, on loop: PacketReceiveLoop) throws -> ([UDPSocket], [Recorder]) {
        let receivers = try (0..<count).map { _ in try UDPSocket() }
        let recorders = (0..<count).map { Recorder(index: $0) }
        for (receiver, recorder) in zip(receivers, recorders) {
            _ = try loop.register(receiver, handler: Self.record, context: recorder.context)
        }
        return (receivers, recorders)
    }

    func waitUntil(_ condition: () -> Bool, file: StaticString = #filePath, line: UInt = #line) {
        let deadline = MonotonicClock().now() + .seconds(10)
        while !condition(), MonotonicClock().now() < deadline { usleep(1_000) }
        XCTAssertTrue(condition(), "condition not met within 10 s", file: file, line: line)
    }

    func testABurstThroughTheLoopArrivesInOrderWithMonotonicKernelArrivalTimes() throws {
        let loop = try PacketReceiveLoop(capacity: 4)
        let receiver = try UDPSocket()
        let sender = try UDPSocket()
        let recorder = Recorder(index: 0)
        let registration = try loop.register(receiver, handler: Self.record, context: recorder.context)
        loop.start()
        defer { loop.stop() }
        let destination = sender.destination(try UDPAddress(host: "127.0.0.1", port: receiver.localPort))
        let before = MonotonicClock().now().nanoseconds
        for sequence in 0..<200 { sender.send(datagram(sequence, bytes: 200), to: destination) }
        waitUntil { recorder.count >= 200 }
        let after = MonotonicClock().now().nanoseconds
        let seen = recorder.seen.withLock { $0 }
        XCTAssertEqual(seen.map(\.sequence), (0..<200).map(UInt32.init))
        XCTAssertTrue(seen.allSatisfy { $0.length == 200 })
        for (earlier, later) in zip(seen, seen.dropFirst()) { XCTAssertLessThanOrEqual(earlier.arrival, later.arrival) }
        XCTAssertGreaterThan(seen.first!.arrival, before - 1_000_000)
        XCTAssertLessThanOrEqual(seen.last!.arrival, after)
        let statistics = loop.statistics
        XCTAssertEqual(statistics.datagrams, 200)
        XCTAssertEqual(statistics.kernelTimestamped, 200)
        XCTAssertTrue(loop.unregister(registration))
        XCTAssertFalse(loop.unregister(registration), "already gone")
    }

    func testATruncatedDatagramReachesTheHandlerWithItsFullLength() throws {
        let loop = try PacketReceiveLoop(capacity: 2)
        let receiver = try UDPSocket()
        let sender = try UDPSocket()
        let recorder = Recorder(index: 0)
        _ = try loop.register(receiver, handler: Self.record, context: recorder.context)
        loop.start()
        defer { loop.stop() }
        let destination = sender.destination(try UDPAddress(host: "127.0.0.1", port: receiver.localPort))
        sender.send(datagram(1, bytes: 5_000), to: destination)
        sender.send(datagram(2, bytes: 50), to: destination)
        waitUntil { recorder.count >= 2 }
        XCTAssertEqual(recorder.seen.withLock { $0.map(\.length) }, [5_000, 50])
        XCTAssertEqual(loop.statistics.truncated, 1)
    }

    func test256SocketsOnOneLoopAllDeliver() throws {
        let loop = try PacketReceiveLoop(capacity: 256)
        let (receivers, recorders) = try registeredReceivers(256, on: loop)
        loop.start()
        defer { loop.stop() }
        let sender = try UDPSocket()
        var batch = UDPSendBatch(capacity: 256)
        for round in 0..<3 {
            batch.removeAll()
            for receiver in receivers {
                _ = batch.append(
                    datagram(round, bytes: 100), to: sender.destination(try UDPAddress(host: "127.0.0.1", port: receiver.localPort)))
            }
            XCTAssertEqual(batch.send(from: sender).sent, 256)
        }
        waitUntil { recorders.allSatisfy { $0.count >= 3 } }
        for recorder in recorders { XCTAssertEqual(recorder.seen.withLock { $0.map(\.sequence) }, [0, 1, 2], "socket \(recorder.index)") }
        XCTAssertEqual(loop.statistics.datagrams, 768)
        XCTAssertLessThan(loop.statistics.receiveCalls, 768 + 256, "no more than one call per datagram and socket wake")
    }

    func testTheLoopKeepsARegisteredSocketOpenAfterItsOwnerLetsGo() throws {
        let loop = try PacketReceiveLoop(capacity: 1)
        let recorder = Recorder(index: 0)
        let port: UInt16
        let registration: PacketReceiveLoop.Registration
        do {
            let receiver = try UDPSocket()
            port = receiver.localPort
            registration = try loop.register(receiver, handler: Self.record, context: recorder.context)
        }
        loop.start()
        defer { loop.stop() }
        let sender = try UDPSocket()
        sender.send(datagram(5, bytes: 20), to: sender.destination(try UDPAddress(host: "127.0.0.1", port: port)))
        waitUntil { recorder.count == 1 }
        XCTAssertTrue(loop.unregister(registration))
    }

    func testARegisterBeyondCapacityIsRefusedWithENOSPC() throws {
        let loop = try PacketReceiveLoop(capacity: 1)
        let first = try UDPSocket()
        let second = try UDPSocket()
        let recorder = Recorder(index: 0)
        let registration = try loop.register(first, handler: Self.record, context: recorder.context)
        XCTAssertThrowsError(try loop.register(second, handler: Self.record, context: recorder.context)) { error in
            XCTAssertEqual((error as? SystemError)?.errno, ENOSPC)
        }
        XCTAssertTrue(loop.unregister(registration))
        XCTAssertNoThrow(try loop.register(second, handler: Self.record, context: recorder.context), "the slot is free again")
    }

    func testUnregisteringWhileTrafficFlowsNeverCallsTheHandlerAfterwards() throws {
        let loop = try PacketReceiveLoop(capacity: 16)
        loop.start()
        defer { loop.stop() }
        try unregisterUnderTraffic(loop)
    }

    func testUnregisteringWhileAPeriodThreadPollsNeverCallsTheHandlerAfterwards() throws {
        let loop = try PacketReceiveLoop(capacity: 16)
        let polling = Flag()
        let poller = OSThread(name: "test-period") {
            while polling.raised.load(ordering: .relaxed) {
                loop.receiveReady()
                usleep(200)
            }
        }
        defer {
            polling.raised.store(false, ordering: .relaxed)
            poller.join()
        }
        try unregisterUnderTraffic(loop)
    }

    func testReceiveReadyServesQueuedDatagramsWithoutTheLoopThread() throws {
        let loop = try PacketReceiveLoop(capacity: 4)
        let (receivers, recorders) = try registeredReceivers(3, on: loop)
        XCTAssertEqual(loop.receiveReady(), 0, "nothing queued: returns at once")
        let sender = try UDPSocket()
        for (index, receiver) in receivers.enumerated() {
            let destination = sender.destination(try UDPAddress(host: "127.0.0.1", port: receiver.localPort))
            for sequence in 0..<5 { sender.send(datagram(index * 10 + sequence, bytes: 64), to: destination) }
        }
        var handled = 0
        let deadline = MonotonicClock().now() + .seconds(10)
        while handled < 15, MonotonicClock().now() < deadline {
            handled += loop.receiveReady()
            usleep(1_000)
        }
        XCTAssertEqual(handled, 15)
        for (index, recorder) in recorders.enumerated() {
            XCTAssertEqual(recorder.seen.withLock { $0.map(\.sequence) }, (0..<5).map { UInt32(index * 10 + $0) })
        }
        XCTAssertEqual(loop.statistics.kernelTimestamped, 15)
        XCTAssertFalse(loop.isRunning)
    }

    /// `receiveReady` reads a lone socket directly and does nothing without one: delivery is the same as
    /// through epoll as sockets come and go (none, one, two, one, none).
    func testReceiveReadyServesNoneOneAndSeveralSocketsAsTheyComeAndGo() throws {
        let loop = try PacketReceiveLoop(capacity: 4)
        XCTAssertEqual(loop.receiveReady(), 0)
        XCTAssertEqual(loop.statistics.receiveCalls, 0, "no socket: not a read")
        let sender = try UDPSocket()
        let sockets = try (0..<2).map { _ in try UDPSocket() }
        let recorders = (0..<2).map { Recorder(index: $0) }
        func send(_ sequence: Int, to index: Int) throws {
            sender.send(
                datagram(sequence, bytes: 64),
                to: sender.destination(try UDPAddress(host: "127.0.0.1", port: sockets[index].localPort)))
            XCTAssertTrue(sockets[index].waitUntilReadable(timeoutMilliseconds: 5_000))
        }
        let first = try loop.register(sockets[0], handler: Self.record, context: recorders[0].context)
        try send(1, to: 0)
        XCTAssertEqual(loop.receiveReady(), 1, "the lone socket")
        XCTAssertEqual(loop.receiveReady(), 0, "read empty")
        let second = try loop.register(sockets[1], handler: Self.record, context: recorders[1].context)
        try send(2, to: 0)
        try send(3, to: 1)
        XCTAssertEqual(loop.receiveReady(), 2, "both, through epoll")
        XCTAssertTrue(loop.unregister(first))
        try send(4, to: 1)
        XCTAssertEqual(loop.receiveReady(), 1, "the second, alone now")
        XCTAssertTrue(loop.unregister(second))
        let calls = loop.statistics.receiveCalls
        try send(5, to: 1)
        XCTAssertEqual(loop.receiveReady(), 0, "an unregistered socket is not read")
        XCTAssertEqual(loop.statistics.receiveCalls, calls)
        XCTAssertEqual(recorders[0].seen.withLock { $0.map(\.sequence) }, [1, 2])
        XCTAssertEqual(recorders[1].seen.withLock { $0.map(\.sequence) }, [3, 4])
    }

    func testAPeriodThreadSeesNoArrivalAfterItsPeriodsTimeAndNoneBeforeItsPreviousLook() throws {
        let loop = try PacketReceiveLoop(capacity: 2)
        let (receivers, recorders) = try registeredReceivers(1, on: loop)
        let sender = try UDPSocket()
        let destination = sender.destination(try UDPAddress(host: "127.0.0.1", port: receivers[0].localPort))
        XCTAssertEqual(loop.receiveReady(), 0)  // the first look
        let firstLook = MonotonicClock().now().nanoseconds
        // Sent after the period began (its time is in the past): reported at the period's time.
        let periodTime = MonotonicClock().now()
        usleep(2_000)
        for sequence in 0..<3 { sender.send(datagram(sequence, bytes: 64), to: destination) }
        usleep(20_000)
        XCTAssertEqual(loop.receiveReady(notAfter: periodTime), 3)
        XCTAssertEqual(
            recorders[0].seen.withLock { $0.map(\.arrival) }, [periodTime.nanoseconds, periodTime.nanoseconds, periodTime.nanoseconds])
        // Without a bound, the kernel's times: after the first look, before now.
        for sequence in 3..<5 { sender.send(datagram(sequence, bytes: 64), to: destination) }
        usleep(20_000)
        XCTAssertEqual(loop.receiveReady(), 2)
        let arrivals = recorders[0].seen.withLock { $0.suffix(2).map(\.arrival) }
        XCTAssertTrue(arrivals.allSatisfy { $0 > firstLook && $0 <= MonotonicClock().now().nanoseconds }, "\(arrivals)")
    }

    func testOneReceiveReadyServesEveryReadySocketOf256() throws {
        let loop = try PacketReceiveLoop(capacity: 256)
        let (receivers, recorders) = try registeredReceivers(256, on: loop)
        let sender = try UDPSocket()
        var batch = UDPSendBatch(capacity: 256)
        for receiver in receivers {
            _ = batch.append(datagram(1, bytes: 100), to: sender.destination(try UDPAddress(host: "127.0.0.1", port: receiver.localPort)))
        }
        XCTAssertEqual(batch.send(from: sender).sent, 256)
        for receiver in receivers { XCTAssertTrue(receiver.waitUntilReadable(timeoutMilliseconds: 5_000)) }
        XCTAssertEqual(loop.receiveReady(), 256, "every socket in one call, none left for the next period")
        XCTAssertTrue(recorders.allSatisfy { $0.count == 1 })
    }

    /// Registers 8 sockets, lets a blaster thread flood them, unregisters them, 40 times; a handler call after
    /// its `unregister` returned is a violation.
    func unregisterUnderTraffic(_ loop: PacketReceiveLoop) throws {
        let sockets = try (0..<8).map { _ in try UDPSocket() }
        let sender = try UDPSocket()
        let destinations = try sockets.map { sender.destination(try UDPAddress(host: "127.0.0.1", port: $0.localPort)) }
        let flowing = Flag()
        let blaster = OSThread(name: "test-blaster") { [destinations] in
            let payload = datagram(9, bytes: 120)
            while flowing.raised.load(ordering: .relaxed) {
                for destination in destinations { sender.send(payload, to: destination) }
            }
        }
        var violations = 0
        var delivered = 0
        for round in 0..<40 {
            var recorders: [Recorder] = []
            var registrations: [PacketReceiveLoop.Registration] = []
            for (index, socket) in sockets.enumerated() {
                let recorder = Recorder(index: round * 100 + index)
                recorders.append(recorder)
                registrations.append(try loop.register(socket, handler: Self.record, context: recorder.context))
            }
            usleep(2_000)
            for (registration, recorder) in zip(registrations, recorders) {
                XCTAssertTrue(loop.unregister(registration))
                recorder.retired.store(true, ordering: .sequentiallyConsistent)
            }
            usleep(1_000)
            violations += recorders.reduce(0) { $0 + $1.violations.load(ordering: .relaxed) }
            delivered += recorders.reduce(0) { $0 + $1.count }
        }
        flowing.raised.store(false, ordering: .relaxed)
        blaster.join()
        XCTAssertEqual(violations, 0, "a handler ran after unregister returned")
        XCTAssertGreaterThan(delivered, 0, "traffic flowed while sockets came and went")
    }

    func testStartAndStopAreIdempotentAndALoopServesAgainAfterARestart() throws {
        let loop = try PacketReceiveLoop(capacity: 2)
        loop.stop()
        XCTAssertFalse(loop.isRunning)
        let receiver = try UDPSocket()
        let sender = try UDPSocket()
        let recorder = Recorder(index: 0)
        _ = try loop.register(receiver, handler: Self.record, context: recorder.context)
        loop.start()
        loop.start()
        XCTAssertTrue(loop.isRunning)
        let destination = sender.destination(try UDPAddress(host: "127.0.0.1", port: receiver.localPort))
        sender.send(datagram(1, bytes: 20), to: destination)
        waitUntil { recorder.count == 1 }
        loop.stop()
        loop.stop()
        XCTAssertFalse(loop.isRunning)
        sender.send(datagram(2, bytes: 20), to: destination)
        usleep(20_000)
        XCTAssertEqual(recorder.count, 1, "a stopped loop calls no handler")
        loop.start()
        waitUntil { recorder.count == 2 }
        XCTAssertEqual(recorder.seen.withLock { $0.map(\.sequence) }, [1, 2], "the datagram queued while stopped is served")
    }
}
