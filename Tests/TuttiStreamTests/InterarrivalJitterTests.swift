import TuttiStream
import XCTest

/// RFC 3550 §6.4.1 interarrival jitter against values computed by hand.
final class InterarrivalJitterTests: XCTestCase {
    func testHandComputedExample() {
        // Timestamps 160 apart (20 ms at 8 kHz); arrivals 0, 170, 330, 470 (in timestamp units).
        // Transit: 0, 10, 10, −10 → |D| = 10, 0, 20.
        // J1 = 0 + (10 − 0)/16 = 0.625
        // J2 = 0.625 + (0 − 0.625)/16 = 0.5859375
        // J3 = 0.5859375 + (20 − 0.5859375)/16 = 1.79931640625
        var jitter = InterarrivalJitter()
        jitter.update(arrivalFrames: 0, timestamp: 0)
        XCTAssertEqual(jitter.frames, 0)
        jitter.update(arrivalFrames: 170, timestamp: 160)
        XCTAssertEqual(jitter.frames, 0.625)
        jitter.update(arrivalFrames: 330, timestamp: 320)
        XCTAssertEqual(jitter.frames, 0.5859375)
        jitter.update(arrivalFrames: 470, timestamp: 480)
        XCTAssertEqual(jitter.frames, 1.79931640625)
    }

    func testConstantTransitHasNoJitterWhateverTheOffset() {
        var jitter = InterarrivalJitter()
        for index in 0..<1_000 {
            jitter.update(arrivalFrames: 123_456.5 + Double(index * 64), timestamp: Int64(4_294_967_000 + index * 64))
        }
        XCTAssertEqual(jitter.frames, 0)
    }

    func testAlternatingDelayConvergesToTheDelayChange() {
        // Transit alternates between 0 and 8: |D| is always 8, so J → 8 (J_n = 8 (1 − (15/16)^n)).
        var jitter = InterarrivalJitter()
        for index in 0..<400 {
            jitter.update(arrivalFrames: Double(index * 100 + (index % 2) * 8), timestamp: Int64(index * 100))
        }
        XCTAssertEqual(jitter.frames, 8 * (1 - pow(15.0 / 16.0, 399)), accuracy: 1e-9)
        XCTAssertEqual(jitter.frames, 8, accuracy: 1e-9)
    }

    func testResetForgetsHistory() {
        var jitter = InterarrivalJitter()
        jitter.update(arrivalFrames: 0, timestamp: 0)
        jitter.update(arrivalFrames: 1_000, timestamp: 0)
        XCTAssertEqual(jitter.frames, 62.5)
        jitter.reset()
        XCTAssertEqual(jitter.frames, 0)
        // The first packet after a reset only sets the reference transit.
        jitter.update(arrivalFrames: 5_000, timestamp: 0)
        XCTAssertEqual(jitter.frames, 0)
        jitter.update(arrivalFrames: 5_016, timestamp: 0)
        XCTAssertEqual(jitter.frames, 1)
    }
}
