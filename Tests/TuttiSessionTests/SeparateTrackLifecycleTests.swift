import TuttiCore
import TuttiWire
import XCTest

@testable import TuttiSession

/// A separate-mode receiver on A's lifecycle: each pipeline that reaches it gets a track of its own, kept when the
/// pipeline reconnects (after a teardown, or when its sender comes back after a restart); a port whose tracks all
/// play refuses another pipeline in one line; every stream plays at the port's latency after capture.
final class SeparateTrackLifecycleTests: XCTestCase {
    typealias D = LifecycleDriver

    /// A: receiver `rec`, two tracks, 12 ms after capture.
    static let ports = [
        PortDescriptor(name: "rec", title: "", kind: .receiver, channels: 2, sampleRates: [48_000], sampleFormats: [.l24])
            .separate(tracks: 2, latencyMilliseconds: 12)
    ]
    static let portsNow: [String: ConnectionLifecycle.PortNow] = ["rec": .init(currentRates: [], clock: "system")]

    private static func port(_ peer: String, _ name: String) -> PortReference { PortReference(peer: peer, port: name) }

    /// An offer from B's port `source` into `rec`, its source alone upstream (or `upstream`).
    @discardableResult
    private func offer(_ driver: inout D, _ id: ConnectionID, from source: String, upstream: [Pipeline]? = nil) -> [Action] {
        var offer = D.offer(id, from: Self.port("B", source))
        offer.destination = Self.port("A", "rec")
        offer.upstream = upstream
        return driver.feed(.offer(offer, fromHost: "198.18.0.2", ssrc: 0x7777, ports: Self.portsNow, request: driver.request()))
    }

    private func plan(in actions: [Action]) -> ConnectionLifecycle.ReceivePlan? {
        for case .startReceiving(let plan) in actions { return plan }
        return nil
    }

    private func failure(in actions: [Action]) -> ControlFailure? {
        for case .reply(_, .failure(let failure)) in actions { return failure }
        return nil
    }

    func testEachPipelineTakesATrackAndAFullPortRefusesInOneLine() throws {
        var driver = D(ports: Self.ports)
        let first = try XCTUnwrap(plan(in: offer(&driver, D.id(1), from: "one")))
        let second = try XCTUnwrap(plan(in: offer(&driver, D.id(2), from: "two")))
        XCTAssertEqual(first.summary.track, 0)
        XCTAssertEqual(second.summary.track, 1)
        XCTAssertEqual(first.summary.format.synchronizedLatencyNanoseconds, 12_000_000, "every track plays 12 ms after capture")
        XCTAssertEqual(second.summary.format.synchronizedLatencyNanoseconds, 12_000_000)

        let third = offer(&driver, D.id(3), from: "three")
        XCTAssertNil(plan(in: third), "nothing starts")
        XCTAssertEqual(
            failure(in: third),
            ControlFailure(
                .busy,
                "A:rec has 2 tracks and each plays a pipeline now (track 1: B:one, track 2: B:two); disconnect one first, or give the port more (tracks=N)"
            ))
        XCTAssertNil(driver.machine.receiving[D.id(3)], "nothing half-connected")
    }

    func testAPipelineThatReconnectsLandsOnItsTrackAndANewOneTakesTheTrackFreedLongestAgo() throws {
        var driver = D(ports: Self.ports)
        offer(&driver, D.id(1), from: "one")
        offer(&driver, D.id(2), from: "two")
        for id in [D.id(1), D.id(2)] {
            driver.feed(.started(id, .receiving, mediaPort: 5_004))
            driver.feed(.observed(id, .playing))
        }
        // "one" goes (its sender disconnects) and comes back: track 1 again, though "two" is on the other one.
        driver.feed(.teardown(TeardownNotice(connectionID: D.id(1), reason: "disconnected"), request: driver.request()))
        driver.feed(.stopped(D.id(1), .receiving))
        let again = try XCTUnwrap(plan(in: offer(&driver, D.id(3), from: "one")))
        XCTAssertEqual(again.summary.track, 0, "a reconnected pipeline lands on its own track")

        // A sender that restarted offers again while its old stream is lost: the old connection gives way, and
        // the new one keeps the track.
        driver.feed(.started(D.id(3), .receiving, mediaPort: 5_004))
        driver.feed(.observed(D.id(3), .playing))
        driver.feed(.observed(D.id(2), .lost))
        let restarted = try XCTUnwrap(plan(in: offer(&driver, D.id(4), from: "two")))
        XCTAssertEqual(restarted.summary.track, 1, "the restarted sender's pipeline keeps track 2")

        // Through a filter, a chain is another pipeline: once "one" has gone, it takes the track freed longest ago.
        driver.feed(.teardown(TeardownNotice(connectionID: D.id(3), reason: "disconnected"), request: driver.request()))
        driver.feed(.stopped(D.id(3), .receiving))
        let chain = Pipeline(ports: [Self.port("C", "out"), Self.port("B", "fx")], live: nil, originHost: nil)
        let filtered = try XCTUnwrap(plan(in: offer(&driver, D.id(5), from: "fx", upstream: [chain])))
        XCTAssertEqual(filtered.summary.track, 0)
    }

    func testTheTrackKeyIsThePipelinesTheConnectionBringsSorted() {
        let destination = Self.port("A", "rec")
        let a = Pipeline(ports: [Self.port("C", "out"), Self.port("B", "fx")], live: nil, originHost: nil)
        let b = Pipeline(ports: [Self.port("D", "out"), Self.port("B", "fx")], live: nil, originHost: nil)
        let key = ConnectionLifecycle.trackKey(upstream: [a, b], destination: destination)
        XCTAssertEqual(key, ConnectionLifecycle.trackKey(upstream: [b, a], destination: destination), "order does not matter")
        XCTAssertEqual(key.split(separator: "+").count, 2)
        XCTAssertTrue(key.contains(a.extended(to: destination).id))
    }
}
