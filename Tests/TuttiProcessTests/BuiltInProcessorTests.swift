import XCTest

@testable import TuttiProcess

/// Each built-in processor measured on tones and impulses at 48 kHz, in 64-frame periods as the engine runs
/// them: its level, its delay, its response, its ceiling, its latency, and no click when a value changes.
final class BuiltInProcessorTests: XCTestCase {
    let rate = 48_000

    private func processor(_ text: String, channels: Int = 2) throws -> BuiltInProcessor {
        BuiltInProcessor.make(try ProcessorSpecification(parsing: text), sampleRate: rate, channels: channels)
    }

    private func run(_ processor: inout BuiltInProcessor, _ samples: inout [Float], channels: Int = 2) {
        Signal.inPeriods(&samples, channels: channels, period: 64) { buffer, frames in
            processor.process(buffer, frames: frames, channels: channels)
        }
    }

    func testGainOfMinusSixDecibelsHalvesTheLevelOnEveryChannel() throws {
        var gain = try processor("gain,db=-6")
        var samples = Signal.tone(frequency: 1_000, amplitude: 0.5, frames: 48_000, channels: 2)
        let before = Signal.rms(samples, channel: 0, channels: 2, frames: 0..<48_000)
        run(&gain, &samples)
        for channel in 0..<2 {
            let after = Signal.rms(samples, channel: channel, channels: 2, frames: 0..<48_000)
            XCTAssertEqual(Signal.decibels(after / before), -6, accuracy: 0.001)
        }
        XCTAssertEqual(gain.latencyFrames, 0)
    }

    func testAGainChangeGlidesOverTenMillisecondsWithoutAStepLargerThanTheTones() throws {
        var gain = try processor("gain,db=0", channels: 1)
        var samples = Signal.tone(frequency: 1_000, amplitude: 0.5, frames: 9_600, channels: 1)
        let toneStep = zip(samples, samples.dropFirst()).map { abs($1 - $0) }.max()!
        var frame = 0
        Signal.inPeriods(&samples, channels: 1, period: 64) { buffer, frames in
            if frame == 4_800 { gain.set(0, to: -40) }
            gain.process(buffer, frames: frames, channels: 1)
            frame += frames
        }
        let largestStep = zip(samples, samples.dropFirst()).map { abs($1 - $0) }.max()!
        XCTAssertLessThanOrEqual(largestStep, toneStep * 1.001)
        // Settled at −40 dB after the 10 ms glide (480 frames).
        let settled = Signal.rms(samples, channel: 0, channels: 1, frames: 5_400..<9_600)
        XCTAssertEqual(Signal.decibels(settled / (0.5 / 2.0.squareRoot())), -40, accuracy: 0.05)
    }

    func testSilenceAtTheBottomOfTheRange() throws {
        var gain = try processor("gain,db=-96")
        var samples = Signal.tone(frequency: 1_000, amplitude: 1, frames: 4_800, channels: 2)
        run(&gain, &samples)
        XCTAssertEqual(samples.map(abs).max(), 0)
    }

    func testDelayMovesAnImpulseByExactlyItsTimeOnEveryChannelAcrossPeriods() throws {
        for milliseconds in [0.0, 1, 10.5, 250, 2_000] {
            var delay = try processor("delay,ms=\(milliseconds)")
            let frames = 100_000
            var samples = [Float](repeating: 0, count: frames * 2)
            samples[100 * 2] = 1
            samples[100 * 2 + 1] = -0.5
            run(&delay, &samples)
            let expected = 100 + Int((milliseconds * 48).rounded())
            XCTAssertEqual(samples.firstIndex { $0 != 0 }.map { $0 / 2 }, expected, "\(milliseconds) ms")
            XCTAssertEqual(samples[expected * 2], 1)
            XCTAssertEqual(samples[expected * 2 + 1], -0.5)
            XCTAssertEqual(samples.filter { $0 != 0 }.count, 2, "\(milliseconds) ms: one impulse out, nothing else")
            XCTAssertEqual(delay.latencyFrames, 0, "the delay is the effect, not latency")
        }
    }

    func testAnEQBandBoostsItsCentreByItsGainAndLeavesFarFrequenciesAlone() throws {
        // Measured on single tones: +6 dB at 1 kHz, about 0 dB three octaves or more away (Q 2).
        let cases: [(frequency: Double, expected: Double, accuracy: Double)] = [(1_000, 6, 0.05), (100, 0, 0.1), (10_000, 0, 0.1)]
        for (frequency, expected, accuracy) in cases {
            var eq = try processor("eq,freq=1000,db=6,q=2", channels: 1)
            var samples = Signal.tone(frequency: frequency, amplitude: 0.25, frames: 48_000, channels: 1)
            let before = Signal.rms(samples, channel: 0, channels: 1, frames: 24_000..<48_000)
            run(&eq, &samples, channels: 1)
            let after = Signal.rms(samples, channel: 0, channels: 1, frames: 24_000..<48_000)
            XCTAssertEqual(Signal.decibels(after / before), expected, accuracy: accuracy, "\(frequency) Hz")
        }
    }

    func testAnEQCutFollowsALiveChangeOfItsGain() throws {
        var eq = try processor("eq,freq=440,db=0,q=1", channels: 1)
        var samples = Signal.tone(frequency: 440, amplitude: 0.25, frames: 96_000, channels: 1)
        var frame = 0
        Signal.inPeriods(&samples, channels: 1, period: 64) { buffer, frames in
            if frame == 48_000 { eq.set(1, to: -12) }
            eq.process(buffer, frames: frames, channels: 1)
            frame += frames
        }
        let unity = Signal.rms(samples, channel: 0, channels: 1, frames: 24_000..<48_000)
        let cut = Signal.rms(samples, channel: 0, channels: 1, frames: 72_000..<96_000)
        XCTAssertEqual(Signal.decibels(unity / (0.25 / 2.0.squareRoot())), 0, accuracy: 0.05)
        XCTAssertEqual(Signal.decibels(cut / unity), -12, accuracy: 0.1)
    }

    func testTheLimiterHoldsEveryPeakAtItsCeilingAndReportsItsLookaheadAsLatency() throws {
        var limiter = try processor("limiter,ceiling=-6,release=20")
        XCTAssertEqual(limiter.latencyFrames, 72, "1.5 ms at 48 kHz")
        // Quiet, then a burst at 0 dBFS, then quiet again.
        var samples = Signal.tone(frequency: 1_000, amplitude: 0.1, frames: 48_000, channels: 2)
        let loud = Signal.tone(frequency: 1_000, amplitude: 1, frames: 48_000, channels: 2)
        for index in (12_000 * 2)..<(24_000 * 2) { samples[index] = loud[index] }
        let input = samples
        run(&limiter, &samples)
        let ceiling = Float(pow(10, -6.0 / 20))
        XCTAssertLessThanOrEqual(samples.map(abs).max()!, ceiling * 1.000_01)
        // Quiet passages pass untouched, delayed by the lookahead.
        for frame in 1_000..<11_000 {
            XCTAssertEqual(samples[frame * 2], input[(frame - 72) * 2], accuracy: 1e-6)
        }
        // The burst comes out at the ceiling; well after it, the quiet tone is back at unity.
        let burst = Signal.rms(samples, channel: 0, channels: 2, frames: 14_000..<24_000)
        XCTAssertEqual(Signal.decibels(burst / (1 / 2.0.squareRoot())), -6, accuracy: 0.1)
        let after = Signal.rms(samples, channel: 1, channels: 2, frames: 36_000..<48_000)
        XCTAssertEqual(Signal.decibels(after / (0.1 / 2.0.squareRoot())), 0, accuracy: 0.05)
    }

    func testTheLimitersGainComesDownInAStraightLineOverTheLookahead() throws {
        // A step from 0.05 to full scale: the gain (output ÷ the input it delays) falls from 1 to the ceiling's
        // 0.251 in 72 equal steps before the loud part leaves, never faster; nothing goes above the ceiling.
        var limiter = try processor("limiter,ceiling=-12", channels: 1)
        var samples = [Float](repeating: 0.05, count: 4_800)
        for index in 2_400..<4_800 { samples[index] = 1 }
        let input = samples
        run(&limiter, &samples, channels: 1)
        let ceiling = Float(pow(10, -12.0 / 20))
        let gains = (72..<4_800).map { samples[$0] / input[$0 - 72] }
        let largestFall = zip(gains, gains.dropFirst()).map { $0 - $1 }.max()!
        XCTAssertEqual(largestFall, (1 - ceiling) / 73, accuracy: 1e-4)
        XCTAssertEqual(gains[0], 1, accuracy: 1e-6)
        XCTAssertEqual(gains.last!, ceiling, accuracy: 1e-4)
        XCTAssertLessThanOrEqual(samples.max()!, ceiling * 1.000_01)
    }
}
