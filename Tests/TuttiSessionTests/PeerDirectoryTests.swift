import TuttiCore
import TuttiSession
import TuttiWire
import XCTest

/// The rules for the peers a peer knows: hello, Avahi, renames and bye.
final class PeerDirectoryTests: XCTestCase {
    private let idB = PeerID(String(repeating: "b", count: 32))!
    private let idC = PeerID(String(repeating: "c", count: 32))!
    private let here = ControlEndpoint(host: "198.18.0.2", port: 7_400)
    private let there = ControlEndpoint(host: "198.18.0.3", port: 7_400)

    func testHelloMakesAPeerKnown() {
        var directory = PeerDirectory()
        XCTAssertTrue(directory.introduced(PeerPresence(id: idB, name: "B", controlPort: 7_400), from: here))
        XCTAssertEqual(directory.knownPeers, [KnownPeer(name: "B", id: idB, endpoints: [here])])
        XCTAssertEqual(directory.endpoints(forPeer: "b"), [here], "names compare case-insensitively")
        XCTAssertEqual(directory.name(of: idB), "B")
        XCTAssertFalse(directory.introduced(PeerPresence(id: idB, name: "B", controlPort: 7_400), from: there), "known already")
        XCTAssertEqual(directory.endpoints(forPeer: "B"), [here])
    }

    func testAHelloUnderANameAnotherIDHoldsIsIgnored() {
        var directory = PeerDirectory()
        XCTAssertTrue(directory.found(KnownPeer(name: "B", id: idB, endpoints: [here])))
        XCTAssertFalse(directory.introduced(PeerPresence(id: idC, name: "B", controlPort: 7_400), from: there))
        XCTAssertEqual(directory.knownPeers, [KnownPeer(name: "B", id: idB, endpoints: [here])])
    }

    func testARenamedPeerReplacesItsOldEntry() {
        var directory = PeerDirectory()
        XCTAssertTrue(directory.found(KnownPeer(name: "B", id: idB, endpoints: [here])))
        XCTAssertTrue(directory.introduced(PeerPresence(id: idB, name: "B (2)", controlPort: 7_400), from: here))
        XCTAssertEqual(directory.knownPeers.map(\.name), ["B (2)"])
        XCTAssertTrue(directory.found(KnownPeer(name: "B (3)", id: idB, endpoints: [there])))
        XCTAssertEqual(directory.knownPeers, [KnownPeer(name: "B (3)", id: idB, endpoints: [there])])
        XCTAssertFalse(directory.found(KnownPeer(name: "B (3)", id: idB, endpoints: [here])), "an update, not a new peer")
        XCTAssertEqual(directory.endpoints(forPeer: "B (3)"), [here])
    }

    func testByeForgetsAPeerByIDAndAvahiByName() {
        var directory = PeerDirectory(explicit: [there])
        XCTAssertEqual(directory.knownPeers, [KnownPeer(name: "198.18.0.3:7400", id: nil, endpoints: [there])])
        _ = directory.found(KnownPeer(name: "B", id: idB, endpoints: [here]))
        _ = directory.found(KnownPeer(name: "C", id: idC, endpoints: [here]))
        XCTAssertEqual(directory.left(id: idB), "B")
        XCTAssertNil(directory.left(id: idB))
        XCTAssertTrue(directory.removed(name: "C"))
        XCTAssertFalse(directory.removed(name: "C"))
        XCTAssertEqual(directory.knownPeers.map(\.name), ["198.18.0.3:7400"])
        XCTAssertNil(directory.endpoints(forPeer: "B"))
    }

    func testAFloodOfNewNamesStopsAtTheCapacityIsCountedAndRoomComesBackAsPeersLeave() {
        var directory = PeerDirectory()
        func id(_ number: Int) -> PeerID {
            PeerID(String(repeating: "0", count: 32 - String(number, radix: 16).count) + String(number, radix: 16))!
        }
        for number in 0..<PeerDirectory.capacity {
            XCTAssertTrue(directory.introduced(PeerPresence(id: id(number), name: "p\(number)", controlPort: 7_400), from: here))
        }
        XCTAssertFalse(directory.introduced(PeerPresence(id: id(9_999), name: "stranger", controlPort: 7_400), from: here))
        XCTAssertFalse(directory.found(KnownPeer(name: "another", id: id(9_998), endpoints: [there])))
        XCTAssertEqual(directory.knownPeers.count, PeerDirectory.capacity)
        XCTAssertNil(directory.endpoints(forPeer: "stranger"))
        XCTAssertEqual(directory.refused, 2, "each one turned away is counted")
        // A known peer still updates, and one that leaves makes room.
        XCTAssertFalse(directory.found(KnownPeer(name: "p0", id: id(0), endpoints: [there])))
        XCTAssertEqual(directory.endpoints(forPeer: "p0"), [there])
        XCTAssertEqual(directory.left(id: id(1)), "p1")
        XCTAssertTrue(directory.introduced(PeerPresence(id: id(9_999), name: "stranger", controlPort: 7_400), from: here))
    }

    func testAPeerKeepsAtMostEightEndpoints() {
        var directory = PeerDirectory()
        let many = (1...20).map { ControlEndpoint(host: "198.18.0.\($0)", port: 7_400) }
        XCTAssertTrue(directory.found(KnownPeer(name: "B", id: idB, endpoints: many)))
        XCTAssertEqual(directory.endpoints(forPeer: "B"), Array(many.prefix(8)))
    }
}
