import TuttiStream
import XCTest

/// The drift controller against an ideal buffer: each period the level rises by what the sender produced,
/// 64 × (1 + drift) frames, and falls by what the receiver consumed, 64 × correction. No packets, no jitter:
/// the loop's own dynamics (step response, damping, clamping).
final class DriftControllerTests: XCTestCase {
    let configuration = DriftController.Configuration(sampleRate: 48_000, periodFrames: 64)
    let periodsPerSecond = 750

    struct Trace {
        var levelError: [Double] = []
        var estimatePPM: [Double] = []
        var correction: [Double] = []
    }

    /// Runs the loop for `seconds`, with the drift given per period, from a level `initialError` above target.
    func run(
        _ controller: inout DriftController, seconds: Int, initialError: Double = 0, drift: (Int) -> Double
    ) -> Trace {
        var trace = Trace()
        var level = 240 + initialError
        var correction = controller.correction
        for period in 0..<(seconds * periodsPerSecond) {
            level += 64 * (1 + drift(period) * 1e-6) - 64 * correction
            correction = controller.update(level: level, target: 240)
            trace.levelError.append(level - 240)
            trace.estimatePPM.append(controller.driftEstimatePPM)
            trace.correction.append(correction)
        }
        return trace
    }

    /// A sudden ±200 ppm drift: the level moves by at most 20 frames and comes back without undershoot; the
    /// estimate rises to the drift without overshoot, within 2 % after 20 s and 1 ppm after 30 s.
    func testConstantDriftSettlesWithoutOvershoot() {
        for drift in [200.0, -200.0] {
            var controller = DriftController(configuration)
            let trace = run(&controller, seconds: 60) { _ in drift }
            let sign = drift > 0 ? 1.0 : -1.0
            let deviations = trace.levelError.map { $0 * sign }
            let peak = deviations.indices.max { deviations[$0] < deviations[$1] }!
            print(
                "drift \(drift) ppm: level peak \(deviations[peak]) frames at \(Double(peak) / 750) s; estimate "
                    + "\(trace.estimatePPM[20 * 750 - 1]) at 20 s, \(trace.estimatePPM[30 * 750 - 1]) at 30 s")
            XCTAssertLessThan(deviations[peak], 20)
            XCTAssertGreaterThan(deviations[peak...].min()!, -0.5, "level undershoot")
            XCTAssertLessThanOrEqual(
                trace.estimatePPM.map { $0 * sign }.max()!, abs(drift) * 1.005, "estimate overshoot")
            XCTAssertEqual(trace.estimatePPM[20 * 750 - 1], drift, accuracy: 4)
            XCTAssertEqual(trace.estimatePPM[30 * 750 - 1], drift, accuracy: 1)
            XCTAssertEqual(trace.correction.last!, 1 + drift * 1e-6, accuracy: 1e-8)
        }
    }

    /// No drift, the level 100 frames above target: it comes back without oscillating. A PI loop must undershoot
    /// once (the integral gathered while draining the excess has to be given back), here by about a third of the
    /// offset; then it returns to target without crossing again: within 2 frames after 30 s, the estimate back at 0.
    func testLevelErrorDecaysWithoutOscillation() {
        var controller = DriftController(configuration)
        let trace = run(&controller, seconds: 60, initialError: 100) { _ in 0 }
        var signChanges = 0
        for (previous, next) in zip(trace.levelError, trace.levelError.dropFirst()) where (previous > 0) != (next > 0) {
            signChanges += 1
        }
        print("level step +100: sign changes \(signChanges), undershoot \(trace.levelError.min()!) frames")
        XCTAssertLessThanOrEqual(signChanges, 1)
        XCTAssertGreaterThan(trace.levelError.min()!, -40)
        XCTAssertLessThan(abs(trace.levelError[30 * 750]), 2)
        XCTAssertEqual(controller.driftEstimatePPM, 0, accuracy: 0.5)
    }

    /// A drift beyond the range (3000 ppm for 10 s): the correction stops at +1000 ppm and the integral at
    /// 1000 ppm, no further. When the drift stops, the excess drains at the full correction and the loop settles
    /// without winding back: the level is within a packet of target after 60 s and never a packet below, and the
    /// estimate returns to 0.
    func testCorrectionIsClampedAndDoesNotWindUp() {
        var controller = DriftController(configuration)
        let trace = run(&controller, seconds: 180) { $0 < 10 * 750 ? 3_000 : 0 }
        XCTAssertEqual(trace.correction[10 * 750 - 1], 1.001, accuracy: 1e-12)
        XCTAssertLessThanOrEqual(trace.estimatePPM.map(abs).max()!, 1_000 + 1e-9)
        XCTAssertLessThanOrEqual(trace.correction.map { abs($0 - 1) }.max()!, 1e-3 + 1e-12)
        let levelAtSwitch = trace.levelError[10 * 750 - 1]
        print(
            "clamped: level \(levelAtSwitch) frames above target after 10 s at 3000 ppm; at 60 s "
                + "\(trace.levelError[60 * 750]), lowest after \(trace.levelError[(10 * 750)...].min()!)")
        XCTAssertGreaterThan(levelAtSwitch, 900)
        XCTAssertLessThan(abs(trace.levelError[60 * 750]), 64)
        XCTAssertGreaterThan(trace.levelError[(10 * 750)...].min()!, -64)
        XCTAssertEqual(trace.estimatePPM.last!, 0, accuracy: 1)
    }

    /// Same inputs, same outputs; and `reset` starts again from the given drift.
    func testDeterministicAndReset() {
        var first = DriftController(configuration)
        var second = DriftController(configuration)
        for period in 0..<5_000 {
            let level = 240 + 40 * Double((period * 7919) % 13) / 13
            XCTAssertEqual(first.update(level: level, target: 240), second.update(level: level, target: 240))
        }
        XCTAssertEqual(first, second)
        first.reset(driftPPM: 150)
        XCTAssertEqual(first.correction, 1.00015, accuracy: 1e-15)
        XCTAssertEqual(first.filteredError, 0)
        let preset = DriftController(configuration, initialDriftPPM: 5_000)
        XCTAssertEqual(preset.driftEstimatePPM, 1_000, accuracy: 1e-9)
    }
}
