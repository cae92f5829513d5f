import Foundation
import Logging
import TuttiCore
import TuttiEngine
import TuttiTesting
import TuttiWire
import XCTest

@testable import TuttiPeer

/// Real peers on an in-memory control network, a fake DNS-SD directory and a hand-moved clock: discovery,
/// connecting by name alone, and every deadline of a connection's life, without waiting for real time. (The
/// media engine is real: its streams run on loopback, hosts 127.0.0.x.)
final class PeerOnFakeTimeTests: XCTestCase {
    typealias World = FakeWorld

    /// Waits (real time, at most 5 s) until `condition` holds for the peer's description.
    private func eventually(
        _ peer: Peer, _ what: String, file: StaticString = #filePath, line: UInt = #line,
        _ condition: (PeerDescription) -> Bool
    ) async {
        let start = ContinuousClock.now
        while ContinuousClock.now - start < .seconds(5) {
            if condition(await peer.describe()) { return }
            try? await Task.sleep(for: .milliseconds(10))
        }
        XCTFail("\(what): not within 5 s; \(await peer.describe())", file: file, line: line)
    }

    private func assertConnections(
        of peer: Peer, _ expected: Int, _ message: String = "", file: StaticString = #filePath, line: UInt = #line
    ) async {
        let listed = await peer.describe().connections
        XCTAssertEqual(listed.count, expected, message, file: file, line: line)
    }

    private static let request = ConnectRequest(
        source: PortReference(peer: "a", port: "out"), destination: PortReference(peer: "b", port: "in"), destinationEndpoints: [],
        options: ConnectOptions())

    /// a (127.0.0.1, sender `out`) and b (127.0.0.2, receiver `in`) that know each other, a:out → b:in connected.
    private func connectedPair(in world: inout World) async throws -> (a: Peer, b: Peer) {
        let a = try await world.start("a", host: "127.0.0.1", ports: [.toneSender(name: "out")])
        let b = try await world.start("b", host: "127.0.0.2", ports: [.receiver(name: "in", sink: .null)])
        await eventually(a, "a knows b") { $0.knownPeers.map(\.name) == ["b"] }
        // No address in the request: a finds b in its own directory.
        let response = await a.handle(.connect(Self.request), remoteHost: "127.0.0.1")
        guard case .connected(let summary) = response else {
            XCTFail("expected connected, got \(response)")
            return (a, b)
        }
        XCTAssertEqual(summary.rtpDestination?.address, IPAddress(parsing: "127.0.0.2"))
        return (a, b)
    }

    func testPeersFindEachOtherAndConnectByNameAlone() async throws {
        var world = World()
        let (a, b) = try await connectedPair(in: &world)
        let offers = world.network.requests.filter { if case .offer = $0.request { true } else { false } }
        XCTAssertEqual(offers.map(\.to), [World.endpoint(of: b, on: "127.0.0.2")])
        await eventually(b, "b plays a's stream") { $0.connections.first?.state == .playing }
        let sent = await a.describe().connections
        XCTAssertEqual(sent.map(\.destination), [PortReference(peer: "b", port: "in")])
        await world.stopAll()
    }

    func testAKilledReceivingPeerIsDroppedAtTheNextProbe() async throws {
        var world = World()
        let (a, b) = try await connectedPair(in: &world)
        world.network.refuse(World.endpoint(of: b, on: "127.0.0.2"))
        await world.advance(by: .milliseconds(500))
        await assertConnections(of: a, 1, "no probe before a second has passed")
        await world.advance(by: .milliseconds(500))
        await assertConnections(of: a, 0, "the refused probe ends the connection")
        await world.stopAll()
    }

    func testASilentReceivingPeerIsGivenNinetySeconds() async throws {
        var world = World()
        let (a, b) = try await connectedPair(in: &world)
        world.network.silence(World.endpoint(of: b, on: "127.0.0.2"))
        // The first probe goes unanswered at 1 s; the sender gives up 90 s later.
        for _ in 1...90 { await world.advance(by: .seconds(1)) }
        await assertConnections(of: a, 1, "still sending after 90 s")
        await world.advance(by: .seconds(1))
        await assertConnections(of: a, 0, "given up at 91 s")
        await world.stopAll()
    }

    func testAnAnsweredConnectionWhoseMediaNeverComesIsFreedAtNineSeconds() async throws {
        var world = World()
        let b = try await world.start("b", host: "127.0.0.2", ports: [.receiver(name: "in", sink: .null)])
        var generator = SystemRandomNumberGenerator()
        let offer = StreamOffer(
            connectionID: ConnectionID.random(using: &generator), senderPeerID: PeerID(String(repeating: "c", count: 32))!,
            source: PortReference(peer: "ghost", port: "out"), destination: PortReference(peer: "b", port: "in"), channels: 2,
            sampleRates: [48_000], sampleFormats: [.l24], options: ConnectOptions(), captureClock: .realtime, senderControlPort: 9)
        let reply = try await world.network.transport(from: "127.0.0.9")
            .reply(to: .offer(offer), fromAnyOf: [World.endpoint(of: b, on: "127.0.0.2")], timeout: .seconds(1))
        guard case .answer = reply.response else { return XCTFail("expected an answer, got \(reply.response)") }
        await world.advance(by: .milliseconds(8_900))
        do {
            let observed = await b.describe().connections.map(\.state)
            XCTAssertEqual(observed, [.buffering])
        }
        await world.advance(by: .milliseconds(200))
        await assertConnections(of: b, 0)
        // The ghost sender was told (its host refused).
        let notices = world.network.requests.filter { if case .teardown = $0.request { true } else { false } }
        XCTAssertTrue(notices.isEmpty, "nothing listens at the ghost's endpoint: \(notices)")
        await world.stopAll()
    }

    func testANameTakenOnTheNetworkIsRenamedAndBothAreFound() async throws {
        var world = World()
        let first = try await world.start("x", host: "127.0.0.1", ports: [])
        let second = try await world.start("x", host: "127.0.0.2", ports: [])
        let third = try await world.start("c", host: "127.0.0.3", ports: [])
        do {
            let observed = await first.name
            XCTAssertEqual(observed, "x")
        }
        await eventually(second, "renamed") { $0.name == "x #2" }
        await eventually(third, "c knows both") { $0.knownPeers.map(\.name) == ["x", "x #2"] }
        XCTAssertEqual(world.services.publishedNames, ["c", "x", "x #2"])
        await world.stopAll()
    }

    func testAPeerThatStopsIsForgotten() async throws {
        var world = World()
        let a = try await world.start("a", host: "127.0.0.1", ports: [])
        let b = try await world.start("b", host: "127.0.0.2", ports: [])
        await eventually(a, "a knows b") { $0.knownPeers.map(\.name) == ["b"] }
        await b.stop()
        await eventually(a, "a forgot b") { $0.knownPeers.isEmpty }
        XCTAssertEqual(world.services.publishedNames, ["a"])
        await world.stopAll()
    }

    /// A peer that stops while a hello of its own is still on its way must let it land before its bye, or the
    /// hello would bring it back to life over there and keep it in the list for good.
    func testAHelloStillOnItsWayLandsBeforeTheBye() async throws {
        var world = World()
        let a = try await world.start("a", host: "127.0.0.1", ports: [])
        world.network.hold("hello")
        let b = try await world.start("b", host: "127.0.0.2", ports: [])
        await eventually(b, "b knows a") { $0.knownPeers.map(\.name) == ["a"] }
        let network = world.network
        let start = ContinuousClock.now
        while network.heldCount < 2, ContinuousClock.now - start < .seconds(5) { try? await Task.sleep(for: .milliseconds(5)) }
        XCTAssertEqual(network.heldCount, 2, "a's hello to b and b's to a are on their way")
        // Let the hellos go once b has said bye, or after a while if b waits for them first.
        let releasing = Task {
            let start = ContinuousClock.now
            while !network.requests.contains(where: { $0.request.typeName == "bye" }), ContinuousClock.now - start < .milliseconds(300) {
                try? await Task.sleep(for: .milliseconds(5))
            }
            network.release()
        }
        await b.stop()
        await releasing.value
        await eventually(a, "a forgot b") { $0.knownPeers.isEmpty }
        try? await Task.sleep(for: .milliseconds(100))
        let known = await a.describe().knownPeers.map(\.name)
        XCTAssertEqual(known, [], "a still knows nobody once every hello has landed")
        await world.stopAll()
    }
}
