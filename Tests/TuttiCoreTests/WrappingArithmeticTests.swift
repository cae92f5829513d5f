import TuttiCore
import TuttiTesting
import XCTest

/// Wrap-aware distances and the counter extender that follows RTP sequence numbers and timestamps.
final class WrappingArithmeticTests: XCTestCase {
    func testUInt16DistanceAcrossWrap() {
        XCTAssertEqual(UInt16(0xFFFF).wrappingDistance(to: 0), 1)
        XCTAssertEqual(UInt16(0).wrappingDistance(to: 0xFFFF), -1)
        XCTAssertEqual(UInt16(0xFFF0).wrappingDistance(to: 0x0010), 32)
        XCTAssertEqual(UInt16(5).wrappingDistance(to: 5), 0)
        XCTAssertEqual(UInt16(0).wrappingDistance(to: 0x7FFF), 32_767)
        XCTAssertEqual(UInt16(0).wrappingDistance(to: 0x8000), -32_768)
    }

    func testUInt16DistanceMatchesReferenceForEveryPairInASample() {
        var generator = SeededGenerator(seed: 16)
        for _ in 0..<20_000 {
            let a = UInt16.random(in: .min ... .max, using: &generator)
            let b = UInt16.random(in: .min ... .max, using: &generator)
            var reference = (Int(b) - Int(a)) % 65_536
            if reference >= 32_768 { reference -= 65_536 } else if reference < -32_768 { reference += 65_536 }
            XCTAssertEqual(a.wrappingDistance(to: b), reference)
            if reference != -32_768 { XCTAssertEqual(b.wrappingDistance(to: a), -reference) }
        }
    }

    func testUInt32DistanceAcrossWrap() {
        XCTAssertEqual(UInt32.max.wrappingDistance(to: 0), 1)
        XCTAssertEqual(UInt32(0).wrappingDistance(to: .max), -1)
        XCTAssertEqual(UInt32(0xFFFF_FF00).wrappingDistance(to: 0x100), 512)
        XCTAssertEqual(UInt32(0).wrappingDistance(to: 0x7FFF_FFFF), 2_147_483_647)
        XCTAssertEqual(UInt32(0).wrappingDistance(to: 0x8000_0000), -2_147_483_648)
        var generator = SeededGenerator(seed: 32)
        for _ in 0..<20_000 {
            let a = UInt32.random(in: .min ... .max, using: &generator)
            let step = Int64.random(in: -2_147_483_647...2_147_483_647, using: &generator)
            let b = UInt32(truncatingIfNeeded: Int64(a) + step)
            XCTAssertEqual(a.wrappingDistance(to: b), step)
        }
    }

    func testUInt8ExtenderFollowsEveryStartAndStepOverManyWraps() {
        // Exhaustive over a small domain: every start value, every forward step below half the range, each run
        // long enough to wrap at least twice, and after every step a look back by 1, 17 and 128 (half the range).
        var mismatches = 0
        var runs = 0
        for start in 0...255 {
            for step in 1...127 {
                var extender = CounterExtender<UInt8>()
                var truth = Int64(start)
                if extender.extend(UInt8(start)) != truth { mismatches += 1 }
                for _ in 0..<(3 * 256 / step + 2) {
                    truth += Int64(step)
                    if extender.extend(UInt8(truncatingIfNeeded: truth)) != truth { mismatches += 1 }
                    for back: Int64 in [1, 17, 128] {
                        let older = truth - back
                        if extender.peek(UInt8(truncatingIfNeeded: older)) != older { mismatches += 1 }
                    }
                    // Extending an older value returns it but keeps the newest as the reference.
                    if extender.extend(UInt8(truncatingIfNeeded: truth - 5)) != truth - 5 { mismatches += 1 }
                }
                if truth - Int64(start) >= 512 { runs += 1 }
            }
        }
        XCTAssertEqual(mismatches, 0)
        XCTAssertEqual(runs, 256 * 127, "every run must cross the wrap at least twice")
    }

    func testUInt16ExtenderToleratesSmallBackwardSteps() {
        // Forward by `step`, then look back by up to `back`: a late packet is placed before the newest one and
        // does not move the reference.
        var generator = SeededGenerator(seed: 0xC0C0)
        for start: UInt16 in [0, 1, 0x7FFF, 0x8000, 0xFFF0, 0xFFFF] {
            var extender = CounterExtender<UInt16>()
            var truth = Int64(start)
            XCTAssertEqual(extender.extend(start), truth)
            for _ in 0..<3_000 {
                truth += Int64.random(in: 1...100, using: &generator)
                XCTAssertEqual(extender.extend(UInt16(truncatingIfNeeded: truth)), truth)
                let back = Int64.random(in: 0...200, using: &generator)
                let older = truth - back
                XCTAssertEqual(extender.peek(UInt16(truncatingIfNeeded: older)), older)
                XCTAssertEqual(extender.extend(UInt16(truncatingIfNeeded: older)), older)
                // The reference stayed at the newest value: the next forward value still extends right.
                XCTAssertEqual(extender.peek(UInt16(truncatingIfNeeded: truth + 1)), truth + 1)
            }
            XCTAssertGreaterThan(truth - Int64(start), 65_536 * 2, "must cross the wrap at least twice")
        }
    }

    func testExtenderGoesBelowZeroForValuesBeforeTheFirst() {
        var extender = CounterExtender<UInt16>()
        XCTAssertEqual(extender.extend(0), 0)
        XCTAssertEqual(extender.extend(0xFFFF), -1)
        XCTAssertEqual(extender.extend(0xFFF0), -16)
        XCTAssertEqual(extender.extend(1), 1)
        XCTAssertEqual(extender.extend(0xFFFF), -1)
    }

    func testExtenderHalfRangeBoundary() {
        var extender = CounterExtender<UInt16>()
        _ = extender.extend(0)
        // Exactly half the range ahead is ambiguous and placed behind; one less is ahead.
        XCTAssertEqual(extender.peek(0x7FFF), 32_767)
        XCTAssertEqual(extender.peek(0x8000), -32_768)
    }

    func testUInt32ExtenderFollowsTimestampsAcrossWraps() {
        var extender = CounterExtender<UInt32>()
        var truth: Int64 = 0xFFFF_FF00
        XCTAssertEqual(extender.extend(UInt32(truth)), truth)
        var generator = SeededGenerator(seed: 0x7157)
        // Large steps (up to 2^30) cross the 32-bit wrap many times.
        for _ in 0..<10_000 {
            truth += Int64.random(in: 1...(1 << 30), using: &generator)
            XCTAssertEqual(extender.extend(UInt32(truncatingIfNeeded: truth)), truth)
            let older = truth - Int64.random(in: 0...64, using: &generator)
            XCTAssertEqual(extender.peek(UInt32(truncatingIfNeeded: older)), older)
        }
        XCTAssertGreaterThan(truth, Int64(1) << 40)
    }

    func testPeekBeforeFirstValueIsTheRawValue() {
        let extender = CounterExtender<UInt32>()
        XCTAssertEqual(extender.peek(0xFFFF_FFFF), 0xFFFF_FFFF)
    }
}
