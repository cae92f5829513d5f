import TuttiCore
import TuttiPeer
import TuttiWire
import XCTest

/// `hello` and `bye` over real control channels on loopback: a running peer knows a new peer as soon as it
/// says hello and forgets it when it says bye; a hello under a name another peer holds is ignored.
final class PeerPresenceTests: XCTestCase {
    private func knownPeers(of peer: Peer) async throws -> [KnownPeer] {
        guard case .description(let description) = try await ControlClient.send(.describe, to: peer.endpoint) else {
            XCTFail("describe did not answer a description")
            return []
        }
        return description.knownPeers
    }

    private func presence(of peer: Peer, name: String) -> PeerPresence {
        PeerPresence(id: peer.id, name: name, controlPort: peer.controlPort)
    }

    func testHelloMakesAPeerKnownAndByeForgetsIt() async throws {
        var lab = LoopbackPeers()
        let a = try await lab.start("a", ports: [])
        let b = try await lab.start("b", ports: [])
        let c = try await lab.start("c", ports: [])

        let reply = try await ControlClient.send(.hello(presence(of: b, name: "b")), to: a.endpoint)
        XCTAssertEqual(reply, .done)
        var known = try await knownPeers(of: a)
        XCTAssertEqual(known, [KnownPeer(name: "b", id: b.id, endpoints: [ControlEndpoint(host: "127.0.0.1", port: b.controlPort)])])

        // c claims b's name (Avahi will rename it): ignored until it says hello under its new name.
        _ = try await ControlClient.send(.hello(presence(of: c, name: "b")), to: a.endpoint)
        known = try await knownPeers(of: a)
        XCTAssertEqual(known.map(\.id), [b.id])
        _ = try await ControlClient.send(.hello(presence(of: c, name: "b #2")), to: a.endpoint)
        known = try await knownPeers(of: a)
        XCTAssertEqual(known.map(\.name), ["b", "b #2"])
        XCTAssertEqual(known.map(\.id), [b.id, c.id])

        // A renamed peer replaces its old entry.
        _ = try await ControlClient.send(.hello(presence(of: c, name: "c")), to: a.endpoint)
        known = try await knownPeers(of: a)
        XCTAssertEqual(known.map(\.name), ["b", "c"])

        _ = try await ControlClient.send(.bye(presence(of: b, name: "b")), to: a.endpoint)
        known = try await knownPeers(of: a)
        XCTAssertEqual(known.map(\.name), ["c"])
        await lab.stopAll()
    }

    func testAStoppingPeerSaysByeToThePeersItKnows() async throws {
        var lab = LoopbackPeers()
        let a = try await lab.start("a", ports: [])
        let b = try await lab.start("b", ports: [])
        _ = try await ControlClient.send(.hello(presence(of: a, name: "a")), to: b.endpoint)
        _ = try await ControlClient.send(.hello(presence(of: b, name: "b")), to: a.endpoint)
        let before = try await knownPeers(of: a)
        XCTAssertEqual(before.map(\.name), ["b"])

        await b.stop()
        let after = try await knownPeers(of: a)
        XCTAssertEqual(after, [], "b said bye while stopping")
        await lab.stopAll()
    }

    func testBrowserListsPeersThatAnsweringPeersKnow() async throws {
        var lab = LoopbackPeers()
        let a = try await lab.start("a", ports: [])
        let b = try await lab.start("b", ports: [])
        _ = try await ControlClient.send(.hello(presence(of: b, name: "b")), to: a.endpoint)
        // A peer known only by hearsay that does not answer is not listed.
        let ghost = PeerPresence(id: PeerID("0123456789abcdef0123456789abcdef")!, name: "ghost", controlPort: 9)
        _ = try await ControlClient.send(.hello(ghost), to: a.endpoint)

        let (peers, note) = await PeerBrowser.find(explicit: [a.endpoint], useDiscovery: false)
        XCTAssertNil(note)
        XCTAssertEqual(peers.map(\.name), ["a", "b"])
        XCTAssertEqual(peers.map { $0.description?.id }, [a.id, b.id])
        await lab.stopAll()
    }
}
