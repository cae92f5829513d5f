import TuttiCore
import XCTest

/// `IPAddress`: numeric literals only, RFC 5952 text, and the predicates a destination check needs.
final class IPAddressTests: XCTestCase {
    func testIPv4LiteralsParseAndPrintBack() throws {
        XCTAssertEqual(IPAddress(parsing: "127.0.0.1"), .ipv4(0x7F00_0001))
        XCTAssertEqual(IPAddress(parsing: "198.18.0.1"), .ipv4(0xC612_0001))
        XCTAssertEqual(IPAddress(parsing: "255.255.255.255"), .ipv4(0xFFFF_FFFF))
        XCTAssertEqual(IPAddress(parsing: "0.0.0.0"), .ipv4(0))
        for text in ["127.0.0.1", "198.18.0.1", "10.20.30.40", "0.0.0.0"] {
            XCTAssertEqual(try XCTUnwrap(IPAddress(parsing: text)).description, text)
        }
    }

    func testIPv6LiteralsParseToRFC5952Text() throws {
        let cases: [(String, String)] = [
            ("::1", "::1"),
            ("::", "::"),
            ("0:0:0:0:0:0:0:1", "::1"),
            ("2001:2::1", "2001:2::1"),
            ("2001:0002:0000:0000:0000:0000:0000:0001", "2001:2::1"),
            ("2001:DB8::A", "2001:db8::a"),
            ("1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8"),
            ("1:0:0:2:0:0:0:3", "1:0:0:2::3"),  // the longest run is compressed
            ("1:0:0:2:0:0:3:4", "1::2:0:0:3:4"),  // the first of two equal runs
            ("1:0:2:3:4:5:6:7", "1:0:2:3:4:5:6:7"),  // a single zero group stays
            ("fe80::", "fe80::"),
            ("::ffff:192.0.2.1", "::ffff:192.0.2.1"),
            ("::ffff:c000:0201", "::ffff:192.0.2.1"),
            ("64:ff9b::192.0.2.1", "64:ff9b::c000:201"),
        ]
        for (text, canonical) in cases {
            let address = try XCTUnwrap(IPAddress(parsing: text), text)
            XCTAssertTrue(address.isIPv6, text)
            XCTAssertEqual(address.description, canonical, text)
            XCTAssertEqual(IPAddress(parsing: canonical), address, "\(canonical) parses back")
        }
        XCTAssertEqual(IPAddress(parsing: "::1"), .ipv6(high: 0, low: 1))
        XCTAssertEqual(IPAddress(parsing: "::1")?.uriHost, "[::1]")
        XCTAssertEqual(IPAddress(parsing: "127.0.0.1")?.uriHost, "127.0.0.1")
    }

    func testAnythingButALiteralIsRefused() {
        for text in [
            "", "localhost", "stage.local", "example.com", "1.2.3", "1.2.3.4.5", "256.1.1.1", "1.2.3.04", "01.2.3.4",
            "1.2.3.-4", "1.2.3.4 ", " 1.2.3.4", "1..3.4", "[::1]", "::1%lo", "fe80::1%eth0", ":::", "1:::2", "1::2::3",
            ":1::2", "1::2:", "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7", "1:2:3:4:5:6:7:8::", "12345::", "g::1", "1.2.3.4::",
            "::1.2.3", ":", "::ffff:1.2.3.4:5", "0x7f.0.0.1", "127.1",
        ] {
            XCTAssertNil(IPAddress(parsing: text), text)
        }
    }

    func testPredicates() throws {
        // Each address, and what it is: loopback, multicast, unspecified.
        let cases: [(text: String, loopback: Bool, multicast: Bool, unspecified: Bool)] = [
            ("127.0.0.1", true, false, false), ("127.255.0.9", true, false, false), ("::1", true, false, false),
            ("198.18.0.1", false, false, false), ("::2", false, false, false),
            ("224.0.0.56", false, true, false), ("239.255.255.250", false, true, false), ("ff02::1", false, true, false),
            ("223.255.255.255", false, false, false), ("2001:2::1", false, false, false),
            ("0.0.0.0", false, false, true), ("::", false, false, true),
        ]
        for (text, loopback, multicast, unspecified) in cases {
            let address = try XCTUnwrap(IPAddress(parsing: text), text)
            XCTAssertEqual(address.isLoopback, loopback, "\(text) loopback")
            XCTAssertEqual(address.isMulticast, multicast, "\(text) multicast")
            XCTAssertEqual(address.isUnspecified, unspecified, "\(text) unspecified")
        }
    }
}
