import TuttiWire
import XCTest

/// `PEER:PORT` and `HOST:PORT` / `[V6]:PORT` parsing.
final class AddressParsingTests: XCTestCase {
    func testPortReferenceSplitsAtLastColon() throws {
        let reference = try XCTUnwrap(PortReference(parsing: "stage:out"))
        XCTAssertEqual(reference, PortReference(peer: "stage", port: "out"))
        XCTAssertEqual(reference.description, "stage:out")
        XCTAssertEqual(PortReference(parsing: "my peer.local:in_1"), PortReference(peer: "my peer.local", port: "in_1"))
        // The last colon splits, so the colon-free side is the port.
        XCTAssertEqual(PortReference(parsing: "a:b:c"), PortReference(peer: "a:b", port: "c"))
    }

    func testPortReferenceRejectsBadInput() {
        for text in ["", "stage", ":out", "stage:", "stage:bad port", "stage:a/b", "stage:" + String(repeating: "x", count: 33), ":"] {
            XCTAssertNil(PortReference(parsing: text), text)
        }
    }

    func testEndpointParsesHostAndPort() {
        XCTAssertEqual(ControlEndpoint(parsing: "10.0.0.2:7400"), ControlEndpoint(host: "10.0.0.2", port: 7_400))
        XCTAssertEqual(ControlEndpoint(parsing: "stage.local:1"), ControlEndpoint(host: "stage.local", port: 1))
        XCTAssertEqual(ControlEndpoint(parsing: "h:65535"), ControlEndpoint(host: "h", port: 65_535))
    }

    func testEndpointParsesBracketedIPv6() throws {
        let endpoint = try XCTUnwrap(ControlEndpoint(parsing: "[fe80::1%eth0]:7400"))
        XCTAssertEqual(endpoint, ControlEndpoint(host: "fe80::1%eth0", port: 7_400))
        XCTAssertEqual(endpoint.description, "[fe80::1%eth0]:7400")
        XCTAssertEqual(ControlEndpoint(parsing: "[::1]:80"), ControlEndpoint(host: "::1", port: 80))
        XCTAssertEqual(ControlEndpoint(parsing: "[2001:db8::2]:65535"), ControlEndpoint(host: "2001:db8::2", port: 65_535))
    }

    func testEndpointDescriptionParsesBack() {
        for endpoint in [
            ControlEndpoint(host: "::1", port: 9), ControlEndpoint(host: "192.0.2.1", port: 7_400), ControlEndpoint(host: "x", port: 1),
        ] {
            XCTAssertEqual(ControlEndpoint(parsing: endpoint.description), endpoint)
        }
    }

    func testEndpointRejectsBadInput() {
        for text in [
            "", "host", "host:", ":80", "host:65536", "host:-1", "host:port", "::1:80", "[::1]", "[::1]80", "[]:80",
            "[::1:80", "::1", "[::1]:", "[::1]:99999", "host: 80",
        ] {
            XCTAssertNil(ControlEndpoint(parsing: text), text)
        }
    }
}
