import Foundation
import TuttiStream
import XCTest

/// The single-producer, single-consumer sample queue between the device thread and file/pipe threads.
final class SampleRingTests: XCTestCase {
    private func write(_ ring: SampleRing, _ values: [Float]) -> Int {
        values.withUnsafeBufferPointer { ring.write($0) }
    }

    private func read(_ ring: SampleRing, count: Int) -> [Float] {
        var out = [Float](repeating: .nan, count: count)
        let got = out.withUnsafeMutableBufferPointer { ring.read(into: $0) }
        return Array(out.prefix(got))
    }

    func testCapacityIsRoundedUpToAPowerOfTwo() {
        XCTAssertEqual(SampleRing(capacity: 100).capacity, 128)
        XCTAssertEqual(SampleRing(capacity: 128).capacity, 128)
        XCTAssertEqual(SampleRing(capacity: 0).capacity, 2)
    }

    func testFIFOOrderAndAvailable() {
        let ring = SampleRing(capacity: 16)
        XCTAssertEqual(read(ring, count: 4), [])
        XCTAssertEqual(write(ring, [1, 2, 3]), 3)
        XCTAssertEqual(write(ring, [4, 5]), 2)
        XCTAssertEqual(ring.available, 5)
        XCTAssertEqual(read(ring, count: 2), [1, 2])
        XCTAssertEqual(ring.available, 3)
        XCTAssertEqual(read(ring, count: 10), [3, 4, 5])
        XCTAssertEqual(ring.available, 0)
        XCTAssertEqual(ring.dropped, 0)
    }

    func testFullRingRefusesTheExcessAndCountsIt() {
        let ring = SampleRing(capacity: 8)
        XCTAssertEqual(write(ring, [1, 2, 3, 4, 5, 6]), 6)
        XCTAssertEqual(write(ring, [7, 8, 9, 10, 11]), 2)
        XCTAssertEqual(ring.dropped, 3)
        XCTAssertEqual(write(ring, [12]), 0)
        XCTAssertEqual(ring.dropped, 4)
        XCTAssertEqual(ring.available, 8)
        XCTAssertEqual(read(ring, count: 8), [1, 2, 3, 4, 5, 6, 7, 8])
        XCTAssertEqual(write(ring, [13]), 1)
        XCTAssertEqual(read(ring, count: 8), [13])
    }

    func testWrapAroundOverManyCycles() {
        let ring = SampleRing(capacity: 32)
        var next: Float = 0
        var expected: Float = 0
        var mismatches = 0
        for cycle in 0..<20_000 {
            let batch = (0..<(cycle % 13 + 1)).map { Float($0) + next }
            let accepted = write(ring, batch)
            next += Float(accepted)
            for value in read(ring, count: (cycle * 7) % 17) {
                if value != expected { mismatches += 1 }
                expected += 1
            }
        }
        for value in read(ring, count: 64) {
            if value != expected { mismatches += 1 }
            expected += 1
        }
        XCTAssertEqual(mismatches, 0)
        XCTAssertEqual(expected, next)
        XCTAssertGreaterThan(next, 32 * 1_000)
        XCTAssertGreaterThan(ring.dropped, 0)
        XCTAssertEqual(ring.available, 0)
    }

    func testProducerAndConsumerThreadsSeeEverySampleInOrder() {
        let ring = SampleRing(capacity: 64)
        let total = 200_000
        let producer = Thread {
            var next = 0
            while next < total {
                let batch = (0..<min(37, total - next)).map { Float(next + $0) }
                let written = batch.withUnsafeBufferPointer { ring.write($0) }
                next += written
                if written < batch.count { sched_yield() }
            }
        }
        producer.start()
        var expected = 0
        var mismatches = 0
        var buffer = [Float](repeating: 0, count: 29)
        while expected < total {
            let got = buffer.withUnsafeMutableBufferPointer { ring.read(into: $0) }
            for value in buffer.prefix(got) {
                if value != Float(expected) { mismatches += 1 }
                expected += 1
            }
            if got == 0 { sched_yield() }
        }
        XCTAssertEqual(mismatches, 0)
        // The producer retried its refused samples, but each refusal was counted.
        XCTAssertEqual(expected, total)
    }
}
