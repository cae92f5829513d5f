import TuttiCore
import TuttiSession
import TuttiWire
import XCTest

/// The control channel's admission on fake time: caps on open connections in all and per address, a token
/// bucket per address for connections and requests, a bounded table of addresses, and every refusal counted.
final class ControlAdmissionTests: XCTestCase {
    private func limits(
        connections: Int = 256, perSource: Int = 32, rate: Double = 100, burst: Double = 200, trackedSources: Int = 1024
    ) -> ControlLimits {
        var limits = ControlLimits()
        limits.connections = connections
        limits.connectionsPerSource = perSource
        limits.requestsPerSecond = rate
        limits.burst = burst
        limits.trackedSources = trackedSources
        return limits
    }

    private let t0 = HostTime(nanoseconds: 1_000_000_000_000)

    func testOneAddressHasAtMostItsShareOfConnectionsAndGetsThemBackAsTheyClose() {
        var admission = ControlAdmission(limits: limits(perSource: 3))
        for _ in 0..<3 { XCTAssertNil(admission.opened(source: "198.18.0.9", now: t0)) }
        XCTAssertEqual(admission.opened(source: "198.18.0.9", now: t0), .tooManyFromSource)
        XCTAssertNil(admission.opened(source: "198.18.0.1", now: t0), "another address still gets in")
        admission.closed(source: "198.18.0.9")
        XCTAssertNil(admission.opened(source: "198.18.0.9", now: t0), "a closed connection gives its place back")
        XCTAssertEqual(admission.openConnections, 4)
        XCTAssertEqual(admission.counters.connectionsRefused, 1)
        XCTAssertEqual(
            ControlAdmission.Refusal.tooManyFromSource.message(source: "198.18.0.9", limits: admission.limits),
            "198.18.0.9 has 3 control connections open to this peer, the most one address may; close some first")
    }

    func testThePeerHasAtMostItsConnectionsInAll() {
        var admission = ControlAdmission(limits: limits(connections: 4, perSource: 2))
        for host in 1...2 {
            for _ in 0..<2 { XCTAssertNil(admission.opened(source: "198.18.0.\(host)", now: t0)) }
        }
        XCTAssertEqual(admission.opened(source: "198.18.0.3", now: t0), .full)
        admission.closed(source: "198.18.0.1")
        XCTAssertNil(admission.opened(source: "198.18.0.3", now: t0))
        XCTAssertEqual(admission.counters.connectionsRefused, 1)
    }

    func testAnAddressOverItsRateIsTurnedAwayUntilItsBucketRefills() {
        var admission = ControlAdmission(limits: limits(rate: 10, burst: 5))
        XCTAssertNil(admission.opened(source: "a", now: t0))  // one token
        for _ in 0..<4 { XCTAssertNil(admission.request(from: "a", now: t0)) }  // four more: the burst is spent
        XCTAssertEqual(admission.request(from: "a", now: t0), .rateLimited)
        XCTAssertEqual(admission.opened(source: "a", now: t0), .rateLimited, "new connections draw from the same bucket")
        XCTAssertNil(admission.request(from: "b", now: t0), "other addresses have their own")
        // 10 a second: after 0.1 s one more, after 0.15 s still only that one.
        XCTAssertNil(admission.request(from: "a", now: t0 + .milliseconds(100)))
        XCTAssertEqual(admission.request(from: "a", now: t0 + .milliseconds(150)), .rateLimited)
        // A quiet second refills the bucket to its burst, no further.
        for _ in 0..<5 { XCTAssertNil(admission.request(from: "a", now: t0 + .seconds(10))) }
        XCTAssertEqual(admission.request(from: "a", now: t0 + .seconds(10)), .rateLimited)
        XCTAssertEqual(admission.counters.rateLimited, 4)
        XCTAssertEqual(admission.counters.connectionsRefused, 0)
    }

    func testTheTableOfAddressesIsBoundedAndForgetsOnlyQuietOnes() {
        var admission = ControlAdmission(limits: limits(rate: 1, burst: 2, trackedSources: 3))
        XCTAssertNil(admission.opened(source: "a", now: t0))  // stays open
        XCTAssertNil(admission.request(from: "b", now: t0))  // bucket not full for a second
        XCTAssertNil(admission.request(from: "c", now: t0))
        XCTAssertEqual(admission.request(from: "d", now: t0), .tooManySources, "b and c have not refilled yet")
        XCTAssertEqual(admission.trackedSources, 3)
        // After 2 s, b and c are full again and are forgotten for d; a keeps its open connection.
        XCTAssertNil(admission.request(from: "d", now: t0 + .seconds(2)))
        XCTAssertEqual(admission.trackedSources, 2)
        XCTAssertEqual(admission.openConnections, 1)
        XCTAssertEqual(admission.counters.connectionsRefused, 1)
    }

    func testTheCountersSumUpInOneLine() {
        var refusals = ControlRefusals()
        XCTAssertTrue(refusals.isEmpty)
        XCTAssertEqual(refusals.summary, "")
        refusals.connectionsRefused = 1200
        refusals.timedOut = 3
        refusals.peersTurnedAway = 1
        XCTAssertEqual(refusals.summary, "1200 connections refused, 3 timed out, 1 peer turned away")
    }
}
