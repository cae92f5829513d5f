import Foundation
import TuttiProcess
import XCTest

@testable import TuttiLV2

/// Hosting a real LV2 plug-in from Debian's swh-lv2 (`amp`, a mono amplifier: gain in dB): a stereo port runs
/// one instance per channel at the level the parameter sets, live changes apply at the next period, and every
/// refusal is one line. Skipped, with the reason, where the plug-in is not installed.
final class LV2ProcessorTests: XCTestCase {
    static let amp = "http://plugin.org.uk/swh-plugins/amp"

    private func ampPlugin() throws -> LV2PluginDescription {
        do {
            return try LV2Catalog.shared.plugin(uri: Self.amp)
        } catch {
            throw XCTSkip("swh-lv2's amp is not installed (scripts/setup installs swh-lv2): \(error.message)")
        }
    }

    private func tone(frames: Int, channels: Int) -> [Float] {
        (0..<(frames * channels)).map { index in Float(0.5 * sin(2 * Double.pi * 1_000 * Double(index / channels) / 48_000)) }
    }

    private func peak(_ samples: [Float]) -> Double { Double(samples.map(abs).max() ?? 0) }

    func testTheAmpDescribesItsGainAndRunsOneInstancePerChannel() throws {
        let amp = try ampPlugin()
        XCTAssertEqual(amp.controls.map(\.parameter.name), ["gain"])
        XCTAssertEqual(amp.controls.first?.parameter.range, -70...70)
        XCTAssertEqual(try amp.instances(forChannels: 2), 2, "mono: one instance per channel")
        XCTAssertEqual(amp.specification.description, "lv2,uri=\(Self.amp),gain=0")
    }

    func testMinusSixDecibelsOnEveryChannelInPeriodsLongerThanItsBuffers() throws {
        let amp = try ampPlugin()
        var specification = amp.specification
        try specification.set("gain", to: "-6")
        var processor = try LV2Processor(amp, sampleRate: 48_000, channels: 2, maxFrames: 64, values: specification.values)
        var samples = tone(frames: 4_800, channels: 2)
        samples.withUnsafeMutableBufferPointer { buffer in
            // 100-frame periods: each runs in two pieces (64 + 36).
            for start in stride(from: 0, to: 4_800, by: 100) {
                processor.process(UnsafeMutableBufferPointer(rebasing: buffer[(start * 2)..<((start + 100) * 2)]), frames: 100, channels: 2)
            }
        }
        for channel in 0..<2 {
            let channelPeak = peak(stride(from: channel, to: samples.count, by: 2).map { samples[$0] })
            XCTAssertEqual(20 * log10(channelPeak / 0.5), -6, accuracy: 0.01, "channel \(channel)")
        }
        XCTAssertEqual(processor.latencyFrames, 0)
    }

    func testALiveChangeGlidesOverTenMillisecondsWithoutAClick() throws {
        // swh's amp applies its gain at once: the host glides the control, so the output steps no more than
        // the tone itself does, and after 10 ms it plays at the new gain.
        let amp = try ampPlugin()
        var processor = try LV2Processor(amp, sampleRate: 48_000, channels: 1, maxFrames: 64, values: [0])
        var samples = tone(frames: 64 * 20, channels: 1)
        let toneStep = zip(samples, samples.dropFirst()).map { abs($1 - $0) }.max()!
        samples.withUnsafeMutableBufferPointer { buffer in
            for period in 0..<20 {
                if period == 5 { processor.set(0, to: -20) }
                processor.process(
                    UnsafeMutableBufferPointer(rebasing: buffer[(period * 64)..<((period + 1) * 64)]), frames: 64, channels: 1)
            }
        }
        let largestStep = zip(samples, samples.dropFirst()).map { abs($1 - $0) }.max()!
        XCTAssertLessThanOrEqual(largestStep, toneStep * 1.001, "no click")
        XCTAssertEqual(peak(Array(samples[0..<320])), 0.5, accuracy: 0.001, "0 dB before the change")
        XCTAssertEqual(20 * log10(peak(Array(samples[(64 * 14)...])) / 0.5), -20, accuracy: 0.01, "−20 dB once the glide is over")
    }

    func testRefusalsAreOneLine() throws {
        _ = try ampPlugin()
        XCTAssertThrowsError(try LV2Catalog.shared.plugin(uri: "http://example.org/not-installed")) { error in
            XCTAssertEqual(
                (error as? ProcessorError)?.message,
                "no LV2 plug-in http://example.org/not-installed is installed on this host (see 'lv2ls'; LV2_PATH sets where to look)")
        }
        var specification = try LV2Catalog.shared.plugin(uri: Self.amp).specification
        XCTAssertThrowsError(try specification.set("gain", to: "80")) { error in
            XCTAssertEqual((error as? ProcessorError)?.message, "lv2 gain must be between -70 and 70 (got 80)")
        }
        XCTAssertThrowsError(try specification.set("volume", to: "1")) { error in
            XCTAssertEqual((error as? ProcessorError)?.message, "lv2 has no parameter 'volume': it takes gain")
        }
    }
}
