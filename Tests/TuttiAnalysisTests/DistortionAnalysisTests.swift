import Foundation
import TuttiAnalysis
import TuttiTesting
import XCTest

/// The THD+N analyzer against signals whose distortion and noise are known by construction.
final class DistortionAnalysisTests: XCTestCase {
    let rate = 48_000

    /// A 997.3 Hz tone (amplitude 0.5, DC 0.01) plus its 3rd harmonic at −60 dB and white noise at −70 dB, both
    /// relative to the fundamental's RMS: THD+N = 10 log₁₀(10⁻⁶ + 10⁻⁷) = −59.59 dB.
    func testKnownHarmonicAndNoiseLevels() throws {
        let frames = rate
        let amplitude = 0.5
        let fundamentalRMS = amplitude / 2.0.squareRoot()
        let harmonicAmplitude = amplitude * pow(10, -60.0 / 20)
        let noiseRMS = fundamentalRMS * pow(10, -70.0 / 20)
        var random = SeededGenerator(seed: 7)
        var samples = [Float](repeating: 0, count: frames)
        var added = [Double](repeating: 0, count: frames)
        let omega = 2 * Double.pi * 997.3 / Double(rate)
        for n in 0..<frames {
            // Uniform noise in [−√3σ, √3σ] has RMS σ.
            let noise = (random.unit() * 2 - 1) * 3.0.squareRoot() * noiseRMS
            let harmonic = harmonicAmplitude * sin(3 * omega * Double(n) + 0.4)
            added[n] = harmonic + noise
            samples[n] = Float(amplitude * sin(omega * Double(n) + 1.1) + harmonic + noise + 0.01)
        }
        let report = try XCTUnwrap(DistortionAnalysis.analyze(samples, sampleRate: rate, skipFrames: 0))
        let nominal = 10 * log10(1e-6 + 1e-7)
        // What was actually added (the noise's own RMS differs slightly from σ), over the analysed window.
        let addedRMS = (added.reduce(0) { $0 + $1 * $1 } / Double(frames)).squareRoot()
        let exact = 20 * log10(addedRMS / fundamentalRMS)
        print("THD+N analyzer: measured \(report.thdPlusNoiseDecibels) dB, built \(exact) dB, nominal \(nominal) dB")
        XCTAssertEqual(report.thdPlusNoiseDecibels, nominal, accuracy: 1)
        XCTAssertEqual(report.thdPlusNoiseDecibels, exact, accuracy: 0.05)
        XCTAssertEqual(report.frequency, 997.3, accuracy: 1e-4)
        XCTAssertEqual(report.fundamentalRMS, fundamentalRMS, accuracy: 1e-5)
        XCTAssertEqual(report.dc, 0.01, accuracy: 1e-5)
    }

    /// A harmonic alone at −80 dB, no noise: the analyzer reads the harmonic's level.
    func testHarmonicAloneAtMinus80dB() throws {
        var samples = [Float](repeating: 0, count: rate / 2)
        let omega = 2 * Double.pi * 1_000 / Double(rate)
        for n in samples.indices {
            samples[n] = Float(0.5 * sin(omega * Double(n)) + 0.5e-4 * sin(2 * omega * Double(n)))
        }
        let report = try XCTUnwrap(DistortionAnalysis.analyze(samples, sampleRate: rate, skipFrames: 0))
        XCTAssertEqual(report.thdPlusNoiseDecibels, -80, accuracy: 0.1)
    }

    /// A clean Float tone: only Float rounding is left, far below anything the rate-conversion tests assert.
    func testPureFloatToneIsBelowMinus130dB() throws {
        var samples = [Float](repeating: 0, count: rate / 2)
        let omega = 2 * Double.pi * 1_234.5 / Double(rate)
        for n in samples.indices { samples[n] = Float(0.5 * sin(omega * Double(n) + 0.3)) }
        let report = try XCTUnwrap(DistortionAnalysis.analyze(samples, sampleRate: rate, skipFrames: 0))
        XCTAssertLessThan(report.thdPlusNoiseDecibels, -130)
        XCTAssertEqual(report.frequency, 1_234.5, accuracy: 1e-6)
    }

    /// A start-up transient (a click 5 ms into the tone) and a fade at the end are left out by the default
    /// 50 ms skip, and counted without it.
    func testDefaultWindowSkipsStartUpTransients() throws {
        var samples = [Float](repeating: 0, count: 1_000 + rate)
        let omega = 2 * Double.pi * 1_000 / Double(rate)
        for n in 1_000..<samples.count { samples[n] = Float(0.5 * sin(omega * Double(n - 1_000) + 0.5)) }
        samples[1_000 + 240] += 0.3
        for n in (samples.count - 480)..<samples.count { samples[n] *= Float(samples.count - n) / 480 }
        let skipped = try XCTUnwrap(DistortionAnalysis.analyze(samples, sampleRate: rate))
        let counted = try XCTUnwrap(DistortionAnalysis.analyze(samples, sampleRate: rate, skipFrames: 0))
        XCTAssertEqual(skipped.start, 1_000 + rate / 20)
        XCTAssertLessThan(skipped.thdPlusNoiseDecibels, -130)
        XCTAssertGreaterThan(counted.thdPlusNoiseDecibels, -60)
    }

    func testSilenceAndTooShortToneHaveNoReport() {
        XCTAssertNil(DistortionAnalysis.analyze([Float](repeating: 0, count: 4_800), sampleRate: rate))
        let short = (0..<200).map { Float(0.5 * sin(2 * Double.pi * 1_000 * Double($0) / 48_000)) }
        XCTAssertNil(DistortionAnalysis.analyze(short, sampleRate: rate, skipFrames: 0))
    }
}
