import TuttiCore
import XCTest

/// CIDR prefixes for `--allow-rtp`: parsing (bare addresses, lengths, typos refused) and matching per family.
final class IPPrefixTests: XCTestCase {
    private func prefix(_ text: String) -> IPPrefix? { IPPrefix(parsing: text) }
    private func address(_ text: String) -> IPAddress { IPAddress(parsing: text)! }

    func testPrefixesParseAndPrintInCIDRForm() {
        XCTAssertEqual(prefix("192.168.1.0/24")?.description, "192.168.1.0/24")
        XCTAssertEqual(prefix("127.0.0.1")?.description, "127.0.0.1/32")
        XCTAssertEqual(prefix("0.0.0.0/0")?.description, "0.0.0.0/0")
        XCTAssertEqual(prefix("2001:db8::/32")?.description, "2001:db8::/32")
        XCTAssertEqual(prefix("::1")?.description, "::1/128")
        XCTAssertEqual(prefix("2001:db8:0:0:8000::/65")?.description, "2001:db8:0:0:8000::/65")
        for bad in ["192.168.1.7/24", "10.0.0.0/33", "::/129", "10.0.0.0/", "10.0.0.0/-1", "10.0.0.0/+8", "host/8", "10.0.0.0/8/8", ""] {
            XCTAssertNil(prefix(bad), bad)
        }
    }

    func testAPrefixHoldsTheAddressesOfItsOwnFamilyUnderIt() {
        let lan = prefix("198.18.0.0/15")!
        XCTAssertTrue(lan.contains(address("198.18.0.1")))
        XCTAssertTrue(lan.contains(address("198.19.255.255")))
        XCTAssertFalse(lan.contains(address("198.20.0.0")))
        XCTAssertFalse(lan.contains(address("::ffff:198.18.0.1")), "a mapped address is IPv6 here")
        XCTAssertTrue(prefix("0.0.0.0/0")!.contains(address("8.8.8.8")))
        XCTAssertFalse(prefix("0.0.0.0/0")!.contains(address("::1")))
        let v6 = prefix("2001:db8:0:0:8000::/65")!
        XCTAssertTrue(v6.contains(address("2001:db8::8000:0:0:1")))
        XCTAssertFalse(v6.contains(address("2001:db8::1")))
        XCTAssertTrue(prefix("::/0")!.contains(address("2001:db8::1")))
        XCTAssertTrue(prefix("127.0.0.1")!.contains(address("127.0.0.1")))
        XCTAssertFalse(prefix("127.0.0.1")!.contains(address("127.0.0.2")))
    }
}
