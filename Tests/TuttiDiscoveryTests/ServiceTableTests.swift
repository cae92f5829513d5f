import XCTest

@testable import TuttiDiscovery

final class ServiceTableTests: XCTestCase {
    private let inet: Int32 = 0
    private let inet6: Int32 = 1

    private func item(_ name: String, interface: Int32 = 2, ipProtocol: Int32 = 0) -> ServiceTable.BrowseKey {
        .init(interface: interface, ipProtocol: ipProtocol, name: name, domain: "local")
    }

    private func resolution(_ address: String, port: UInt16 = 4100, txt: [String: String] = ["id": "1"])
        -> ServiceTable.Resolution
    {
        .init(hostName: "h1.local", addresses: [address], port: port, txt: txt)
    }

    func testNothingIsReportedBeforeResolution() {
        var table = ServiceTable()
        XCTAssertTrue(table.addBrowseItem(item("A")))
        XCTAssertFalse(table.addBrowseItem(item("A")))
        XCTAssertEqual(table.collectChanges(), [])
    }

    func testResolutionsAreMergedAcrossProtocolsAndFamilies() {
        var table = ServiceTable()
        let v4 = item("A", ipProtocol: inet)
        let v6 = item("A", ipProtocol: inet6)
        _ = table.addBrowseItem(v4)
        _ = table.addBrowseItem(v6)
        table.setResolution(resolution("2001:db8::1"), for: .init(item: v6, addressFamily: inet6))
        table.setResolution(resolution("198.18.1.1"), for: .init(item: v4, addressFamily: inet))
        table.setResolution(resolution("2001:db8::1"), for: .init(item: v4, addressFamily: inet6))
        XCTAssertEqual(
            table.collectChanges(),
            [
                .serviceFound(
                    .init(
                        instanceName: "A", hostName: "h1.local", addresses: ["198.18.1.1", "2001:db8::1"],
                        port: 4100, txt: ["id": "1"]))
            ])
        // Same data again: no event.
        table.setResolution(resolution("198.18.1.1"), for: .init(item: v4, addressFamily: inet))
        XCTAssertEqual(table.collectChanges(), [])
    }

    func testChangeIsReportedAgainAndLatestResolutionWins() {
        var table = ServiceTable()
        let v4 = item("A")
        _ = table.addBrowseItem(v4)
        table.setResolution(resolution("198.18.1.1", txt: ["v": "1"]), for: .init(item: v4, addressFamily: inet))
        _ = table.collectChanges()
        table.setResolution(resolution("198.18.1.1", port: 5000, txt: ["v": "2"]), for: .init(item: v4, addressFamily: inet))
        guard case .serviceFound(let service)? = table.collectChanges().first else { return XCTFail("no event") }
        XCTAssertEqual(service.port, 5000)
        XCTAssertEqual(service.txt, ["v": "2"])
    }

    func testRemovedOnlyWhenLastItemGoes() {
        var table = ServiceTable()
        let v4 = item("A", ipProtocol: inet)
        let v6 = item("A", ipProtocol: inet6)
        _ = table.addBrowseItem(v4)
        _ = table.addBrowseItem(v6)
        table.setResolution(resolution("198.18.1.1"), for: .init(item: v4, addressFamily: inet))
        table.setResolution(resolution("2001:db8::1"), for: .init(item: v6, addressFamily: inet6))
        _ = table.collectChanges()

        table.removeBrowseItem(v4)
        XCTAssertTrue(table.isBrowsed("A"))
        guard case .serviceFound(let shrunk)? = table.collectChanges().first else { return XCTFail("no update") }
        XCTAssertEqual(shrunk.addresses, ["2001:db8::1"])

        table.removeBrowseItem(v6)
        XCTAssertFalse(table.isBrowsed("A"))
        XCTAssertEqual(table.collectChanges(), [.serviceRemoved(instanceName: "A")])
        XCTAssertEqual(table.collectChanges(), [])
    }

    func testNeverReportedInstanceIsRemovedSilently() {
        var table = ServiceTable()
        _ = table.addBrowseItem(item("A"))
        table.removeBrowseItem(item("A"))
        XCTAssertEqual(table.collectChanges(), [])
    }

    func testFailedResolutionKeepsLastReport() {
        var table = ServiceTable()
        let v4 = item("A")
        let id = ServiceTable.ResolutionID(item: v4, addressFamily: inet)
        _ = table.addBrowseItem(v4)
        table.setResolution(resolution("198.18.1.1"), for: id)
        _ = table.collectChanges()
        table.clearResolution(for: id)
        XCTAssertEqual(table.collectChanges(), [])
    }

    func testRemoveAllReportsEveryReportedInstance() {
        var table = ServiceTable()
        for name in ["B", "A"] {
            _ = table.addBrowseItem(item(name))
            table.setResolution(resolution("198.18.1.1"), for: .init(item: item(name), addressFamily: inet))
        }
        _ = table.addBrowseItem(item("C"))  // never resolved
        _ = table.collectChanges()
        table.removeAll()
        XCTAssertEqual(table.collectChanges(), [.serviceRemoved(instanceName: "A"), .serviceRemoved(instanceName: "B")])
    }

    func testResolutionForUnknownItemIsIgnored() {
        var table = ServiceTable()
        table.setResolution(resolution("198.18.1.1"), for: .init(item: item("A"), addressFamily: inet))
        XCTAssertEqual(table.collectChanges(), [])
    }

    func testTXTRecordBrowserWinsAndNewestPresentRecordIsUsed() {
        var table = ServiceTable()
        let v4 = item("A")
        _ = table.addBrowseItem(v4)
        table.setResolution(resolution("198.18.1.1", txt: ["v": "resolver"]), for: .init(item: v4, addressFamily: inet))
        table.addTXTRecord([Array("v=1".utf8)], for: v4)
        XCTAssertEqual(table.merged("A")?.txt, ["v": "1"])
        // A new record arrives while the old one is still cached (cache flush takes 1 s).
        table.addTXTRecord([Array("v=2".utf8)], for: v4)
        XCTAssertEqual(table.merged("A")?.txt, ["v": "2"])
        // The old one expires: nothing changes.
        table.removeTXTRecord([Array("v=1".utf8)], for: v4)
        XCTAssertEqual(table.merged("A")?.txt, ["v": "2"])
        // A late resolver report with the new TXT does not override the record browser either.
        table.setResolution(resolution("198.18.1.1", txt: ["v": "2"]), for: .init(item: v4, addressFamily: inet))
        XCTAssertEqual(table.merged("A")?.txt, ["v": "2"])
        // No TXT record left: fall back to the resolver's.
        table.removeTXTRecord([Array("v=2".utf8)], for: v4)
        XCTAssertEqual(table.merged("A")?.txt, ["v": "2"])
    }
}
