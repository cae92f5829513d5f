import Foundation
import TuttiCore
import TuttiStream
import XCTest

/// The single-producer, single-consumer packet queue between the network and device threads.
final class PacketRingTests: XCTestCase {
    private static func entry(_ sequence: Int) -> PacketRing.Entry {
        PacketRing.Entry(
            sequenceNumber: UInt16(truncatingIfNeeded: sequence), timestamp: UInt32(truncatingIfNeeded: sequence * 64),
            captureTime: sequence % 3 == 0 ? nil : Int64(sequence) * 1_000, arrival: HostTime(nanoseconds: Int64(sequence)),
            payloadCount: 9_999)
    }

    private static func payload(_ sequence: Int) -> [UInt8] {
        (0..<(sequence % 17 + 1)).map { UInt8(truncatingIfNeeded: sequence &+ $0) }
    }

    @discardableResult
    private static func push(_ ring: PacketRing, _ sequence: Int) -> Bool {
        Self.payload(sequence).withUnsafeBytes { ring.push(Self.entry(sequence), payload: $0) }
    }

    private func popChecking(_ ring: PacketRing, expect sequence: Int, file: StaticString = #filePath, line: UInt = #line) {
        let popped = ring.pop { entry, bytes in
            XCTAssertEqual(entry.sequenceNumber, UInt16(truncatingIfNeeded: sequence), file: file, line: line)
            XCTAssertEqual(entry.timestamp, UInt32(truncatingIfNeeded: sequence * 64), file: file, line: line)
            XCTAssertEqual(entry.captureTime, sequence % 3 == 0 ? nil : Int64(sequence) * 1_000, file: file, line: line)
            XCTAssertEqual(entry.arrival, HostTime(nanoseconds: Int64(sequence)), file: file, line: line)
            XCTAssertEqual(entry.payloadCount, Self.payload(sequence).count, "the ring records the real size", file: file, line: line)
            XCTAssertEqual(Array(bytes), Self.payload(sequence), file: file, line: line)
        }
        XCTAssertTrue(popped, file: file, line: line)
    }

    func testCapacityIsRoundedUpToAPowerOfTwo() {
        XCTAssertEqual(PacketRing(capacity: 5, maxPayloadBytes: 4).capacity, 8)
        XCTAssertEqual(PacketRing(capacity: 64, maxPayloadBytes: 4).capacity, 64)
        XCTAssertEqual(PacketRing(capacity: 1, maxPayloadBytes: 4).capacity, 2)
    }

    func testFIFOOrder() {
        let ring = PacketRing(capacity: 8, maxPayloadBytes: 32)
        XCTAssertFalse(ring.pop { _, _ in XCTFail("empty ring produced a packet") })
        for sequence in 0..<5 { XCTAssertTrue(Self.push(ring, sequence)) }
        for sequence in 0..<5 { popChecking(ring, expect: sequence) }
        XCTAssertFalse(ring.pop { _, _ in XCTFail("empty ring produced a packet") })
        XCTAssertEqual(ring.overflows, 0)
    }

    func testFullRingRefusesAndCounts() {
        let ring = PacketRing(capacity: 4, maxPayloadBytes: 32)
        for sequence in 0..<4 { XCTAssertTrue(Self.push(ring, sequence)) }
        XCTAssertFalse(Self.push(ring, 4))
        XCTAssertFalse(Self.push(ring, 5))
        XCTAssertEqual(ring.overflows, 2)
        // The refused packets left no trace; after one pop there is room for exactly one more.
        popChecking(ring, expect: 0)
        XCTAssertTrue(Self.push(ring, 6))
        XCTAssertFalse(Self.push(ring, 7))
        XCTAssertEqual(ring.overflows, 3)
        for sequence in [1, 2, 3, 6] { popChecking(ring, expect: sequence) }
        XCTAssertFalse(ring.pop { _, _ in })
    }

    func testOversizePayloadIsRefusedAndCounted() {
        let ring = PacketRing(capacity: 4, maxPayloadBytes: 8)
        let big = [UInt8](repeating: 1, count: 9)
        XCTAssertFalse(big.withUnsafeBytes { ring.push(Self.entry(1), payload: $0) })
        XCTAssertEqual(ring.overflows, 1)
        XCTAssertFalse(ring.pop { _, _ in })
        let exact = [UInt8](repeating: 7, count: 8)
        XCTAssertTrue(exact.withUnsafeBytes { ring.push(Self.entry(1), payload: $0) })
        XCTAssertTrue(ring.pop { _, bytes in XCTAssertEqual(Array(bytes), exact) })
        // An empty payload is allowed.
        XCTAssertTrue([UInt8]().withUnsafeBytes { ring.push(Self.entry(2), payload: $0) })
        XCTAssertTrue(
            ring.pop { entry, bytes in
                XCTAssertEqual(entry.payloadCount, 0)
                XCTAssertEqual(bytes.count, 0)
            })
    }

    func testWrapAroundOverManyCycles() {
        let ring = PacketRing(capacity: 8, maxPayloadBytes: 32)
        var next = 0
        var expected = 0
        // Uneven batches so the indices wrap at every offset, thousands of times.
        for cycle in 0..<5_000 {
            let pushes = cycle % 7 + 1
            for _ in 0..<pushes where Self.push(ring, next) { next += 1 }
            let pops = (cycle * 5) % 9
            for _ in 0..<pops where expected < next {
                popChecking(ring, expect: expected)
                expected += 1
            }
        }
        while expected < next {
            popChecking(ring, expect: expected)
            expected += 1
        }
        XCTAssertGreaterThan(next, 8 * 1_000)
        XCTAssertFalse(ring.pop { _, _ in })
    }

    func testProducerAndConsumerThreadsSeeEveryPacketInOrder() {
        let ring = PacketRing(capacity: 16, maxPayloadBytes: 32)
        let total = 50_000
        let producer = Thread {
            var sequence = 0
            while sequence < total {
                if Self.push(ring, sequence) { sequence += 1 } else { sched_yield() }
            }
        }
        producer.start()
        var expected = 0
        var outOfOrder = 0
        while expected < total {
            let popped = ring.pop { entry, bytes in
                if entry.sequenceNumber != UInt16(truncatingIfNeeded: expected) || Array(bytes) != Self.payload(expected) {
                    outOfOrder += 1
                }
            }
            if popped { expected += 1 } else { sched_yield() }
        }
        XCTAssertEqual(outOfOrder, 0)
        XCTAssertEqual(expected, total)
    }
}
