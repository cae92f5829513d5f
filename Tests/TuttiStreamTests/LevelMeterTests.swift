import Foundation
import TuttiStream
import XCTest

/// The level meter: known signals give their textbook levels, and windows are exact whatever the periods.
final class LevelMeterTests: XCTestCase {
    /// Feeds `samples` (`channels` interleaved) in periods of `periods` frames, cycling, and returns every
    /// reading `measure` gave.
    private func readings(
        _ meter: inout LevelMeter, _ samples: [Float], channels: Int, periods: [Int]
    ) -> [LevelReading] {
        var readings = [LevelReading]()
        var frame = 0
        var period = 0
        let frames = samples.count / channels
        samples.withUnsafeBufferPointer { all in
            while frame < frames {
                let count = min(periods[period % periods.count], frames - frame)
                let slice = UnsafeBufferPointer(rebasing: all[(frame * channels)..<((frame + count) * channels)])
                if let reading = meter.measure(slice, frames: count, channels: channels) { readings.append(reading) }
                frame += count
                period += 1
            }
        }
        return readings
    }

    private func sine(amplitude: Float, frequency: Double, rate: Int, frames: Int, channels: Int) -> [Float] {
        var generator = ToneGenerator(frequency: frequency, amplitude: amplitude, sampleRate: rate)
        var samples = [Float](repeating: .nan, count: frames * channels)
        samples.withUnsafeMutableBufferPointer { generator.render(into: $0, frames: frames, channels: channels) }
        return samples
    }

    func testASineAtMinus6DBFSPeaksAtMinus6AndHasAnRMSOfMinus9() throws {
        let amplitude = Float(pow(10, -6.0 / 20))
        for (rate, frequency, channels) in [(48_000, 1_000.0, 2), (44_100, 997.0, 1), (96_000, 440.0, 8)] {
            var meter = LevelMeter(windowFrames: LevelMeter.standardWindowFrames(sampleRate: rate))
            let samples = sine(amplitude: amplitude, frequency: frequency, rate: rate, frames: 2 * rate, channels: channels)
            let readings = readings(&meter, samples, channels: channels, periods: [64])
            XCTAssertEqual(readings.count, 4, "two seconds are four 0.5 s windows")
            for reading in readings {
                XCTAssertEqual(try XCTUnwrap(reading.peakDBFS), -6.0, accuracy: 0.1, "\(frequency) Hz at \(rate)")
                XCTAssertEqual(try XCTUnwrap(reading.rmsDBFS), -9.0, accuracy: 0.1, "\(frequency) Hz at \(rate)")
            }
        }
        // The tone source's default amplitude, 0.5, is −6.02 dBFS (what `tutti peer --sender out=tone` sends).
        var meter = LevelMeter(windowFrames: 24_000)
        let reading = try XCTUnwrap(
            readings(&meter, sine(amplitude: 0.5, frequency: 1_000, rate: 48_000, frames: 24_000, channels: 2), channels: 2, periods: [128])
                .last)
        XCTAssertEqual(try XCTUnwrap(reading.peakDBFS), 20 * log10(0.5), accuracy: 0.001)
        XCTAssertEqual(try XCTUnwrap(reading.rmsDBFS), 20 * log10(0.5 / 2.0.squareRoot()), accuracy: 0.001)
    }

    func testSilenceReadsTheFloor() throws {
        var meter = LevelMeter(windowFrames: 480)
        let readings = readings(&meter, [Float](repeating: 0, count: 960 * 2), channels: 2, periods: [64])
        XCTAssertEqual(readings.count, 2)
        XCTAssertEqual(readings.last?.peakDBFS, LevelReading.floorDBFS)
        XCTAssertEqual(readings.last?.rmsDBFS, LevelReading.floorDBFS)
        XCTAssertEqual(LevelReading.floorDBFS, -120)
        // Quieter than the floor reads the floor too.
        XCTAssertEqual(LevelReading(peak: 1e-7, meanSquare: 1e-14).peakDBFS, -120)
    }

    func testAFullScaleSquareWaveIsZeroDBFSPeakAndRMS() throws {
        var meter = LevelMeter(windowFrames: 1_000)
        let square = (0..<4_000).map { Float(($0 / 24) % 2 == 0 ? 1 : -1) }
        let readings = readings(&meter, square, channels: 1, periods: [64])
        XCTAssertEqual(readings.count, 4)
        for reading in readings {
            XCTAssertEqual(try XCTUnwrap(reading.peakDBFS), 0, accuracy: 1e-9)
            XCTAssertEqual(try XCTUnwrap(reading.rmsDBFS), 0, accuracy: 1e-6)
        }
    }

    func testWindowsAreExactAcrossPeriodsOfDifferentSizes() throws {
        // A rising ramp, so every window's peak is its last sample: a frame counted in the wrong window
        // moves a peak by a step. Two channels, the second half the first.
        let window = 100
        let frames = 1_000
        var samples = [Float]()
        for frame in 0..<frames { samples += [Float(frame + 1) / 1_000, Float(frame + 1) / 2_000] }
        func reference(_ index: Int) -> LevelReading {
            let values = samples[(index * window * 2)..<((index + 1) * window * 2)]
            let meanSquare = values.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(values.count)
            return LevelReading(peak: values.map(\.magnitude).max()!, meanSquare: Float(meanSquare))
        }
        for periods in [[64], [1], [37, 100, 3, 63], [99, 2], [100]] {
            var meter = LevelMeter(windowFrames: window)
            let readings = readings(&meter, samples, channels: 2, periods: periods)
            XCTAssertEqual(readings.count, 10, "\(periods)")
            for (index, reading) in readings.enumerated() {
                XCTAssertEqual(reading.peak, reference(index).peak, "\(periods), window \(index)")
                XCTAssertEqual(reading.meanSquare, reference(index).meanSquare, accuracy: 1e-7, "\(periods), window \(index)")
            }
        }
        // A period spanning several windows completes them all and returns the last: periods ending at frames
        // 250, 500, 750 and 1000 complete windows 0–1, 2–4, 5–6 and 7–9.
        var meter = LevelMeter(windowFrames: window)
        let long = readings(&meter, samples, channels: 2, periods: [250])
        XCTAssertEqual(long, [1, 4, 6, 9].map { reference($0) })
    }

    func testNoReadingBeforeTheFirstWindowCompletes() {
        var meter = LevelMeter(windowFrames: 128)
        let samples = [Float](repeating: 0.25, count: 127)
        XCTAssertTrue(readings(&meter, samples, channels: 1, periods: [64]).isEmpty)
        XCTAssertEqual(readings(&meter, [0.5], channels: 1, periods: [1]).first?.peak, 0.5)
        let published = PublishedLevel()
        XCTAssertNil(published.latest)
        published.publish(LevelReading(peak: 0.5, meanSquare: 0.125))
        XCTAssertEqual(published.latest, LevelReading(peak: 0.5, meanSquare: 0.125))
        published.publish(LevelReading(peak: 0, meanSquare: 0))
        XCTAssertEqual(published.latest, LevelReading(peak: 0, meanSquare: 0))
    }

    func testAudioThatIsNotANumberHasNoRMSLevel() {
        var meter = LevelMeter(windowFrames: 4)
        let reading = readings(&meter, [0.5, .nan, -0.25, 0], channels: 1, periods: [4]).first
        XCTAssertEqual(reading?.peak, 0.5)
        XCTAssertNil(reading?.rmsDBFS)
    }
}
