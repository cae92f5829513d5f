import TuttiStream
import XCTest

/// The click source: one click per multiple of its interval on the capture clock, on the frame captured nearest
/// to it, whatever the periods' phase; none twice, none late, none while the time is unknown.
final class ClickGeneratorTests: XCTestCase {
    /// Renders `periods` periods of `frames` frames from capture time `start` (ns), contiguous, and returns the
    /// frames (counted from `start`) that click.
    private func clicks(start: Int64, periods: Int, frames: Int = 64, interval: Int64 = 10_000_000) -> [Int] {
        var generator = ClickGenerator(intervalNanoseconds: interval, amplitude: 0.8, sampleRate: 48_000)
        let output = UnsafeMutableBufferPointer<Float>.allocate(capacity: frames * 2)
        defer { output.deallocate() }
        var found: [Int] = []
        for period in 0..<periods {
            let first = period * frames
            generator.render(into: output, frames: frames, channels: 2, captureTime: start + Int64(first) * 1_000_000_000 / 48_000)
            for frame in 0..<frames where output[frame * 2] != 0 {
                XCTAssertEqual(output[frame * 2], 0.8)
                XCTAssertEqual(output[frame * 2 + 1], 0.8, "every channel clicks")
                found.append(first + frame)
            }
        }
        return found
    }

    func testAClickFallsOnTheFrameNearestEachMultipleOfTheInterval() {
        // From 1 s exactly, 23 periods of 64 frames: clicks at 1.00 s, 1.01 s… are frames 0, 480, 960, 1440.
        XCTAssertEqual(clicks(start: 1_000_000_000, periods: 23), [0, 480, 960, 1_440])
        // From 1 s + 5 us: 1.00 s is a quarter frame before the first frame, which it clicks; 1.01 s is 479.76
        // frames later: frame 480. From 1 s + 15 us (0.72 frames after 1.00 s): the first click is 1.01 s's.
        XCTAssertEqual(clicks(start: 1_000_005_000, periods: 23), [0, 480, 960, 1_440])
        XCTAssertEqual(clicks(start: 1_000_015_000, periods: 23), [479, 959, 1_439])
        // 37 frames before a multiple: the click is on frame 37, whatever the periods' size.
        let start: Int64 = 2_000_000_000 - 37 * 1_000_000_000 / 48_000
        XCTAssertEqual(clicks(start: start, periods: 20, frames: 48), [37, 517])
    }

    func testOverlappingPeriodsDoNotClickTwiceAndAClickInAGapIsNotPlayedLate() {
        var generator = ClickGenerator(intervalNanoseconds: 10_000_000, amplitude: 1, sampleRate: 48_000)
        let output = UnsafeMutableBufferPointer<Float>.allocate(capacity: 64)
        defer { output.deallocate() }
        // The first period holds the click at 1.00 s (1.2 frames in); the second starts 2 frames before the first ended.
        generator.render(into: output, frames: 64, channels: 1, captureTime: 999_975_000)
        XCTAssertEqual(output.firstIndex { $0 != 0 }, 1)
        generator.render(into: output, frames: 64, channels: 1, captureTime: 999_975_000 + 62 * 1_000_000_000 / 48_000)
        XCTAssertNil(output.firstIndex { $0 != 0 }, "the click at 1.00 s is not played again")
        // The next period starts 100 us after 1.01 s (a gap): that click is not played 5 frames late.
        generator.render(into: output, frames: 64, channels: 1, captureTime: 1_010_100_000)
        XCTAssertNil(output.firstIndex { $0 != 0 })
        // After a pause, the clicks come back on their frames: 1.02 s is 475.2 frames after 1.0101 s.
        generator.render(into: output, frames: 64, channels: 1, captureTime: 1_010_100_000 + 448 * 1_000_000_000 / 48_000)
        XCTAssertEqual(output.firstIndex { $0 != 0 }, 27)
    }

    func testNoClickWhileTheCaptureTimeIsUnknown() {
        var generator = ClickGenerator(intervalNanoseconds: 10_000_000, amplitude: 1, sampleRate: 48_000)
        let output = UnsafeMutableBufferPointer<Float>.allocate(capacity: 128)
        defer { output.deallocate() }
        output.initialize(repeating: 0.3)
        generator.render(into: output, frames: 64, channels: 2, captureTime: .min)
        XCTAssertTrue(output.allSatisfy { $0 == 0 }, "silence")
    }
}
