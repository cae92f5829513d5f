import TuttiCore
import TuttiWire
import XCTest

/// `rtp://HOST:PORT` parsing, its one-line refusals, and how the control protocol carries and checks it.
final class RTPDestinationTests: XCTestCase {
    func testIPv4AndBracketedIPv6URLsParse() throws {
        let v4 = try RTPDestination(parsing: "rtp://127.0.0.1:5004")
        XCTAssertEqual(v4, RTPDestination(address: .ipv4(0x7F00_0001), port: 5_004))
        XCTAssertEqual(v4.description, "rtp://127.0.0.1:5004")
        XCTAssertEqual(v4.portReference, PortReference(peer: "rtp://127.0.0.1", port: "5004"))
        XCTAssertEqual(v4.portReference.description, "rtp://127.0.0.1:5004")
        XCTAssertEqual(PortReference(parsing: v4.description), v4.portReference, "the URL parses as its reference")

        let v6 = try RTPDestination(parsing: "RTP://[2001:2:0::2]:65535/")
        XCTAssertEqual(v6.description, "rtp://[2001:2::2]:65535", "canonical text")
        XCTAssertEqual(v6.portReference, PortReference(peer: "rtp://[2001:2::2]", port: "65535"))
        XCTAssertEqual(PortReference(parsing: v6.description), v6.portReference)
        XCTAssertEqual(try RTPDestination(parsing: "rtp://[::1]:5004").address, .ipv6(high: 0, low: 1))
    }

    func testRefusalsSayWhatIsWrongInOneLine() {
        let cases: [(String, RTPDestinationError)] = [
            ("udp://127.0.0.1:5004", .notAnRTPURL("udp://127.0.0.1:5004")),
            ("127.0.0.1:5004", .notAnRTPURL("127.0.0.1:5004")),
            ("rtp://127.0.0.1", .missingPort("rtp://127.0.0.1")),
            ("rtp://127.0.0.1:", .missingPort("rtp://127.0.0.1:")),
            ("rtp://[::1]", .missingPort("rtp://[::1]")),
            ("rtp://127.0.0.1:0", .badPort("rtp://127.0.0.1:0")),
            ("rtp://127.0.0.1:65536", .badPort("rtp://127.0.0.1:65536")),
            ("rtp://127.0.0.1:+5", .badPort("rtp://127.0.0.1:+5")),
            ("rtp://127.0.0.1:50x", .badPort("rtp://127.0.0.1:50x")),
            ("rtp://::1:5004", .unbracketedIPv6("rtp://::1:5004")),
            ("rtp://:5004", .malformed("rtp://:5004")),
            ("rtp://[::1:5004", .malformed("rtp://[::1:5004")),
            ("rtp://127.0.0.1/x:5004", .malformed("rtp://127.0.0.1/x:5004")),
            ("rtp://user@127.0.0.1:5004", .malformed("rtp://user@127.0.0.1:5004")),
            ("rtp://receiver.local:5004", .hostName("receiver.local")),
            ("rtp://localhost:5004", .hostName("localhost")),
            ("rtp://[fe80::1%eth0]:5004", .zonedAddress("rtp://[fe80::1%eth0]:5004")),
            ("rtp://0.0.0.0:5004", .unspecifiedAddress("rtp://0.0.0.0:5004")),
            ("rtp://[::]:5004", .unspecifiedAddress("rtp://[::]:5004")),
            ("rtp://224.0.0.56:46000", .multicastAddress("rtp://224.0.0.56:46000")),
            ("rtp://[ff02::1]:5004", .multicastAddress("rtp://[ff02::1]:5004")),
        ]
        for (text, expected) in cases {
            XCTAssertThrowsError(try RTPDestination(parsing: text), text) { error in
                XCTAssertEqual(error as? RTPDestinationError, expected, text)
                XCTAssertFalse("\(error)".contains("\n"))
            }
        }
        XCTAssertEqual(
            RTPDestinationError.hostName("receiver.local").description,
            "'receiver.local' is a host name: rtp:// needs a numeric IPv4 or [IPv6] address (Tutti does not look names up in DNS)")
        XCTAssertEqual(
            RTPDestinationError.multicastAddress("rtp://224.0.0.56:46000").description,
            "rtp://224.0.0.56:46000: multicast destinations are not supported yet; give a unicast address")
    }

    func testConnectRequestsToRTPDestinationsAreCheckedStrictly() throws {
        XCTAssertNil(rejection(of: .connect(ControlFixtures.rtpConnect)))
        var mismatched = ControlFixtures.rtpConnect
        mismatched.destination = PortReference(peer: "rtp://[2001:2::2]", port: "5006")
        XCTAssertEqual(
            rejection(of: .connect(mismatched)), .invalidField("destination must be rtp://[2001:2::2]:5004 for an RTP destination"))
        var withEndpoints = ControlFixtures.rtpConnect
        withEndpoints.destinationEndpoints = [ControlEndpoint(host: "127.0.0.1", port: 7_400)]
        XCTAssertEqual(rejection(of: .connect(withEndpoints)), .invalidField("an RTP destination has no destinationEndpoints"))
        var multicast = ControlFixtures.rtpConnect
        multicast.rtpDestination = RTPDestination(address: .ipv4(0xE000_0038), port: 5_004)
        multicast.destination = multicast.rtpDestination!.portReference
        XCTAssertEqual(
            rejection(of: .connect(multicast)),
            .invalidField("rtpDestination: rtp://224.0.0.56:5004: multicast destinations are not supported yet; give a unicast address"))
        var zeroPort = ControlFixtures.rtpConnect
        zeroPort.rtpDestination!.port = 0
        zeroPort.destination = zeroPort.rtpDestination!.portReference
        XCTAssertEqual(rejection(of: .connect(zeroPort)), .invalidField("rtpDestination port must not be 0"))
    }

    func testAHostNameInTheWireFormIsRefused() throws {
        let frame = encodedRequest(ControlEnvelope(id: 1, message: .connect(ControlFixtures.rtpConnect)))
        let json = String(decoding: body(of: frame), as: UTF8.self)
        XCTAssertTrue(json.contains(#""rtpDestination":{"address":"2001:2::2","port":5004}"#), json)
        let named = json.replacingOccurrences(of: #""address":"2001:2::2""#, with: #""address":"receiver.local""#)
        guard case .failure(let error) = decodeRequest(named) else { return XCTFail("accepted a host name") }
        XCTAssertTrue(isInvalidField(error) || "\(error)".contains("literal"), "\(error)")
    }

    func testSummariesCarryDestinationAndPayloadTypeTogether() {
        var summary = ConnectionSummary(
            id: ControlFixtures.connectionID, role: .sending, source: ControlFixtures.source,
            destination: ControlFixtures.destination, format: ControlFixtures.format, state: .playing,
            rtpDestination: RTPDestination(address: .ipv4(0x7F00_0001), port: 40_000), payloadType: 96)
        XCTAssertNil(rejection(of: .connected(summary)))
        summary.payloadType = nil
        XCTAssertEqual(rejection(of: .connected(summary)), .invalidField("rtpDestination and payloadType go together"))
        summary.payloadType = 8
        XCTAssertEqual(rejection(of: .connected(summary)), .invalidField("payloadType must be dynamic (96–127)"))
        summary.payloadType = 127
        summary.rtpDestination = RTPDestination(address: .ipv4(0), port: 40_000)
        XCTAssertEqual(
            rejection(of: .connected(summary)), .invalidField("rtpDestination: rtp://0.0.0.0:40000: 0.0.0.0 is not a destination"))
    }
}
