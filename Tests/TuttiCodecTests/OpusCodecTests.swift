import TuttiAnalysis
import TuttiCodec
import TuttiCore
import XCTest

/// The Opus encoder and decoder against libopus 1.3.1: round trips at every frame size, codec delay,
/// concealment, in-band FEC, typed errors. Figures measured on this machine are in the comments; the
/// assertions leave a margin below them.
final class OpusCodecTests: XCTestCase {
    typealias Support = OpusTestSupport

    // MARK: Round trips

    /// A 1 kHz stereo tone through encoder and decoder at 2.5, 5, 10 and 20 ms, with restricted low delay
    /// (Tutti's default, 128 kb/s) and with `audio` (96 kb/s). After the lookahead the decoded tone is
    /// 1000 ± 1 Hz on both channels and matches the delayed input.
    /// Measured SNR against the delayed input (left at −6 dBFS / right at −12 dBFS): 2.5 ms ≈ 23/18 dB (low
    /// delay) and 23/17 dB (audio); 5, 10 and 20 ms 39–46 dB (low delay) and 34–41 dB (audio).
    func testToneRoundTripAtEveryFrameSize() throws {
        for application in [OpusSettings.Application.restrictedLowDelay, .audio] {
            for duration in OpusSettings.FrameDuration.allCases {
                let settings = OpusSettings(
                    frameDuration: duration, bitrate: application == .audio ? 96_000 : 128_000, application: application
                )
                let input = Support.tone(frames: 24_000)
                let (packets, lookahead) = try Support.encode(input, settings: settings)
                XCTAssertEqual(lookahead, application == .restrictedLowDelay ? 120 : 312)
                XCTAssertEqual(packets.count, 24_000 / duration.framesPerChannel)
                var decoder = try OpusDecoder(channels: 2)
                var output = [Float]()
                for packet in packets {
                    let frames = try Support.decode(packet, with: &decoder, capacityFrames: 960)
                    XCTAssertEqual(frames.count, duration.framesPerChannel * 2, "\(settings)")
                    output += frames
                }
                for channel in 0..<2 {
                    let sent = Support.channel(input, channel)
                    let received = Array(Support.channel(output, channel)[lookahead...])
                    // Skip the first 10 ms, where the decoder starts from silence.
                    let settled = 480..<received.count
                    let snr = Support.snr(received[settled], against: sent[settled])
                    let report = ToneAnalysis.analyze(Array(received[settled]), sampleRate: 48_000)
                    print(
                        "Opus round trip \(application) \(duration) ch\(channel): SNR \(snr) dB, \(report.frequency) Hz"
                    )
                    XCTAssertEqual(
                        report.frequency, 1_000, accuracy: 1, "\(application) \(duration) channel \(channel)")
                    // 2.5 ms frames leave CELT a 120-sample transform: far coarser in frequency.
                    let bound: Double = duration == .twoAndAHalfMilliseconds ? 14 : 30
                    XCTAssertGreaterThan(snr, bound, "\(application) \(duration) channel \(channel)")
                }
            }
        }
    }

    /// With a signal that is not periodic (a pitch glide), the decoded audio matches the input best at a lag
    /// of exactly `lookaheadFrames`: 120 frames with restricted low delay, 312 with `audio`.
    /// The lookahead receivers count without building an encoder (`OpusSettings.Application.lookaheadFrames`)
    /// is libopus's own for every application, frame size, channel count and bitrate.
    func testTheLookaheadConstantIsTheEncodersForEverySetting() throws {
        for application in OpusSettings.Application.allCases {
            for duration in OpusSettings.FrameDuration.allCases {
                for channels in OpusSettings.supportedChannels {
                    for bitrate in [OpusSettings.bitrateRange.lowerBound, 128_000, OpusSettings.bitrateRange.upperBound] {
                        let settings = OpusSettings(frameDuration: duration, bitrate: bitrate, application: application)
                        let encoder = try OpusEncoder(settings: settings, channels: channels)
                        XCTAssertEqual(application.lookaheadFrames, encoder.lookaheadFrames, "\(settings), \(channels) ch")
                    }
                }
            }
        }
    }

    func testDecodedAudioLagsTheInputByTheLookahead() throws {
        for application in [OpusSettings.Application.restrictedLowDelay, .audio] {
            for duration in [OpusSettings.FrameDuration.fiveMilliseconds, .twentyMilliseconds] {
                let settings = OpusSettings(frameDuration: duration, bitrate: 128_000, application: application)
                let input = Support.glide(frames: 9_600)
                let (packets, lookahead) = try Support.encode(input, settings: settings)
                var decoder = try OpusDecoder(channels: 2)
                var output = [Float]()
                for packet in packets { output += try Support.decode(packet, with: &decoder, capacityFrames: 960) }
                let sent = Support.channel(input, 0)
                let received = Support.channel(output, 0)
                let window = 960..<5_760
                var best = (lag: -1, snr: -Double.infinity)
                for lag in 0...600 {
                    let snr = Support.snr(
                        received[(window.lowerBound + lag)..<(window.upperBound + lag)], against: sent[window])
                    if snr > best.snr { best = (lag, snr) }
                }
                print("Opus delay \(application) \(duration): best lag \(best.lag) (SNR \(best.snr) dB)")
                XCTAssertEqual(best.lag, lookahead, "\(application) \(duration)")
                XCTAssertGreaterThan(best.snr, 15, "\(application) \(duration)")
            }
        }
    }

    func testMonoRoundTrip() throws {
        let input = Support.tone(frames: 9_600, channels: 1)
        let (packets, lookahead) = try Support.encode(input, settings: .lan, channels: 1)
        var decoder = try OpusDecoder(channels: 1)
        var output = [Float]()
        for packet in packets { output += try Support.decode(packet, with: &decoder, capacityFrames: 240) }
        XCTAssertEqual(output.count, 9_600)
        let snr = Support.snr(output[(lookahead + 480)...], against: input[480..<(9_600 - lookahead)])
        print("Opus mono round trip: SNR \(snr) dB")
        XCTAssertGreaterThan(snr, 20)
    }

    // MARK: Losses

    /// A lost packet of a steady 1 kHz tone (low delay, 128 kb/s, every frame size) is concealed with the
    /// tone, not silence, and without a click: no gap, no step much larger than the loss-free decode's
    /// largest, at most 2 samples off the sine recurrence (ToneAnalysis). Measured: concealed RMS within 2 %
    /// of the loss-free frame's, SNR against it 27 dB (2.5 ms), 48 (5 ms), 38 (10 ms), 37 (20 ms); largest
    /// step 1.16× (2.5 ms) and ≤ 1.0× otherwise; 1 discontinuity at 2.5 ms, 0 otherwise.
    func testConcealmentContinuesTheToneWithoutAClick() throws {
        for duration in OpusSettings.FrameDuration.allCases {
            let settings = OpusSettings(frameDuration: duration)
            let frames = duration.framesPerChannel
            let input = Support.tone(frames: 19_200)
            let (packets, _) = try Support.encode(input, settings: settings)
            let lost = packets.count / 2
            var clean = try OpusDecoder(channels: 2)
            var lossy = try OpusDecoder(channels: 2)
            var reference = [Float]()
            var output = [Float]()
            for (index, packet) in packets.enumerated() {
                reference += try Support.decode(packet, with: &clean, capacityFrames: 960)
                if index == lost {
                    output += try Support.conceal(frames: frames, with: &lossy)
                } else {
                    output += try Support.decode(packet, with: &lossy, capacityFrames: 960)
                }
            }
            let left = Support.channel(output, 0)
            let leftReference = Support.channel(reference, 0)
            let concealed = (lost * frames)..<((lost + 1) * frames)
            let around = (concealed.lowerBound - 1)..<(concealed.upperBound + 1)
            let concealedRMS = Support.rms(left[concealed])
            let referenceRMS = Support.rms(leftReference[concealed])
            let step = Support.largestStep(left[around])
            let referenceStep = Support.largestStep(leftReference[960...])
            let report = ToneAnalysis.analyze(Array(left[960...]), sampleRate: 48_000)
            let referenceReport = ToneAnalysis.analyze(Array(leftReference[960...]), sampleRate: 48_000)
            let snr = Support.snr(left[concealed], against: leftReference[concealed])
            print(
                "Opus PLC \(duration): RMS \(concealedRMS) vs \(referenceRMS),",
                "largest step \(step) vs \(referenceStep),",
                "SNR \(snr) dB, gaps \(report.gaps), discontinuities \(report.discontinuities)",
                "vs \(referenceReport.discontinuities), \(report.frequency) Hz")
            XCTAssertGreaterThan(concealedRMS, 0.5 * referenceRMS, "\(duration): concealment is not silence")
            XCTAssertGreaterThan(snr, 20, "\(duration): concealment does not continue the tone")
            XCTAssertEqual(report.gaps, [], "\(duration)")
            XCTAssertLessThanOrEqual(step, 1.5 * referenceStep, "\(duration): a click at the concealed packet")
            XCTAssertLessThanOrEqual(report.discontinuities, 2, "\(duration): clicks")
            XCTAssertEqual(report.frequency, 1_000, accuracy: 1, "\(duration)")
        }
    }

    /// In-band FEC: packet *n* is lost, packet *n + 1* arrives; `recoverLoss` decodes frame *n* from the LBRR
    /// data in *n + 1*. Compared with the loss-free decode of frame *n*, the recovered frame is far closer
    /// than the concealed one. Settings that carry FEC (measured): `audio` or `voip`, 10 or 20 ms, FEC on,
    /// 20 % expected loss, 64 kb/s stereo; every packet is then hybrid. The signal glides in pitch, so the
    /// lost frame cannot be extrapolated: ≈ 12–19 dB recovered vs ≈ −1 dB concealed, measured.
    func testFECRecoversASingleLostPacket() throws {
        for application in [OpusSettings.Application.audio, .voip] {
            for duration in [OpusSettings.FrameDuration.tenMilliseconds, .twentyMilliseconds] {
                let settings = OpusSettings(
                    frameDuration: duration, bitrate: 64_000, inBandFEC: true, expectedPacketLossPercent: 20,
                    application: application)
                let (recovered, concealed) = try lossFigures(settings)
                print("Opus FEC \(application) \(duration): recovered \(recovered) dB, concealed \(concealed) dB")
                XCTAssertGreaterThan(recovered, 10, "\(application) \(duration)")
                XCTAssertGreaterThan(recovered - concealed, 10, "\(application) \(duration)")
            }
        }
    }

    /// Without LBRR in the next packet, `recoverLoss` is concealment: FEC off, or on with 0 % expected loss
    /// (libopus then codes no LBRR), gives the same samples as `concealLoss`.
    func testRecoveryWithoutFECDataIsConcealment() throws {
        for (fec, loss) in [(false, 0), (true, 0)] {
            let settings = OpusSettings(
                frameDuration: .twentyMilliseconds, bitrate: 64_000, inBandFEC: fec, expectedPacketLossPercent: loss,
                application: .audio)
            let (recovered, concealed) = try lossFigures(settings)
            print("Opus no-FEC control fec=\(fec) loss=\(loss): recovered \(recovered) dB, concealed \(concealed) dB")
            XCTAssertEqual(recovered, concealed, accuracy: 0.01)
        }
    }

    /// Frames shorter than 10 ms are CELT-only in every application, so they cannot carry FEC (SILK's LBRR):
    /// at 32 kb/s, where `audio` with 10 ms frames chooses hybrid, 2.5 and 5 ms packets are all CELT.
    func testShortFramesAreCELTOnly() throws {
        let input = Support.glide(frames: 9_600)
        for application in OpusSettings.Application.allCases {
            for duration in OpusSettings.FrameDuration.allCases {
                let settings = OpusSettings(frameDuration: duration, bitrate: 32_000, application: application)
                let modes = Set(try Support.encode(input, settings: settings).packets.map(Support.mode))
                if duration.canCarrySILK && application != .restrictedLowDelay {
                    XCTAssertTrue(modes.contains(.hybrid), "\(application) \(duration): \(modes)")
                } else {
                    XCTAssertEqual(modes, [.celt], "\(application) \(duration)")
                }
            }
        }
    }

    /// Loses every 7th packet from the 20th on, one at a time, in three decoders fed the same stream: loss-free,
    /// FEC-recovered and concealed. Returns the SNR (dB, both channels) of the recovered and concealed frames
    /// against the loss-free ones.
    private func lossFigures(_ settings: OpusSettings) throws -> (recovered: Double, concealed: Double) {
        let frames = settings.frameDuration.framesPerChannel
        let (packets, _) = try Support.encode(Support.glide(frames: 48_000), settings: settings)
        if settings.inBandFEC && settings.expectedPacketLossPercent > 0 {
            XCTAssertFalse(packets.contains { Support.mode(of: $0) == .celt }, "FEC needs SILK in every packet")
        }
        var reference = [Float]()
        var recovered = [Float]()
        var concealed = [Float]()
        for lost in stride(from: 20, to: packets.count - 1, by: 7) {
            var clean = try OpusDecoder(channels: 2)
            var withFEC = try OpusDecoder(channels: 2)
            var withPLC = try OpusDecoder(channels: 2)
            for packet in packets[0..<lost] {
                _ = try Support.decode(packet, with: &clean, capacityFrames: frames)
                _ = try Support.decode(packet, with: &withFEC, capacityFrames: frames)
                _ = try Support.decode(packet, with: &withPLC, capacityFrames: frames)
            }
            reference += try Support.decode(packets[lost], with: &clean, capacityFrames: frames)
            recovered += try Support.recover(frames: frames, from: packets[lost + 1], with: &withFEC)
            concealed += try Support.conceal(frames: frames, with: &withPLC)
        }
        return (
            Support.snr(recovered[...], against: reference[...]), Support.snr(concealed[...], against: reference[...])
        )
    }

    // MARK: Control

    func testApplyChangesTheBitrateBetweenPackets() throws {
        let settings = OpusSettings(frameDuration: .tenMilliseconds, bitrate: 32_000)
        var encoder = try OpusEncoder(settings: settings, channels: 2)
        XCTAssertEqual(encoder.effectiveBitrate(), 32_000)
        let input = Support.glide(frames: 48_000)
        var packet = [UInt8](repeating: 0, count: OpusSettings.maximumPacketBytes)
        func averageBytes(_ packets: Range<Int>) throws -> Double {
            var total = 0
            for index in packets {
                total += try Support.encode(input[(index * 960)..<((index + 1) * 960)], with: &encoder, into: &packet)
            }
            return Double(total) / Double(packets.count)
        }
        let low = try averageBytes(0..<50)
        var faster = settings
        faster.bitrate = 128_000
        try encoder.apply(faster)
        XCTAssertEqual(encoder.settings, faster)
        XCTAssertEqual(encoder.effectiveBitrate(), 128_000)
        let high = try averageBytes(50..<100)
        print("Opus bytes per 10 ms packet: \(low) at 32 kb/s, \(high) at 128 kb/s")
        // 40 and 160 bytes nominally.
        XCTAssertEqual(low, 40, accuracy: 8)
        XCTAssertEqual(high, 160, accuracy: 32)

        var invalid = faster
        invalid.complexity = 11
        XCTAssertThrowsError(try encoder.apply(invalid)) { error in
            XCTAssertEqual(error as? OpusError, .invalidSettings(.complexityOutOfRange(11)))
        }
        XCTAssertEqual(encoder.settings, faster)
    }

    /// After `reset`, an encoder produces the same packets as a new one; a decoder decodes as a new one.
    func testResetForgetsTheStream() throws {
        let input = Support.glide(frames: 4_800)
        let (fresh, _) = try Support.encode(Array(input[0..<960]), settings: .lan)
        var encoder = try OpusEncoder(settings: .lan, channels: 2)
        var packet = [UInt8](repeating: 0, count: OpusSettings.maximumPacketBytes)
        for index in 0..<10 {
            _ = try Support.encode(input[(index * 480)..<((index + 1) * 480)], with: &encoder, into: &packet)
        }
        encoder.reset()
        var again = [[UInt8]]()
        for index in 0..<2 {
            let length = try Support.encode(input[(index * 480)..<((index + 1) * 480)], with: &encoder, into: &packet)
            again.append(Array(packet[0..<length]))
        }
        XCTAssertEqual(again, fresh)

        var decoder = try OpusDecoder(channels: 2)
        var newDecoder = try OpusDecoder(channels: 2)
        let (packets, _) = try Support.encode(input, settings: .lan)
        for packet in packets { _ = try Support.decode(packet, with: &decoder, capacityFrames: 240) }
        decoder.reset()
        XCTAssertEqual(
            try Support.decode(packets[0], with: &decoder, capacityFrames: 240),
            try Support.decode(packets[0], with: &newDecoder, capacityFrames: 240))
    }

    // MARK: Errors

    func testLibopusErrorsAreTyped() throws {
        var decoder = try OpusDecoder(channels: 2)
        let (packets, _) = try Support.encode(
            Support.tone(frames: 1_920), settings: OpusSettings(frameDuration: .twentyMilliseconds))
        // Code 3 (RFC 6716 §3.2.5) announcing 0 frames: malformed.
        XCTAssertThrowsError(try Support.decode([0xFB, 0x00], with: &decoder, capacityFrames: 960)) {
            XCTAssertEqual($0 as? OpusError, .invalidPacket)
        }
        // Code 1 (two frames of equal size) with an odd number of bytes after the TOC.
        XCTAssertThrowsError(try Support.decode([0xF9, 1, 2, 3], with: &decoder, capacityFrames: 960)) {
            XCTAssertEqual($0 as? OpusError, .invalidPacket)
        }
        XCTAssertThrowsError(try Support.decode([], with: &decoder, capacityFrames: 960)) {
            XCTAssertEqual($0 as? OpusError, .invalidPacket)
        }
        // A 20 ms packet does not fit in 10 ms of room.
        XCTAssertThrowsError(try Support.decode(packets[0], with: &decoder, capacityFrames: 480)) {
            XCTAssertEqual($0 as? OpusError, .bufferTooSmall)
        }
        // Concealment comes in multiples of 2.5 ms.
        XCTAssertThrowsError(try Support.conceal(frames: 100, with: &decoder)) {
            XCTAssertEqual($0 as? OpusError, .badArgument)
        }
        // The decoder is still usable after all that.
        XCTAssertEqual(try Support.decode(packets[1], with: &decoder, capacityFrames: 960).count, 1_920)

        var encoder = try OpusEncoder(settings: .lan, channels: 2)
        // No room at all is an error; one byte is enough for libopus's smallest packet, a bare TOC byte
        // (it decodes as a concealed frame).
        var empty = [UInt8]()
        XCTAssertThrowsError(try Support.encode(Support.tone(frames: 240)[...], with: &encoder, into: &empty)) {
            XCTAssertEqual($0 as? OpusError, .bufferTooSmall)
        }
        var tiny = [UInt8](repeating: 0, count: 1)
        XCTAssertEqual(try Support.encode(Support.tone(frames: 240)[...], with: &encoder, into: &tiny), 1)

        XCTAssertThrowsError(try { _ = try OpusDecoder(channels: 3) }()) {
            XCTAssertEqual($0 as? OpusError, .invalidSettings(.unsupportedChannelCount(3)))
        }
        XCTAssertThrowsError(try { _ = try OpusEncoder(settings: .lan, channels: 0) }()) {
            XCTAssertEqual($0 as? OpusError, .invalidSettings(.unsupportedChannelCount(0)))
        }
        XCTAssertThrowsError(try { _ = try OpusEncoder(settings: OpusSettings(inBandFEC: true), channels: 2) }()) {
            XCTAssertEqual(
                $0 as? OpusError, .invalidSettings(.inBandFECUnavailable(.fiveMilliseconds, .restrictedLowDelay)))
        }

        // Statically typed: the catch clause's `error` is an `OpusError`, no cast.
        let output = UnsafeMutableBufferPointer<Float>.allocate(capacity: 1_920)
        defer { output.deallocate() }
        do throws(OpusError) {
            _ = try decoder.decode(UnsafeRawBufferPointer(start: nil, count: 0), into: output)
            XCTFail("an empty packet decoded")
        } catch {
            XCTAssertEqual(error, .invalidPacket)
        }

        // Codes and texts are libopus's own.
        XCTAssertEqual(OpusError.badArgument.code, -1)
        XCTAssertEqual(OpusError.bufferTooSmall.code, -2)
        XCTAssertEqual(OpusError.invalidPacket.code, -4)
        XCTAssertEqual(OpusError.invalidPacket.message, "corrupted stream")
        XCTAssertEqual(OpusError.bufferTooSmall.message, "buffer too small")
        XCTAssertEqual(OpusError.badArgument.description, "libopus error -1 (invalid argument)")
        XCTAssertEqual(OpusError.allocationFailed.message, "memory allocation failed")
        XCTAssertEqual(OpusError.unknown(code: -42).message, "unknown error")
        XCTAssertEqual(
            OpusError.invalidSettings(.unsupportedChannelCount(3)).description,
            "Opus streams have 1 or 2 channels, not 3")
    }

    func testLibraryVersionIsLibopus() {
        XCTAssertTrue(OpusLibrary.version.hasPrefix("libopus "), OpusLibrary.version)
    }
}
