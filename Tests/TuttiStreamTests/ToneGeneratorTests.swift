import Foundation
import TuttiStream
import XCTest

/// The test-tone source: frequency, level, channels and phase continuity.
final class ToneGeneratorTests: XCTestCase {
    private func render(_ generator: inout ToneGenerator, frames: Int, channels: Int) -> [Float] {
        var out = [Float](repeating: .nan, count: frames * channels)
        out.withUnsafeMutableBufferPointer { generator.render(into: $0, frames: frames, channels: channels) }
        return out
    }

    func testFrequencyFromZeroCrossings() {
        for (frequency, rate) in [(1_000.0, 48_000), (440.0, 44_100), (997.0, 96_000)] {
            var generator = ToneGenerator(frequency: frequency, amplitude: 0.5, sampleRate: rate)
            let samples = render(&generator, frames: rate * 2, channels: 1)
            // Positive-going crossings, interpolated.
            var crossings: [Double] = []
            for index in 1..<samples.count where samples[index - 1] < 0 && samples[index] >= 0 {
                let previous = Double(samples[index - 1])
                let current = Double(samples[index])
                crossings.append(Double(index - 1) + -previous / (current - previous))
            }
            XCTAssertEqual(crossings.count, Int(frequency * 2) - 1, accuracy: 1, "\(frequency) Hz")
            let measured = Double(crossings.count - 1) * Double(rate) / (crossings.last! - crossings.first!)
            XCTAssertEqual(measured, frequency, accuracy: 0.01, "\(frequency) Hz at \(rate)")
        }
    }

    func testLevelAndStartingPhase() {
        var generator = ToneGenerator(frequency: 1_000, amplitude: 0.25, sampleRate: 48_000)
        let samples = render(&generator, frames: 4_800, channels: 1)
        XCTAssertEqual(samples[0], 0)  // starts at phase 0
        XCTAssertEqual(samples[12], 0.25, accuracy: 1e-6)  // a quarter period later
        XCTAssertEqual(samples.map { abs($0) }.max()!, 0.25, accuracy: 1e-6)
        let rms = (samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(samples.count)).squareRoot()
        XCTAssertEqual(rms, 0.25 / 2.0.squareRoot(), accuracy: 1e-4)
    }

    func testEveryChannelCarriesTheSameSample() {
        var generator = ToneGenerator(frequency: 440, amplitude: 0.8, sampleRate: 44_100)
        let samples = render(&generator, frames: 1_000, channels: 3)
        for frame in 0..<1_000 {
            XCTAssertEqual(samples[frame * 3], samples[frame * 3 + 1])
            XCTAssertEqual(samples[frame * 3], samples[frame * 3 + 2])
        }
    }

    func testPhaseIsContinuousAcrossPeriods() {
        var whole = ToneGenerator(frequency: 1_000, amplitude: 0.5, sampleRate: 48_000)
        let reference = render(&whole, frames: 48_000, channels: 1)
        var chunked = ToneGenerator(frequency: 1_000, amplitude: 0.5, sampleRate: 48_000)
        var pieces: [Float] = []
        let sizes = [1, 47, 64, 100, 333]
        var index = 0
        while pieces.count < 48_000 {
            let count = min(sizes[index % sizes.count], 48_000 - pieces.count)
            pieces += render(&chunked, frames: count, channels: 1)
            index += 1
        }
        // The same samples, within a Float's rounding (each render starts its phasor from the phase).
        XCTAssertEqual(pieces.count, reference.count)
        let worst = zip(pieces, reference).map { abs($0 - $1) }.max()!
        XCTAssertLessThan(worst, 1e-7, "largest difference \(worst)")
    }

    func testLongRunsDoNotDrift() {
        // After 100 s (4.8 M frames) the phase is where a freshly computed sine says.
        var generator = ToneGenerator(frequency: 1_000, amplitude: 1, sampleRate: 48_000)
        var buffer = [Float](repeating: 0, count: 48_000)
        for _ in 0..<100 {
            buffer.withUnsafeMutableBufferPointer { generator.render(into: $0, frames: 48_000, channels: 1) }
        }
        let next = render(&generator, frames: 48, channels: 1)
        for (offset, sample) in next.enumerated() {
            XCTAssertEqual(Double(sample), sin(2 * Double.pi * Double(offset) / 48), accuracy: 1e-6)
        }
    }

    /// The rotating phasor stays on the sine, sample for sample, over a long render and across renders:
    /// within a Float's rounding of the exact value.
    func testEverySampleIsTheExactSineWithinFloatRounding() {
        var generator = ToneGenerator(frequency: 997, amplitude: 0.9, sampleRate: 48_000)
        var samples = render(&generator, frames: 96_000, channels: 1)
        for _ in 0..<1_000 { samples += render(&generator, frames: 64, channels: 1) }
        let step = 2 * Double.pi * 997 / 48_000
        var worst = 0.0
        for (index, sample) in samples.enumerated() {
            let exact = 0.9 * sin(step * Double(index))
            worst = max(worst, abs(Double(sample) - exact))
        }
        XCTAssertLessThan(worst, 1e-7, "worst error \(worst)")
    }
}
