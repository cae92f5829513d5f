import Foundation
import TuttiStream
import XCTest

/// The test tone against `sin` itself: every sample of every channel, across renders of awkward sizes (the
/// phasors restart at each render; a render shorter than four frames, or not a multiple of four, ends mid-round).
final class ToneGeneratorTests: XCTestCase {
    func testEverySampleIsTheSineOfItsFrameAcrossRendersOfAnySize() {
        for channels in [1, 2, 3] {
            var tone = ToneGenerator(frequency: 997, amplitude: 0.5, sampleRate: 48_000)
            var frame = 0
            for frames in [1, 3, 64, 100, 5, 4, 2, 333] {
                var output = [Float](repeating: .nan, count: frames * channels)
                output.withUnsafeMutableBufferPointer { tone.render(into: $0, frames: frames, channels: channels) }
                for index in 0..<frames {
                    let expected = 0.5 * sin(2 * Double.pi * 997 * Double(frame + index) / 48_000)
                    for channel in 0..<channels {
                        XCTAssertEqual(
                            Double(output[index * channels + channel]), expected, accuracy: 1e-6,
                            "\(channels) channel(s), frame \(frame + index)")
                    }
                }
                frame += frames
            }
        }
    }
}
