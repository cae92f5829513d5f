import TuttiStream
import XCTest

/// Mute with fades: silence while muted, the audio untouched once unmuted, and no sample steps further than the
/// audio's own steps while it fades, for a tone above the fade's own lowest frequency (about 29 Hz).
final class MuteFaderTests: XCTestCase {
    private let periodFrames = 64
    private let channels = 2

    /// Plays `periods` periods of `generator` through `fader`, calling `change` before each period with its
    /// index; returns the first channel's samples.
    private func play(
        _ generator: inout ToneGenerator, through fader: MuteFader, periods: Int, sampleRate: Int = 48_000,
        change: (Int) -> Void = { _ in }
    ) -> [Float] {
        let buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: periodFrames * channels)
        defer { buffer.deallocate() }
        var out: [Float] = []
        for period in 0..<periods {
            change(period)
            generator.render(into: buffer, frames: periodFrames, channels: channels)
            fader.apply(buffer, frames: periodFrames, channels: channels, sampleRate: sampleRate)
            for frame in 0..<periodFrames {
                out.append(buffer[frame * channels])
                XCTAssertEqual(buffer[frame * channels + 1], buffer[frame * channels], "every channel alike")
            }
        }
        return out
    }

    private func largestStep(_ samples: ArraySlice<Float>) -> Float {
        zip(samples.dropFirst(), samples).map { abs($0 - $1) }.max() ?? 0
    }

    func testAnUnmutedFaderLeavesTheAudioUntouched() {
        var reference = ToneGenerator(frequency: 1000, amplitude: 0.5, sampleRate: 48_000)
        var generator = reference
        let fader = MuteFader()
        XCTAssertTrue(fader.isTransparent)
        let played = play(&generator, through: fader, periods: 20)
        let untouched = play(&reference, through: MuteFader(), periods: 20)
        XCTAssertEqual(played, untouched)
    }

    func testMutedIsExactSilenceAfterTenMillisecondsAndUnmutedIsWholeAgainAfterTen() {
        var generator = ToneGenerator(frequency: 1000, amplitude: 0.5, sampleRate: 48_000)
        let fader = MuteFader()
        // Mute at period 10 (frame 640), unmute at period 40 (frame 2560); 10 ms is 480 frames.
        let samples = play(&generator, through: fader, periods: 70) { period in
            if period == 10 { fader.isMuted = true }
            if period == 40 { fader.isMuted = false }
        }
        XCTAssertTrue(samples[(640 + 480)..<2560].allSatisfy { $0 == 0 }, "silent from the end of the fade until the unmute")
        XCTAssertTrue(samples[640..<(640 + 470)].contains { abs($0) > 0.01 }, "fades out, not cut")
        var reference = ToneGenerator(frequency: 1000, amplitude: 0.5, sampleRate: 48_000)
        let whole = play(&reference, through: MuteFader(), periods: 70)
        XCTAssertEqual(Array(samples[(2560 + 480)...]), Array(whole[(2560 + 480)...]), "whole again 10 ms after the unmute")
        XCTAssertTrue(fader.isTransparent)
    }

    func testNoStepWhileFadingIsLargerThanTheTonesOwnWhateverItsFrequency() {
        // A 10 ms raised cosine is slower than any tone's own steps from about 29 Hz up.
        for frequency in [40.0, 100, 440, 1000, 5000] {
            var generator = ToneGenerator(frequency: frequency, amplitude: 0.9, sampleRate: 48_000)
            let fader = MuteFader()
            let samples = play(&generator, through: fader, periods: 120) { period in
                if period == 30 { fader.isMuted = true }
                if period == 60 { fader.isMuted = false }
            }
            var reference = ToneGenerator(frequency: frequency, amplitude: 0.9, sampleRate: 48_000)
            let own = largestStep(play(&reference, through: MuteFader(), periods: 120)[...])
            let fadeOut = largestStep(samples[(30 * 64 - 1)..<(30 * 64 + 480)])
            let fadeIn = largestStep(samples[(60 * 64 - 1)..<(60 * 64 + 480)])
            XCTAssertLessThanOrEqual(fadeOut, own, "\(frequency) Hz: fading out")
            XCTAssertLessThanOrEqual(fadeIn, own, "\(frequency) Hz: fading in (the unmute)")
        }
    }

    func testTheFadeLastsTenMillisecondsAtTheStreamsRate() {
        var generator = ToneGenerator(frequency: 1000, amplitude: 0.5, sampleRate: 44_100)
        let fader = MuteFader()
        let samples = play(&generator, through: fader, periods: 20, sampleRate: 44_100) { period in
            if period == 1 { fader.isMuted = true }
        }
        // 10 ms at 44.1 kHz: 441 frames, the last of them at gain 0.
        XCTAssertTrue(samples[(64 + 441)...].allSatisfy { $0 == 0 })
        XCTAssertTrue(samples[(64 + 300)..<(64 + 440)].contains { $0 != 0 })
    }

    func testMutingAndUnmutingMidFadeTurnsBackWithoutAJump() {
        var generator = ToneGenerator(frequency: 440, amplitude: 0.9, sampleRate: 48_000)
        let fader = MuteFader()
        let samples = play(&generator, through: fader, periods: 60) { period in
            if period == 10 { fader.isMuted = true }
            if period == 13 { fader.isMuted = false }  // 192 frames into the 480-frame fade
            if period == 15 { fader.isMuted = true }
        }
        var reference = ToneGenerator(frequency: 440, amplitude: 0.9, sampleRate: 48_000)
        let own = largestStep(play(&reference, through: MuteFader(), periods: 60)[...])
        XCTAssertLessThanOrEqual(largestStep(samples[...]), own)
    }
}
