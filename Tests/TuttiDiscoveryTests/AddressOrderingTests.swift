import XCTest

@testable import TuttiDiscovery

final class AddressOrderingTests: XCTestCase {
    func testIPv4FirstThenGlobalIPv6ThenLinkLocal() {
        let ordered = AddressOrdering.ordered([
            "fe80::1%eth0", "2001:db8::2", "198.18.1.2", "2001:db8::1", "198.18.1.10", "198.18.1.2",
        ])
        XCTAssertEqual(ordered, ["198.18.1.2", "198.18.1.10", "2001:db8::1", "2001:db8::2", "fe80::1%eth0"])
    }

    func testSameLinkLocalOnTwoInterfacesIsKept() {
        XCTAssertEqual(AddressOrdering.ordered(["fe80::1%eth1", "fe80::1%eth0"]), ["fe80::1%eth0", "fe80::1%eth1"])
    }

    func testUnparsableGoesLastAndDoesNotTrap() {
        XCTAssertEqual(AddressOrdering.ordered(["junk", "", "10.0.0.1"]), ["10.0.0.1", "", "junk"])
    }

    func testOrderDoesNotDependOnInput() {
        let a = ["fe80::1%veth0", "192.0.2.1", "2001:db8::1"]
        XCTAssertEqual(AddressOrdering.ordered(a), AddressOrdering.ordered(a.reversed()))
    }
}
