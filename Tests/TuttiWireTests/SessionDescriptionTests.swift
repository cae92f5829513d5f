import TuttiCore
import TuttiWire
import XCTest

/// The SDP text of a stream, line by line, for each payload format and address family.
final class SessionDescriptionTests: XCTestCase {
    private let loopback = RTPDestination(address: .ipv4(0x7F00_0001), port: 5_004)

    private func sdp(_ lines: [String]) -> String { lines.map { $0 + "\r\n" }.joined() }

    func testL16Stereo() {
        let format = StreamFormat(sampleRate: 48_000, channels: 2, sampleFormat: .l16, packetFrames: 64, targetLatencyFrames: 240)
        let description = SessionDescription(
            sessionID: 0x0011_2233_aabb_ccdd, sessionName: "Tutti stage:out", originHost: "198.18.0.1", destination: loopback,
            payloadType: 96, format: format)
        XCTAssertEqual(
            description.text,
            sdp([
                "v=0",
                "o=- 4822679907192029 0 IN IP4 198.18.0.1",
                "s=Tutti stage:out",
                "c=IN IP4 127.0.0.1",
                "t=0 0",
                "m=audio 5004 RTP/AVP 96",
                "a=rtpmap:96 L16/48000/2",
                "a=ptime:1.333",
                "a=recvonly",
            ]))
    }

    /// An SRTP stream's SDP: `RTP/SAVP` and the SDES key (RFC 4568 §9.1): 30 bytes of key and salt in base64.
    func testSRTPCarriesItsKeyInACryptoLine() {
        let format = StreamFormat(sampleRate: 48_000, channels: 2, sampleFormat: .l16, packetFrames: 64, targetLatencyFrames: 240)
        let description = SessionDescription(
            sessionID: 1, sessionName: "Tutti stage:out", originHost: "198.18.0.1", destination: loopback, payloadType: 96,
            format: format, srtpKey: Array(0..<30))
        let lines = description.lines
        XCTAssertTrue(lines.contains("m=audio 5004 RTP/SAVP 96"), "\(lines)")
        XCTAssertTrue(lines.contains("a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwd"), "\(lines)")
        XCTAssertEqual(lines.firstIndex(of: "a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwd"), 6)
    }

    func testL24MonoAt44100() {
        let format = StreamFormat(sampleRate: 44_100, channels: 1, sampleFormat: .l24, packetFrames: 48, targetLatencyFrames: 220)
        let description = SessionDescription(
            sessionID: 1, sessionName: "Tutti stage:mic", originHost: "127.0.0.1", destination: loopback, payloadType: 97,
            format: format, direction: .sendOnly)
        XCTAssertEqual(
            description.lines,
            [
                "v=0",
                "o=- 1 0 IN IP4 127.0.0.1",
                "s=Tutti stage:mic",
                "c=IN IP4 127.0.0.1",
                "t=0 0",
                "m=audio 5004 RTP/AVP 97",
                "a=rtpmap:97 L24/44100/1",
                "a=ptime:1.088",
                "a=sendonly",
            ])
    }

    func testOpusStereoWithFEC() {
        let settings = OpusSettings(
            frameDuration: .twentyMilliseconds, bitrate: 64_000, inBandFEC: true, expectedPacketLossPercent: 10,
            application: .audio)
        let format = StreamFormat(
            sampleRate: 48_000, channels: 2, sampleFormat: .opus, packetFrames: 960, targetLatencyFrames: 1_920, opus: settings)
        let description = SessionDescription(
            sessionID: 42, sessionName: "Tutti stage:out", originHost: "127.0.0.1", destination: loopback, payloadType: 96,
            format: format)
        XCTAssertEqual(
            description.text,
            sdp([
                "v=0",
                "o=- 42 0 IN IP4 127.0.0.1",
                "s=Tutti stage:out",
                "c=IN IP4 127.0.0.1",
                "t=0 0",
                "m=audio 5004 RTP/AVP 96",
                "a=rtpmap:96 opus/48000/2",
                "a=fmtp:96 stereo=1;sprop-stereo=1;useinbandfec=1;maxaveragebitrate=64000",
                "a=ptime:20",
                "a=recvonly",
            ]))
    }

    func testOpusMonoStillSaysTwoChannelsInRtpmap() {
        let format = StreamFormat(
            sampleRate: 48_000, channels: 1, sampleFormat: .opus, packetFrames: 120, targetLatencyFrames: 240,
            opus: OpusSettings(frameDuration: .twoAndAHalfMilliseconds, bitrate: 48_000))
        let description = SessionDescription(
            sessionID: 7, sessionName: "x", originHost: "127.0.0.1", destination: loopback, payloadType: 100, format: format)
        XCTAssertEqual(
            Array(description.lines.suffix(5)),
            ["m=audio 5004 RTP/AVP 100", "a=rtpmap:100 opus/48000/2", "a=fmtp:100 maxaveragebitrate=48000", "a=ptime:2.5", "a=recvonly"])
    }

    func testIPv6DestinationAndOrigin() {
        let format = StreamFormat(sampleRate: 96_000, channels: 8, sampleFormat: .l24, packetFrames: 16, targetLatencyFrames: 480)
        let destination = RTPDestination(address: .ipv6(high: 0x2001_0002_0000_0000, low: 0x22), port: 6_000)
        let description = SessionDescription(
            sessionID: UInt64.max, sessionName: "Tutti stage:multi", originHost: "2001:2::11", destination: destination,
            payloadType: 127, format: format)
        XCTAssertEqual(
            description.text,
            sdp([
                "v=0",
                "o=- 18446744073709551615 0 IN IP6 2001:2::11",
                "s=Tutti stage:multi",
                "c=IN IP6 2001:2::22",
                "t=0 0",
                "m=audio 6000 RTP/AVP 127",
                "a=rtpmap:127 L24/96000/8",
                "a=ptime:0.167",
                "a=recvonly",
            ]))
    }

    func testFromASendingConnectionSummary() throws {
        let format = StreamFormat(sampleRate: 48_000, channels: 2, sampleFormat: .l16, packetFrames: 48, targetLatencyFrames: 240)
        var summary = ConnectionSummary(
            id: ConnectionID("00000000000000ff")!, role: .sending, source: PortReference(peer: "stage", port: "out"),
            destination: loopback.portReference, format: format, state: .playing, rtpDestination: loopback, payloadType: 96)
        let description = try XCTUnwrap(SessionDescription(connection: summary, originHost: "stage.local"))
        XCTAssertEqual(description.lines[1], "o=- 255 0 IN IP4 stage.local")
        XCTAssertEqual(description.lines[2], "s=Tutti stage:out")
        XCTAssertEqual(description.lines[7], "a=ptime:1")
        summary.role = .receiving
        XCTAssertNil(SessionDescription(connection: summary, originHost: "stage.local"), "only the sending end knows where packets go")
        summary.role = .sending
        summary.rtpDestination = nil
        summary.payloadType = nil
        XCTAssertNil(SessionDescription(connection: summary, originHost: "stage.local"))
    }

    func testNamesCannotBreakALine() {
        let format = StreamFormat(sampleRate: 48_000, channels: 2, sampleFormat: .l16, packetFrames: 64, targetLatencyFrames: 240)
        let description = SessionDescription(
            sessionID: 1, sessionName: "a\r\nm=video 9 RTP/AVP 0", originHost: "bad host\n", destination: loopback, payloadType: 96,
            format: format)
        XCTAssertEqual(description.lines[1], "o=- 1 0 IN IP4 bad-host-")
        XCTAssertEqual(description.lines[2], "s=a  m=video 9 RTP/AVP 0")
        XCTAssertEqual(description.text.components(separatedBy: "\r\n").count, 10)
        XCTAssertEqual(
            SessionDescription(sessionID: 1, sessionName: "", originHost: "h", destination: loopback, payloadType: 96, format: format)
                .lines[2], "s= ")
    }

    /// An empty origin host (found by the `sdp` fuzz target) would leave `o=` with an empty last field, five
    /// fields for readers that split at spaces: it becomes `-`, as spaces and control characters do.
    func testEmptyOriginHostKeepsSixOriginFields() {
        let format = StreamFormat(sampleRate: 48_000, channels: 2, sampleFormat: .l16, packetFrames: 64, targetLatencyFrames: 240)
        let description = SessionDescription(
            sessionID: 4, sessionName: "Tutti stage:out", originHost: "", destination: loopback, payloadType: 96, format: format)
        XCTAssertEqual(description.lines[1], "o=- 4 0 IN IP4 -")
    }
}
