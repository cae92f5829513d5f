import TuttiCore
import TuttiPeer
import TuttiSecurity
import TuttiTesting
import TuttiWire
import XCTest

/// `hello` and `bye` over real control channels on loopback: a running peer knows a new peer as soon as it
/// says hello and forgets it when it says bye; a hello under a name another peer holds is ignored. The
/// directory's rules are tested on open peers, where the test may speak for any peer; in a members-only
/// session a member speaks only in its own name.
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
        let a = try await lab.start("a", ports: [], access: .open)
        let b = try await lab.start("b", ports: [], access: .open)
        let c = try await lab.start("c", ports: [], access: .open)

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
        let a = try await lab.start("a", ports: [], access: .open)
        let b = try await lab.start("b", ports: [], access: .open)
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
        let a = try await lab.start("a", ports: [], access: .open)
        let b = try await lab.start("b", ports: [], access: .open)
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

    func testInAMembersOnlySessionAMemberSpeaksOnlyInItsOwnName() async throws {
        var lab = LoopbackPeers()
        let a = try await lab.start("a", ports: [])
        let b = try await lab.start("b", ports: [])
        let member = PeerKeyPair()
        let own = PeerPresence(id: member.peerID, name: "k", controlPort: 9)
        let reply = try await TestControl.send(.hello(own), to: a.endpoint, as: member)
        XCTAssertEqual(reply, .done)
        // In b's name, from another member: refused, and b stays unknown.
        guard case .failure(let forged) = try await TestControl.send(.hello(presence(of: b, name: "b")), to: a.endpoint, as: member)
        else { return XCTFail("a hello in another peer's name was taken") }
        XCTAssertEqual(forged.code, .forbidden)
        XCTAssertTrue(forged.message.contains(b.id.rawValue), forged.message)
        guard case .failure(let bye) = try await TestControl.send(.bye(presence(of: b, name: "k")), to: a.endpoint, as: member) else {
            return XCTFail("a bye in another peer's name was taken")
        }
        XCTAssertEqual(bye.code, .forbidden)
        var known = try await TestControl.send(.describe, to: a.endpoint)
        guard case .description(let description) = known else { return XCTFail("\(known)") }
        XCTAssertEqual(description.knownPeers.map(\.name), ["k"])
        XCTAssertEqual(description.access, SessionAccess(membersOnly: true, keyFingerprint: TestSession.keys.current.fingerprint))

        // A host without the key, or with another, is refused before anything is read, in one line each.
        let plain = try await ControlClient.send(.describe, to: a.endpoint)
        guard case .failure(let stranger) = plain else { return XCTFail("a stranger was answered \(plain)") }
        XCTAssertEqual(stranger.code, .notMember)
        XCTAssertTrue(stranger.message.contains("members-only session and this host has no session key"), stranger.message)
        let other = ControlCredentials(keys: SessionKeyRing([SessionKey.random()]))
        let wrong = try await ControlClient.send(.describe, to: a.endpoint, credentials: other)
        guard case .failure(let outsider) = wrong else { return XCTFail("a peer of another session was answered \(wrong)") }
        XCTAssertEqual(outsider.code, .notMember)
        XCTAssertTrue(outsider.message.contains("another session key"), outsider.message)
        // A member of this session will not talk to an open peer.
        let open = try await lab.start("open", ports: [], access: .open)
        guard case .failure(let refused) = try await TestControl.send(.describe, to: open.endpoint) else {
            return XCTFail("a member talked to an open peer")
        }
        XCTAssertEqual(refused.code, .notMember)
        XCTAssertTrue(refused.message.contains("open session"), refused.message)

        known = try await TestControl.send(.describe, to: a.endpoint)
        guard case .description(let after) = known else { return XCTFail("\(known)") }
        XCTAssertEqual(after.refusals?.notMembers, 2)
        XCTAssertEqual(after.refusals?.forbidden, 2)
        await lab.stopAll()
    }
}
