import TuttiCore
import TuttiSession
import TuttiWire
import XCTest

/// The sender's own choice of format for a standard RTP receiver, and its refusals word for word.
final class StandardReceiverFormatTests: XCTestCase {
    private let source = PortReference(peer: "stage", port: "out")
    private let destination = RTPDestination(address: .ipv4(0x7F00_0001), port: 5_004)

    private func port(channels: Int = 2, rates: [Int] = [48_000, 44_100, 96_000], formats: [SampleFormat] = [.l24, .l16, .opus])
        -> PortDescriptor
    {
        PortDescriptor(name: "out", title: "Tone", kind: .sender, channels: channels, sampleRates: rates, sampleFormats: formats)
    }

    private func choose(
        _ port: PortDescriptor, currentRates: [Int]? = nil, options: ConnectOptions = ConnectOptions()
    ) -> Result<StreamFormat, NegotiationRefusal> {
        let result = StandardReceiverFormat.chooseFormat(
            source: source, destination: destination, port: port, currentRates: currentRates ?? port.sampleRates, options: options)
        if case .success(let format) = result {
            XCTAssertNoThrow(try ControlValidation.check(format), "what the sender chooses passes the wire's checks")
        }
        return result
    }

    private func refusal(_ result: Result<StreamFormat, NegotiationRefusal>) -> String? {
        if case .failure(let refusal) = result { return refusal.message }
        return nil
    }

    func testDefaultsAreL16At48kHzWithThePortsChannels() throws {
        let format = try choose(port(channels: 2, rates: [44_100, 48_000])).get()
        XCTAssertEqual(
            format, StreamFormat(sampleRate: 48_000, channels: 2, sampleFormat: .l16, packetFrames: 64, targetLatencyFrames: 192))
        let cdOnly = try choose(port(channels: 6, rates: [44_100, 22_050])).get()
        XCTAssertEqual(cdOnly.sampleRate, 44_100, "the port's first rate when it cannot run at 48 kHz")
        XCTAssertEqual(cdOnly.channels, 6)
        XCTAssertEqual(try choose(port(), currentRates: [96_000]).get().sampleRate, 96_000, "a port already streaming keeps its rate")
    }

    func testOptionsAreHonoured() throws {
        let format = try choose(port(), options: ConnectOptions(sampleRate: 44_100, channels: 1, sampleFormat: .l24, packetFrames: 48))
            .get()
        XCTAssertEqual(
            format, StreamFormat(sampleRate: 44_100, channels: 1, sampleFormat: .l24, packetFrames: 48, targetLatencyFrames: 176))
    }

    func testOpusIs48kHzAndAtMostStereo() throws {
        let settings = OpusSettings(
            frameDuration: .twentyMilliseconds, bitrate: 64_000, inBandFEC: true, expectedPacketLossPercent: 5, application: .audio)
        let format = try choose(port(channels: 4, rates: [44_100, 48_000]), options: ConnectOptions(sampleFormat: .opus, opus: settings))
            .get()
        XCTAssertEqual(format.sampleRate, 48_000)
        XCTAssertEqual(format.channels, 2, "a 4-channel port sends its first two")
        XCTAssertEqual(format.packetFrames, 960)
        XCTAssertEqual(format.opus, settings)
        XCTAssertEqual(try choose(port(channels: 1), options: ConnectOptions(sampleFormat: .opus)).get().channels, 1)
        XCTAssertEqual(try choose(port(), options: ConnectOptions(sampleFormat: .opus)).get().opus, .lan)
    }

    func testRefusalsSayWhyInOneLine() {
        XCTAssertEqual(
            refusal(choose(port(channels: 4), options: ConnectOptions(channels: 4, sampleFormat: .opus))),
            "Opus streams carry 1 or 2 channels, not 4; use --channels 2 or PCM")
        XCTAssertEqual(
            refusal(choose(port(rates: [44_100]), options: ConnectOptions(sampleFormat: .opus))),
            "Opus streams run at 48000 Hz, and stage:out sends at 44100 Hz; use --rate 48000 or PCM")
        XCTAssertEqual(
            refusal(choose(port(formats: [.l24]))),
            "stage:out does not send L16 (it sends L24); choose one with --format")
        XCTAssertEqual(
            refusal(choose(port(), options: ConnectOptions(sampleRate: 32_000))),
            "stage:out cannot send at 32000 Hz (it offers 48000, 44100, 96000 Hz)")
        XCTAssertEqual(
            refusal(choose(port(), currentRates: [44_100], options: ConnectOptions(sampleRate: 48_000))),
            "stage:out cannot send at 48000 Hz (it offers 44100 Hz)")
        XCTAssertEqual(
            refusal(choose(port(channels: 2), options: ConnectOptions(channels: 3))), "cannot stream 3 channels: stage:out has 2")
        XCTAssertEqual(
            refusal(choose(port(channels: 8), options: ConnectOptions(packetFrames: 256))),
            "packets of 256 frames × 8 channels of L16 exceed 1400 bytes; use at most 87 frames")
        XCTAssertEqual(
            refusal(choose(port(), options: ConnectOptions(sampleFormat: .opus, packetFrames: 64))),
            "an Opus packet is one 5ms frame (240 frames), not 64; use --frame instead of --frames")
        for options in [
            ConnectOptions(latencyMilliseconds: 10), ConnectOptions(synchronizedLatencyMilliseconds: 30),
            ConnectOptions(latencyFloorMilliseconds: 2, latencyCeilingMilliseconds: 20),
        ] {
            XCTAssertEqual(
                refusal(choose(port(), options: options)),
                "--latency and --sync set a Tutti receiver's buffer; rtp://127.0.0.1:5004 is a standard RTP receiver with its own, so leave them out"
            )
        }
    }
}
