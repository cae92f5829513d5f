#if canImport(Glibc)
import Glibc
#endif
import TuttiCore
import TuttiIO
import XCTest

/// Batched UDP on loopback: `recvmmsg` bursts with kernel arrival times, truncation, `sendmmsg` fan-out,
/// connected sockets.
final class UDPBatchTests: XCTestCase {
    func testABurstOf200DatagramsArrivesCompleteInOrderAndKernelTimedInBatches() throws {
        let receiver = try UDPSocket()
        let sender = try UDPSocket()
        let destination = sender.destination(try UDPAddress(host: "127.0.0.1", port: receiver.localPort))
        let before = MonotonicClock().now()
        for sequence in 0..<200 { XCTAssertTrue(sender.send(datagram(sequence, bytes: 100), to: destination)) }
        var batch = UDPReceiveBatch(capacity: 32)
        var sequences: [Int] = []
        var arrivals: [HostTime] = []
        var batches = 0
        let deadline = MonotonicClock().now() + .seconds(5)
        while sequences.count < 200, MonotonicClock().now() < deadline {
            guard receiver.waitUntilReadable(timeoutMilliseconds: 100) else { continue }
            let received = batch.receive(from: receiver)
            if received > 0 { batches += 1 }
            let afterReceive = MonotonicClock().now()
            for index in 0..<received {
                XCTAssertFalse(batch.isTruncated(at: index))
                XCTAssertEqual(batch.length(at: index), 100)
                sequences.append(Int(batch.datagram(at: index).load(as: UInt32.self)))
                XCTAssertLessThanOrEqual(batch.arrival(at: index), afterReceive)
                arrivals.append(batch.arrival(at: index))
            }
        }
        XCTAssertEqual(sequences, Array(0..<200))
        XCTAssertGreaterThanOrEqual(batches, 7, "at most 32 datagrams per batch")
        XCTAssertLessThan(batches, 200, "datagrams come in batches, not one per call")
        XCTAssertEqual(batch.kernelTimestamped, 200, "loopback datagrams carry SO_TIMESTAMPNS")
        XCTAssertEqual(batch.userTimestamped, 0)
        for (earlier, later) in zip(arrivals, arrivals.dropFirst()) { XCTAssertLessThanOrEqual(earlier, later) }
        // Mapped from CLOCK_REALTIME: after the first send (within the mapping's error, far below 1 ms).
        XCTAssertGreaterThan(arrivals.first!, before + .milliseconds(-1))
        XCTAssertEqual(batch.source(at: 0).description.hasSuffix(":\(sender.localPort)"), true)
    }

    /// Also in a coalescing batch, whose 64 KiB slots take the long datagram whole: it is still longer than a
    /// datagram may be, so it is reported truncated and only its first `datagramCapacity` bytes are given.
    func testATruncatedDatagramIsReportedWithItsFullLengthBetweenIntactOnes() throws {
        for coalescing in [false, true] {
            let receiver = try UDPSocket()
            if coalescing { XCTAssertTrue(receiver.enableReceiveCoalescing()) }
            let sender = try UDPSocket()
            let destination = sender.destination(try UDPAddress(host: "127.0.0.1", port: receiver.localPort))
            sender.send(datagram(1, bytes: 64), to: destination)
            sender.send(datagram(2, bytes: 3_000), to: destination)
            sender.send(datagram(3, bytes: 64), to: destination)
            var batch = UDPReceiveBatch(capacity: 8, coalescing: coalescing)
            var seen: [(sequence: UInt32, length: Int, truncated: Bool, bytes: Int)] = []
            let deadline = MonotonicClock().now() + .seconds(5)
            while seen.count < 3, MonotonicClock().now() < deadline {
                guard receiver.waitUntilReadable(timeoutMilliseconds: 100) else { continue }
                for index in 0..<batch.receive(from: receiver) {
                    let bytes = batch.datagram(at: index)
                    seen.append((bytes.load(as: UInt32.self), batch.length(at: index), batch.isTruncated(at: index), bytes.count))
                }
            }
            let label = coalescing ? "coalescing" : "plain"
            XCTAssertEqual(seen.map(\.sequence), [1, 2, 3], label)
            XCTAssertEqual(seen.map(\.length), [64, 3_000, 64], label)
            XCTAssertEqual(seen.map(\.truncated), [false, true, false], label)
            XCTAssertEqual(seen.map(\.bytes), [64, StreamLimits.maxDatagramBytes, 64], label)
        }
    }

    /// A GSO send of nine datagrams (eight of 80 bytes and a last one of 30) reaches a socket with receive
    /// coalescing on as one merged message, which a coalescing batch cuts back into the nine datagrams, in
    /// order, each with its own bytes, all with the message's kernel arrival time and source.
    func testAMergedMessageIsCutBackIntoTheDatagramsThatWereSent() throws {
        let receiver = try UDPSocket()
        XCTAssertTrue(receiver.enableReceiveCoalescing(), "UDP_GRO (Linux 5.0 and later)")
        let sender = try UDPSocket()
        try sender.connect(to: sender.destination(try UDPAddress(host: "127.0.0.1", port: receiver.localPort)))
        var segment: Int32 = 80
        XCTAssertEqual(setsockopt(sender.descriptor, Int32(IPPROTO_UDP), 103 /* UDP_SEGMENT */, &segment, 4), 0)
        var payload: [UInt8] = []
        for sequence in 0..<8 { payload += datagram(UInt32(500 + sequence), bytes: 80) }
        payload += datagram(UInt32(508), bytes: 30)
        XCTAssertTrue(sender.send(payload), "one send, cut by the kernel into nine datagrams")
        var batch = UDPReceiveBatch(capacity: 4, coalescing: true)
        var seen: [(sequence: UInt32, bytes: Int)] = []
        var messages = 0
        let deadline = MonotonicClock().now() + .seconds(5)
        while seen.count < 9, MonotonicClock().now() < deadline {
            guard receiver.waitUntilReadable(timeoutMilliseconds: 100) else { continue }
            let received = batch.receive(from: receiver)
            messages += batch.messages
            for index in 0..<received {
                XCTAssertFalse(batch.isTruncated(at: index))
                XCTAssertEqual(batch.arrival(at: index), batch.arrival(at: 0))
                XCTAssertEqual(batch.source(at: index).description.hasSuffix(":\(sender.localPort)"), true)
                let bytes = batch.datagram(at: index)
                XCTAssertEqual(bytes.count, batch.length(at: index))
                XCTAssertTrue(bytes.dropFirst(4).allSatisfy { $0 == 0xA5 }, "datagram \(index)'s own bytes")
                seen.append((bytes.load(as: UInt32.self), bytes.count))
            }
        }
        XCTAssertEqual(seen.map(\.sequence), (500...508).map { UInt32($0) })
        XCTAssertEqual(seen.map(\.bytes), Array(repeating: 80, count: 8) + [30])
        XCTAssertEqual(messages, 1, "one merged message on loopback")
        XCTAssertEqual(batch.coalescedMessages, 1)
        XCTAssertEqual(batch.droppedSegments, 0)
        XCTAssertEqual(batch.kernelTimestamped, 9, "each datagram timed by its message's kernel timestamp")
    }

    func testAnEmptySocketGivesAnEmptyBatchWithoutBlocking() throws {
        let socket = try UDPSocket()
        var batch = UDPReceiveBatch(capacity: 4)
        XCTAssertEqual(batch.receive(from: socket), 0)
        XCTAssertEqual(batch.count, 0)
        XCTAssertEqual(batch.receiveErrors, 0)
    }

    func testOneSendmmsgFansAPeriodOutToSeveralDestinations() throws {
        let receivers = try (0..<4).map { _ in try UDPSocket() }
        let sender = try UDPSocket()
        var batch = UDPSendBatch(capacity: 8)
        for (index, receiver) in receivers.enumerated() {
            let destination = sender.destination(try UDPAddress(host: "127.0.0.1", port: receiver.localPort))
            XCTAssertEqual(batch.append(datagram(UInt32(index) + 10, bytes: 80), to: destination), index)
        }
        let outcome = batch.send(from: sender)
        XCTAssertEqual(outcome, UDPSendBatch.Outcome(sent: 4, failed: 0, systemCalls: 1))
        XCTAssertTrue((0..<4).allSatisfy { batch.wasSent(at: $0) })
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 8)
        defer { buffer.deallocate() }
        for (index, receiver) in receivers.enumerated() {
            XCTAssertEqual(receiver.receive(into: buffer, timeoutMilliseconds: 2000), 80)
            XCTAssertEqual(buffer.load(as: UInt32.self), UInt32(index) + 10)
        }
    }

    /// Datagrams of one size for one destination go out as one segmented (UDP GSO) message, and arrive as
    /// the same datagrams, in order; other sizes and destinations in the same `sendmmsg` as messages of
    /// their own.
    func testDatagramsOfOneSizeForOneDestinationGoOutSegmentedAndArriveUnchanged() throws {
        let first = try UDPSocket()
        let second = try UDPSocket()
        let sender = try UDPSocket()
        let toFirst = sender.destination(try UDPAddress(host: "127.0.0.1", port: first.localPort))
        let toSecond = sender.destination(try UDPAddress(host: "127.0.0.1", port: second.localPort))
        var batch = UDPSendBatch(capacity: 16)
        // first: 100…104 (80 bytes) and 200 (40 bytes); second: 300…302 (80 bytes), interleaved.
        let plan: [(UInt32, Int, UDPAddress)] = [
            (100, 80, toFirst), (300, 80, toSecond), (101, 80, toFirst), (200, 40, toFirst), (102, 80, toFirst),
            (301, 80, toSecond), (103, 80, toFirst), (302, 80, toSecond), (104, 80, toFirst),
        ]
        for (sequence, bytes, destination) in plan { _ = batch.append(datagram(sequence, bytes: bytes), to: destination) }
        let outcome = batch.send(from: sender)
        XCTAssertEqual(outcome, UDPSendBatch.Outcome(sent: 9, failed: 0, systemCalls: 1))
        XCTAssertEqual(batch.lastSegmentedMessages, 2, "first's five 80-byte datagrams, second's three")
        XCTAssertTrue(batch.segments)
        XCTAssertTrue((0..<9).allSatisfy { batch.wasSent(at: $0) })
        XCTAssertEqual(try receiveAll(first, count: 6).map(\.sequence), [100, 101, 102, 103, 104, 200])
        XCTAssertEqual(try receiveAll(first, count: 6).count, 0, "nothing more")
        let atSecond = try receiveAll(second, count: 3)
        XCTAssertEqual(atSecond.map(\.sequence), [300, 301, 302])
        XCTAssertEqual(atSecond.map(\.bytes), [80, 80, 80], "cut back into the datagrams that were sent")
    }

    /// When the kernel refuses a segmented send (here: a socket without UDP checksums, `SO_NO_CHECK`, on
    /// which Linux does not segment), the batch stops segmenting and sends each datagram on its own: nothing
    /// is lost, that time or after.
    func testARefusedSegmentedSendFallsBackToOneMessageADatagram() throws {
        let receiver = try UDPSocket()
        let sender = try UDPSocket()
        var noChecksum: Int32 = 1
        XCTAssertEqual(setsockopt(sender.descriptor, SOL_SOCKET, 11 /* SO_NO_CHECK */, &noChecksum, 4), 0)
        let destination = sender.destination(try UDPAddress(host: "127.0.0.1", port: receiver.localPort))
        var batch = UDPSendBatch(capacity: 8)
        for round in 0..<2 {
            batch.removeAll()
            for index in 0..<4 { _ = batch.append(datagram(UInt32(round * 10 + index), bytes: 64), to: destination) }
            let outcome = batch.send(from: sender)
            XCTAssertEqual(outcome.sent, 4, "round \(round)")
            XCTAssertEqual(outcome.failed, 0, "round \(round)")
            XCTAssertFalse(batch.segments)
            XCTAssertEqual(batch.segmentationRefusals, 1, "refused once; the second round does not try")
            XCTAssertEqual(batch.lastSegmentedMessages, 0)
            XCTAssertEqual(try receiveAll(receiver, count: 4).map(\.sequence), (0..<4).map { UInt32(round * 10 + $0) })
        }
    }

    func testARefusedMessageIsCountedAndTheRestOfTheBatchStillGoesOut() throws {
        // One message a datagram: one call up to the refusal, one that refuses, one for the rest. Segmented:
        // the two good datagrams are one message, sent by the first call; the second refuses the other.
        for (segments, calls) in [(false, 3), (true, 2)] {
            let receiver = try UDPSocket()
            let sender = try UDPSocket()
            let good = sender.destination(try UDPAddress(host: "127.0.0.1", port: receiver.localPort))
            let refused = sender.destination(try UDPAddress(host: "127.0.0.1", port: 0))  // EINVAL: no port 0
            var batch = UDPSendBatch(capacity: 4, segments: segments)
            _ = batch.append(datagram(1, bytes: 40), to: good)
            _ = batch.append(datagram(2, bytes: 40), to: refused)
            _ = batch.append(datagram(3, bytes: 40), to: good)
            let outcome = batch.send(from: sender)
            let label = segments ? "segmented" : "one message a datagram"
            XCTAssertEqual(outcome.sent, 2, label)
            XCTAssertEqual(outcome.failed, 1, label)
            XCTAssertEqual(outcome.systemCalls, calls, label)
            XCTAssertEqual(batch.segments, segments, "\(label): a refused destination is not a refused segmentation")
            XCTAssertEqual((0..<3).map { batch.wasSent(at: $0) }, [true, false, true], label)
            XCTAssertEqual(batch.sentCount(in: 0..<2), 1, "\(label): a connection's slots: one of its two went out")
            XCTAssertEqual(batch.sentCount(in: 2..<3), 1, label)
            XCTAssertEqual(try receiveAll(receiver, count: 2).map(\.sequence), [1, 3], label)
        }
    }

    func testAFullBatchOrAnOversizedDatagramIsRefusedAtAppend() throws {
        var batch = UDPSendBatch(capacity: 2)
        let destination = try UDPAddress(host: "127.0.0.1", port: 9)
        XCTAssertNil(batch.append(datagram(0, bytes: StreamLimits.maxDatagramBytes + 1), to: destination))
        XCTAssertEqual(batch.append(datagram(0, bytes: 10), to: destination), 0)
        XCTAssertEqual(batch.append(datagram(1, bytes: 10), to: destination), 1)
        XCTAssertNil(batch.append(datagram(2, bytes: 10), to: destination))
        batch.removeAll()
        XCTAssertEqual(batch.append(datagram(3, bytes: 10), to: destination), 0)
    }

    func testAConnectedSocketSendsWithoutADestinationAloneAndInBatches() throws {
        let receiver = try UDPSocket()
        let sender = try UDPSocket()
        try sender.connect(to: sender.destination(try UDPAddress(host: "127.0.0.1", port: receiver.localPort)))
        XCTAssertTrue(sender.send(datagram(7, bytes: 30)))
        var batch = UDPSendBatch(capacity: 2)
        _ = batch.append(datagram(8, bytes: 30), to: nil)
        _ = batch.append(datagram(9, bytes: 30), to: nil)
        XCTAssertEqual(batch.send(from: sender).sent, 2)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 8)
        defer { buffer.deallocate() }
        for expected: UInt32 in [7, 8, 9] {
            XCTAssertEqual(receiver.receive(into: buffer, timeoutMilliseconds: 2000), 30)
            XCTAssertEqual(buffer.load(as: UInt32.self), expected)
        }
    }

    func testTheRealtimeOffsetMapsTheWallClockOntoTheMonotonicClock() {
        var offset = RealtimeClockOffset(refreshInterval: .milliseconds(100))
        let monotonic = MonotonicClock().now().nanoseconds
        let mapped = offset.monotonic(fromRealtime: WallClock.nanoseconds())
        XCTAssertLessThan(abs(mapped - monotonic), 1_000_000, "within 1 ms of a monotonic read beside it")
        let sampled = offset.sampledAt
        offset.refreshIfDue(monotonicNow: sampled + 1)
        XCTAssertEqual(offset.sampledAt, sampled, "not due yet")
        offset.refreshIfDue(monotonicNow: sampled + 200_000_000)
        XCTAssertNotEqual(offset.sampledAt, sampled, "due after the interval")
    }
}

/// Up to `count` datagrams that arrive at `socket` within 0.5 s each: their first 4 bytes and length.
func receiveAll(_ socket: UDPSocket, count: Int) throws -> [(sequence: UInt32, bytes: Int)] {
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 8)
    defer { buffer.deallocate() }
    var received: [(sequence: UInt32, bytes: Int)] = []
    while received.count < count, let bytes = socket.receive(into: buffer, timeoutMilliseconds: 500), bytes > 0 {
        received.append((buffer.load(as: UInt32.self), bytes))
    }
    return received
}

/// A datagram of `bytes` bytes starting with `sequence` (native order), the rest 0xA5.
func datagram(_ sequence: some BinaryInteger, bytes: Int) -> [UInt8] {
    var datagram = [UInt8](repeating: 0xA5, count: bytes)
    withUnsafeBytes(of: UInt32(sequence)) { datagram.replaceSubrange(0..<4, with: $0) }
    return datagram
}

extension UDPSocket {
    @discardableResult
    func send(_ datagram: [UInt8], to destination: UDPAddress) -> Bool {
        datagram.withUnsafeBytes { send($0, to: destination) }
    }

    @discardableResult
    func send(_ datagram: [UInt8]) -> Bool { datagram.withUnsafeBytes { send($0) } }
}

extension UDPSendBatch {
    mutating func append(_ datagram: [UInt8], to destination: UDPAddress?) -> Int? {
        datagram.withUnsafeBytes { append($0, to: destination) }
    }
}
