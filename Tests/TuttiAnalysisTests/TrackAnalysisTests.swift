import TuttiAnalysis
import XCTest

/// What a separate-mode recording is checked with: the level of one frequency in a track (crosstalk) and the
/// offsets of the clicks of its channels.
final class TrackAnalysisTests: XCTestCase {
    private func sine(_ frequency: Double, amplitude: Float, frames: Int = 48_000) -> [Float] {
        (0..<frames).map { amplitude * Float(sin(2 * Double.pi * frequency * Double($0) / 48_000)) }
    }

    func testSineLevelMeasuresOneFrequencyAndIgnoresAnother() {
        let half = sine(440, amplitude: 0.5)
        XCTAssertEqual(SineLevel.decibels(of: 440, in: half[...], sampleRate: 48_000), -6.02, accuracy: 0.01)
        XCTAssertLessThan(SineLevel.decibels(of: 880, in: half[...], sampleRate: 48_000), -100, "another frequency is not in it")
        let mixed = zip(half, sine(880, amplitude: 0.001)).map { $0 + $1 }
        XCTAssertEqual(SineLevel.decibels(of: 880, in: mixed[...], sampleRate: 48_000), -60, accuracy: 0.1, "a 1/1000 crosstalk is -60 dB")
        XCTAssertEqual(
            SineLevel.decibels(of: 440, in: [Float](repeating: 0, count: 4_800)[...], sampleRate: 48_000), SineLevel.floorDecibels)
    }

    func testClickAlignmentFindsEachChannelsOffsetToTheReferenceChannel() {
        func clicks(at frames: [Int], count: Int = 48_000) -> [Float] {
            var samples = [Float](repeating: 0, count: count)
            for frame in frames { samples[frame] = 0.8 }
            return samples
        }
        let reference = clicks(at: [1_000, 5_800, 10_600])
        let late = clicks(at: [1_001, 5_801, 10_601])
        let early = clicks(at: [999, 5_800, 10_599, 30_000])
        let alignment = ClickAlignment(channels: [reference, late, early], minimumGapFrames: 2_400)
        XCTAssertEqual(alignment.channels[0].clickFrames, [1_000, 5_800, 10_600])
        XCTAssertEqual(alignment.channels[0].minimumOffset, 0)
        XCTAssertEqual(alignment.channels[1].minimumOffset, 1)
        XCTAssertEqual(alignment.channels[1].maximumOffset, 1)
        XCTAssertEqual(alignment.channels[2].minimumOffset, -1)
        XCTAssertEqual(alignment.channels[2].maximumOffset, 0)
        XCTAssertEqual(alignment.channels[2].unmatched, 1, "a click with none near it in the reference")
        // A click spread over a few frames (a resampler's) counts once, at its peak.
        var spread = [Float](repeating: 0, count: 9_600)
        spread[2_000] = 0.3
        spread[2_001] = 0.9
        spread[2_002] = 0.4
        XCTAssertEqual(ClickAlignment(channels: [spread]).channels[0].clickFrames, [2_001])
    }
}
