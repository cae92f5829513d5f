import TuttiCore
import TuttiWire
import XCTest

@testable import TuttiSession

/// The bus's graph rules and its pipelines, on A's lifecycle: a connection from a peer to itself only where the
/// destination allows it, no connection that closes a loop (checked by both ends, and by a notice that finds
/// one raced in), the chains that reach each port with their stable IDs, the notices a filter sends downstream
/// when its sources change, and the feedback warning.
final class PipelineRulesTests: XCTestCase {
    typealias D = LifecycleDriver
    let first = D.id(1)
    let second = D.id(2)

    /// A: sender `out`, filter `fx`, receiver `in`, and receiver `mon`, which allows its own peer's audio.
    static let ports = [
        PortDescriptor(name: "out", title: "", kind: .sender, channels: 2, sampleRates: [48_000], sampleFormats: [.l24], live: true),
        PortDescriptor(name: "fx", title: "", kind: .filter, channels: 2, sampleRates: [48_000], sampleFormats: [.l24]),
        PortDescriptor(name: "in", title: "", kind: .receiver, channels: 2, sampleRates: [48_000], sampleFormats: [.l24]),
        PortDescriptor(
            name: "mon", title: "", kind: .receiver, channels: 2, sampleRates: [48_000], sampleFormats: [.l24], allowsSelf: true),
    ]
    static let portsNow: [String: ConnectionLifecycle.PortNow] = Dictionary(
        uniqueKeysWithValues: ports.map { ($0.name, .init(currentRates: [48_000], clock: "system")) })

    static func port(_ peer: String, _ name: String) -> PortReference { PortReference(peer: peer, port: name) }

    private func driver(host: String = "h1", playingOut: Set<String> = []) -> D {
        D(ports: Self.ports, host: host, playingOut: playingOut)
    }

    @discardableResult
    private func connect(_ driver: inout D, _ source: PortReference, _ destination: PortReference, id: ConnectionID) -> [Action] {
        let request = ConnectRequest(
            source: source, destination: destination, destinationEndpoints: [D.endpointB], options: ConnectOptions())
        return driver.feed(.connect(request, id: id, ssrc: 1, ports: Self.portsNow, request: driver.request()))
    }

    /// An offer from `source` (on B's peer unless `senderPeerID` says otherwise) into A's port `port`, reached by
    /// `upstream` (nil: an older peer's offer, the source alone).
    @discardableResult
    private func offer(
        _ driver: inout D, _ id: ConnectionID, from source: PortReference, to port: String, upstream: [Pipeline]?,
        senderPeerID: PeerID = D.peerB
    ) -> [Action] {
        var offer = D.offer(id, from: source)
        offer.destination = Self.port("A", port)
        offer.upstream = upstream
        offer.senderPeerID = senderPeerID
        return driver.feed(.offer(offer, fromHost: "198.18.0.2", ssrc: 0x7777, ports: Self.portsNow, request: driver.request()))
    }

    private static func chain(_ ports: PortReference..., live: Bool = false, host: String? = nil) -> Pipeline {
        Pipeline(ports: ports, live: live ? true : nil, originHost: host)
    }

    private func failure(in actions: [Action]) -> ControlFailure? {
        for case .reply(_, .failure(let failure)) in actions { return failure }
        return nil
    }

    // MARK: - A peer to itself

    func testAConnectionFromAPeerToItselfIsRefusedInOneLineUnlessTheDestinationAllowsIt() {
        var driver = driver()
        let actions = connect(&driver, Self.port("A", "out"), Self.port("A", "in"), id: first)
        let refusal = ControlFailure(
            .selfConnection,
            "A:out → A:in: both ports are on peer A; A:in takes its own peer's audio only with allows-self (e.g. --receiver in=…,allows-self)"
        )
        XCTAssertEqual(
            actions,
            [
                .reply(RequestID(1), .failure(refusal)),
                .report(.refused(source: Self.port("A", "out"), destination: Self.port("A", "in"), refusal)),
            ])
        XCTAssertTrue(driver.isEmpty, "nothing half-connected")

        let allowed = connect(&driver, Self.port("A", "out"), Self.port("A", "mon"), id: second)
        guard case .sendOffer(second, let sent, _, _) = allowed.first else { return XCTFail("A:out → A:mon is offered: \(allowed)") }
        XCTAssertEqual(sent.upstream, [Self.chain(Self.port("A", "out"), live: true, host: "h1")], "a live sender's chain says so")
    }

    func testAnOfferFromTheSamePeerIsRefusedByTheReceiverUnlessThePortAllowsIt() {
        var driver = driver()
        let refused = offer(&driver, first, from: Self.port("A", "out"), to: "in", upstream: nil, senderPeerID: D.peerA)
        XCTAssertEqual(failure(in: refused)?.code, .selfConnection)
        let accepted = offer(&driver, second, from: Self.port("A", "out"), to: "mon", upstream: nil, senderPeerID: D.peerA)
        XCTAssertNil(failure(in: accepted))
        XCTAssertEqual(driver.receivingPhase(second), .starting(cancel: nil))
    }

    // MARK: - Loops

    func testAConnectionThatWouldCloseALoopIsRefusedByTheSenderNamingTheChain() {
        var driver = driver()
        // C:out → B:fx → A:fx is live.
        offer(&driver, first, from: Self.port("B", "fx"), to: "fx", upstream: [Self.chain(Self.port("C", "out"), Self.port("B", "fx"))])
        driver.feed(.started(first, .receiving, mediaPort: 5_004))

        let actions = connect(&driver, Self.port("A", "fx"), Self.port("B", "fx"), id: second)
        XCTAssertEqual(
            failure(in: actions),
            ControlFailure(.cycle, "A:fx → B:fx would close a loop: B:fx already feeds A:fx (C:out → B:fx → A:fx)"))
        XCTAssertNil(driver.sendingPhase(second), "nothing half-connected")
        // Upstream of the origin is a loop too; downstream is not.
        XCTAssertEqual(failure(in: connect(&driver, Self.port("A", "fx"), Self.port("C", "out"), id: D.id(3)))?.code, .cycle)
        XCTAssertNil(failure(in: connect(&driver, Self.port("A", "fx"), Self.port("D", "in"), id: D.id(4))))
    }

    func testAnOfferThatWouldCloseALoopIsRefusedByTheReceiver() {
        var driver = driver()
        let actions = offer(
            &driver, first, from: Self.port("B", "fx"), to: "fx", upstream: [Self.chain(Self.port("A", "fx"), Self.port("B", "fx"))])
        XCTAssertEqual(
            failure(in: actions), ControlFailure(.cycle, "B:fx → A:fx would close a loop: A:fx already feeds B:fx (A:fx → B:fx)"))
        XCTAssertTrue(driver.isEmpty)
    }

    func testANoticeThatShowsARacedLoopClosesTheConnectionAndTellsItsSender() {
        var driver = driver()
        offer(&driver, first, from: Self.port("B", "fx"), to: "fx", upstream: [Self.chain(Self.port("B", "fx"))])
        driver.feed(.started(first, .receiving, mediaPort: 5_004))
        let actions = driver.feed(
            .upstream(UpstreamNotice(connectionID: first, upstream: [Self.chain(Self.port("A", "fx"), Self.port("B", "fx"))])))
        XCTAssertTrue(actions.contains { if case .stop(first, .receiving, _) = $0 { true } else { false } }, "\(actions)")
        XCTAssertTrue(actions.contains { if case .notify(first, .receiving, _, [D.endpointB]) = $0 { true } else { false } }, "\(actions)")

        // Still starting: stopped once started, its offer answered with the reason.
        offer(&driver, second, from: Self.port("B", "fx"), to: "fx", upstream: [Self.chain(Self.port("B", "fx"))])
        XCTAssertEqual(
            driver.feed(
                .upstream(UpstreamNotice(connectionID: second, upstream: [Self.chain(Self.port("A", "fx"), Self.port("B", "fx"))]))),
            [])
        let started = driver.feed(.started(second, .receiving, mediaPort: 5_004))
        XCTAssertEqual(failure(in: started)?.code, .busy, "\(started)")
        XCTAssertTrue(started.contains { if case .stop(second, .receiving, _) = $0 { true } else { false } }, "\(started)")
    }

    // MARK: - Pipelines

    func testAPipelinesIDDependsOnlyOnItsPortsNames() {
        let chain = Self.chain(Self.port("h1", "out"), Self.port("h2", "fx"), Self.port("h3", "in"))
        XCTAssertEqual(chain.id, "11b5ab384f3c", "the ID every host and every version computes for h1:out → h2:fx → h3:in")
        XCTAssertEqual(
            Self.chain(Self.port("H1", "out"), Self.port("h2", "fx"), Self.port("h3", "in")).id, chain.id, "peer names ignore case")
        XCTAssertNotEqual(Self.chain(Self.port("h1", "out"), Self.port("h3", "in")).id, chain.id, "without the filter: another chain")
        XCTAssertNotEqual(Self.chain(Self.port("h1", "out"), Self.port("h2", "fx2"), Self.port("h3", "in")).id, chain.id)
    }

    func testAReceiverListsTheChainsThatReachItAndKeepsTheirIDsAcrossAReconnect() throws {
        var driver = driver()
        let upstream = [Self.chain(Self.port("C", "out"), Self.port("B", "fx"))]
        offer(&driver, first, from: Self.port("B", "fx"), to: "in", upstream: upstream)
        driver.feed(.started(first, .receiving, mediaPort: 5_004))
        var route = try XCTUnwrap(driver.machine.routes.first { $0.port == "in" })
        XCTAssertEqual(route.sources, [Self.port("B", "fx")])
        XCTAssertEqual(route.upstream, [Self.port("B", "fx"), Self.port("C", "out")], "nearest first")
        XCTAssertEqual(route.pipelines.map(\.description), ["C:out → B:fx → A:in"])
        let id = route.pipelines[0].id
        XCTAssertEqual(id, "d417c078cf68")

        // B's filter takes a second source: B tells A.
        driver.feed(
            .upstream(
                UpstreamNotice(
                    connectionID: first, upstream: upstream + [Self.chain(Self.port("E", "out"), Self.port("B", "fx"))])))
        route = try XCTUnwrap(driver.machine.routes.first { $0.port == "in" })
        XCTAssertEqual(route.pipelines.map(\.description), ["C:out → B:fx → A:in", "E:out → B:fx → A:in"])

        // Disconnected and connected again (a new connection): the same chain, the same ID.
        driver.feed(.teardown(TeardownNotice(connectionID: first, reason: "disconnected"), request: driver.request()))
        driver.settle(in: .healthy)
        XCTAssertEqual(driver.machine.routes.first { $0.port == "in" }?.pipelines, [])
        offer(&driver, second, from: Self.port("B", "fx"), to: "in", upstream: upstream)
        driver.feed(.started(second, .receiving, mediaPort: 5_004))
        XCTAssertEqual(driver.machine.routes.first { $0.port == "in" }?.pipelines.map(\.id), [id])
    }

    func testAFilterTellsItsDestinationWhenItsSourcesComeAndGo() {
        var driver = driver()
        // A:fx → B:in, live, with nothing feeding A:fx yet.
        let connected = connect(&driver, Self.port("A", "fx"), Self.port("B", "in"), id: first)
        guard case .sendOffer(first, let sent, _, _) = connected.first else { return XCTFail("\(connected)") }
        XCTAssertEqual(sent.upstream, [], "a filter with no source carries no chain")
        driver.feed(D.answered(first))
        driver.feed(.started(first, .sending, mediaPort: nil))

        // B:out starts feeding A:fx: B:in is told the chain through A:fx.
        let through = [Self.chain(Self.port("B", "out"), Self.port("A", "fx"))]
        let offered = offer(&driver, second, from: Self.port("B", "out"), to: "fx", upstream: nil)
        XCTAssertTrue(offered.contains(.announce(UpstreamNotice(connectionID: first, upstream: through), to: [D.endpointB])), "\(offered)")
        XCTAssertEqual(driver.machine.routes.first { $0.port == "fx" }?.destinations, [Self.port("B", "in")])
        // Nothing changed: nothing to tell.
        XCTAssertFalse(
            driver.feed(.started(second, .receiving, mediaPort: 5_004)).contains { if case .announce = $0 { true } else { false } })

        // It goes: B:in is told that nothing reaches A:fx.
        let gone = driver.feed(.teardown(TeardownNotice(connectionID: second, reason: "disconnected"), request: driver.request()))
        XCTAssertTrue(gone.contains(.announce(UpstreamNotice(connectionID: first, upstream: []), to: [D.endpointB])), "\(gone)")
    }

    // MARK: - Feedback

    func testAReceiverThatPlaysOutWarnsOfALiveInputFromItsOwnHost() {
        var driver = driver(host: "h1", playingOut: ["in"])
        let live = [Self.chain(Self.port("A", "out"), Self.port("B", "fx"), live: true, host: "h1")]
        offer(&driver, first, from: Self.port("B", "fx"), to: "in", upstream: live)
        let started = driver.feed(.started(first, .receiving, mediaPort: 5_004))
        let warning = "feedback: A:out → B:fx → A:in plays the live input A:out out on its own host h1"
        guard case .reply(_, .answer(let answer)) = started.first else { return XCTFail("\(started)") }
        XCTAssertEqual(answer.warning, warning, "the connect reply carries it to the user")
        XCTAssertTrue(started.contains(.report(.feedback(port: "in", warning: warning))), "and the log")
        XCTAssertEqual(driver.machine.routes.first { $0.port == "in" }?.warnings, [warning])
    }

    func testNoFeedbackWarningForAnotherHostsLiveInputARecordingOrARecordedSource() {
        for (host, playingOut, live) in [("h2", Set(["in"]), true), ("h1", Set<String>(), true), ("h1", Set(["in"]), false)] {
            var driver = driver(host: host, playingOut: playingOut)
            let chain = [Self.chain(Self.port("A", "out"), Self.port("B", "fx"), live: live, host: "h1")]
            offer(&driver, first, from: Self.port("B", "fx"), to: "in", upstream: chain)
            let started = driver.feed(.started(first, .receiving, mediaPort: 5_004))
            guard case .reply(_, .answer(let answer)) = started.first else { return XCTFail("\(started)") }
            XCTAssertNil(answer.warning, "host \(host), plays out \(playingOut), live \(live)")
        }
    }
}
