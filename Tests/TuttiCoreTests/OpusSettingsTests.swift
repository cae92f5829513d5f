import Foundation
import TuttiCore
import XCTest

/// Opus settings: defaults, parsing of user text, validation and its one-line errors, Codable form.
final class OpusSettingsTests: XCTestCase {
    func testDefaultsAreTheLANSettings() throws {
        let settings = OpusSettings()
        XCTAssertEqual(settings, .lan)
        XCTAssertEqual(settings.frameDuration, .fiveMilliseconds)
        XCTAssertEqual(settings.bitrate, 128_000)
        XCTAssertEqual(settings.complexity, 9)
        XCTAssertFalse(settings.inBandFEC)
        XCTAssertEqual(settings.expectedPacketLossPercent, 0)
        XCTAssertEqual(settings.application, .restrictedLowDelay)
        try settings.validate()
    }

    func testFrameDurationsAreTheFourLowLatencyOnes() {
        XCTAssertEqual(OpusSettings.FrameDuration.allCases.map(\.framesPerChannel), [120, 240, 480, 960])
        XCTAssertEqual(OpusSettings.FrameDuration.allCases.map(\.milliseconds), [2.5, 5, 10, 20])
        XCTAssertEqual(OpusSettings.FrameDuration.allCases.map(\.description), ["2.5ms", "5ms", "10ms", "20ms"])
        XCTAssertEqual(OpusSettings.FrameDuration.allCases.map(\.canCarrySILK), [false, false, true, true])
    }

    func testBitrateParsing() throws {
        let accepted: [(String, Int)] = [
            ("128000", 128_000), ("96k", 96_000), ("96K", 96_000), ("6.5k", 6_500), (" 64 k ", 64_000),
            ("96kbps", 96_000), ("96 kb/s", 96_000), ("128000bps", 128_000), ("128000 b/s", 128_000),
            ("0.512k", 512), ("510k", 510_000),
        ]
        for (text, value) in accepted { XCTAssertEqual(try OpusSettings.parseBitrate(text), value, text) }
        for text in [
            "", "k", "96m", "-96k", "+96k", "1e5", "96.5", "6.5555k", "9 6k", "96kk", ".5k", "5.k", "1234567890",
        ] {
            XCTAssertThrowsError(try OpusSettings.parseBitrate(text), text) {
                XCTAssertEqual($0 as? OpusSettingsError, .unparsableBitrate(text))
            }
        }
    }

    func testFrameDurationParsing() throws {
        let accepted: [(String, OpusSettings.FrameDuration)] = [
            ("2.5ms", .twoAndAHalfMilliseconds), ("2.5", .twoAndAHalfMilliseconds),
            ("2.50 ms", .twoAndAHalfMilliseconds),
            ("5", .fiveMilliseconds), ("5ms", .fiveMilliseconds), ("5MS", .fiveMilliseconds),
            ("10 ms", .tenMilliseconds), ("20", .twentyMilliseconds), ("20.0ms", .twentyMilliseconds),
        ]
        for (text, duration) in accepted {
            XCTAssertEqual(try OpusSettings.FrameDuration(parsing: text), duration, text)
        }
        for text in ["40ms", "60", "2", "2.4ms", "0", "120"] {
            XCTAssertThrowsError(try OpusSettings.FrameDuration(parsing: text), text) {
                XCTAssertEqual($0 as? OpusSettingsError, .unsupportedFrameDuration(text))
            }
        }
        for text in ["", "ms", "five", "-5", "5s", "2,5ms"] {
            XCTAssertThrowsError(try OpusSettings.FrameDuration(parsing: text), text) {
                XCTAssertEqual($0 as? OpusSettingsError, .unparsableFrameDuration(text))
            }
        }
    }

    func testApplicationAndPacketLossParsing() throws {
        XCTAssertEqual(try OpusSettings.Application(parsing: "lowdelay"), .restrictedLowDelay)
        XCTAssertEqual(try OpusSettings.Application(parsing: "Low-Delay"), .restrictedLowDelay)
        XCTAssertEqual(try OpusSettings.Application(parsing: "audio"), .audio)
        XCTAssertEqual(try OpusSettings.Application(parsing: " VoIP "), .voip)
        XCTAssertThrowsError(try OpusSettings.Application(parsing: "celt")) {
            XCTAssertEqual($0 as? OpusSettingsError, .unparsableApplication("celt"))
        }
        XCTAssertEqual(try OpusSettings.parsePacketLossPercent("10"), 10)
        XCTAssertEqual(try OpusSettings.parsePacketLossPercent("10%"), 10)
        XCTAssertEqual(try OpusSettings.parsePacketLossPercent(" 0 % "), 0)
        for text in ["", "%", "-1", "2.5%", "ten"] {
            XCTAssertThrowsError(try OpusSettings.parsePacketLossPercent(text), text) {
                XCTAssertEqual($0 as? OpusSettingsError, .unparsablePacketLoss(text))
            }
        }
    }

    func testValidationRanges() throws {
        func error(_ change: (inout OpusSettings) -> Void) -> OpusSettingsError? {
            var settings = OpusSettings()
            change(&settings)
            do {
                try settings.validate()
                return nil
            } catch {
                return error
            }
        }
        XCTAssertNil(error { $0.bitrate = 6_000 })
        XCTAssertNil(error { $0.bitrate = 510_000 })
        XCTAssertEqual(error { $0.bitrate = 5_999 }, .bitrateOutOfRange(5_999))
        XCTAssertEqual(error { $0.bitrate = 510_001 }, .bitrateOutOfRange(510_001))
        XCTAssertNil(error { $0.complexity = 0 })
        XCTAssertNil(error { $0.complexity = 10 })
        XCTAssertEqual(error { $0.complexity = -1 }, .complexityOutOfRange(-1))
        XCTAssertEqual(error { $0.complexity = 11 }, .complexityOutOfRange(11))
        XCTAssertNil(error { $0.expectedPacketLossPercent = 100 })
        XCTAssertEqual(error { $0.expectedPacketLossPercent = 101 }, .packetLossOutOfRange(101))
        XCTAssertEqual(error { $0.expectedPacketLossPercent = -1 }, .packetLossOutOfRange(-1))
    }

    /// FEC is valid exactly where a packet can carry SILK: `audio`/`voip` with 10 or 20 ms frames.
    func testFECIsValidOnlyWhereSILKIs() {
        for application in OpusSettings.Application.allCases {
            for duration in OpusSettings.FrameDuration.allCases {
                let settings = OpusSettings(
                    frameDuration: duration, inBandFEC: true, expectedPacketLossPercent: 10, application: application)
                let valid = application != .restrictedLowDelay && duration.framesPerChannel >= 480
                do {
                    try settings.validate()
                    XCTAssertTrue(valid, "\(application) \(duration)")
                } catch {
                    XCTAssertFalse(valid, "\(application) \(duration)")
                    XCTAssertEqual(error, .inBandFECUnavailable(duration, application))
                }
            }
        }
    }

    func testErrorsAreOneClearLine() {
        let lines: [(OpusSettingsError, String)] = [
            (.bitrateOutOfRange(96), "Opus bitrate 96 b/s is outside 6000…510000 b/s (did you mean 96k?)"),
            (.bitrateOutOfRange(600_000), "Opus bitrate 600000 b/s is outside 6000…510000 b/s"),
            (.unsupportedFrameDuration("40ms"), "Opus frame duration '40ms' is not one of 2.5, 5, 10 or 20 ms"),
            (
                .inBandFECUnavailable(.fiveMilliseconds, .restrictedLowDelay),
                "Opus in-band FEC needs the SILK layer: application audio or voip with 10 or 20 ms frames, "
                    + "not lowdelay with 5ms frames"
            ),
        ]
        for (error, line) in lines { XCTAssertEqual(error.description, line) }
        let all: [OpusSettingsError] = [
            .unparsableBitrate("x"), .unparsableFrameDuration("x"), .unsupportedFrameDuration("x"),
            .unparsablePacketLoss("x"), .unparsableApplication("x"), .bitrateOutOfRange(1), .complexityOutOfRange(12),
            .packetLossOutOfRange(101), .unsupportedChannelCount(3),
            .inBandFECUnavailable(.tenMilliseconds, .restrictedLowDelay),
        ]
        for error in all {
            XCTAssertFalse(error.description.contains("\n"), error.description)
            XCTAssertFalse(error.description.isEmpty)
        }
        XCTAssertEqual(Set(all.map(\.description)).count, all.count)
    }

    func testCodableFormIsReadable() throws {
        let settings = OpusSettings(
            frameDuration: .twoAndAHalfMilliseconds, bitrate: 96_000, complexity: 5, inBandFEC: false,
            expectedPacketLossPercent: 3, application: .audio)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = String(decoding: try encoder.encode(settings), as: UTF8.self)
        XCTAssertEqual(
            json,
            #"{"application":"audio","bitrate":96000,"complexity":5,"expectedPacketLossPercent":3,"#
                + #""frameDuration":"2.5ms","inBandFEC":false}"#
        )
        XCTAssertEqual(try JSONDecoder().decode(OpusSettings.self, from: Data(json.utf8)), settings)
    }
}
