import TuttiCore
import TuttiWire
import XCTest

@testable import TuttiSession

/// The timeouts a running peer uses (`LifecycleTimeouts.peer`): a stream lost to the network is kept (while
/// its sender says it still sends it) and resumes when packets come back, a sender keeps streaming to a silent receiver for 90 s, a receiver whose host
/// refuses control ends at once, and an answered connection that never plays is freed within 10 s.
final class PeerTimeoutsTests: XCTestCase {
    typealias D = LifecycleDriver
    let first = D.id(1)

    private func isStop(_ action: Action) -> Bool { if case .stop = action { true } else { false } }

    func testAStreamLostToTheNetworkIsKeptAndResumes() {
        var driver = D(timeouts: .peer)
        driver.playingReceiver(first)
        driver.feed(.observed(first, .lost))
        XCTAssertEqual(driver.machine.nextDeadline, driver.now + .seconds(2), "only the question to the sender is scheduled")
        // The sender answers that it still sends the stream: only the media is lost on the way.
        let stillSent = ConnectionSummary(
            id: first, role: .sending, source: D.remoteSource, destination: D.localDestination, format: D.format, state: .playing)
        var stops = 0
        for _ in 0..<(4 * 120) {
            let actions = driver.advance(.milliseconds(250))
            stops += actions.filter(isStop).count
            for case .probe(let endpoints, _) in actions {
                stops += driver.feed(.probed(to: endpoints, .listed([stillSent]))).filter(isStop).count
            }
        }
        XCTAssertEqual(stops, 0, "two minutes lost, still held")
        XCTAssertEqual(driver.feed(.observed(first, .playing)), [.report(.resumed(driver.machine.receiving[first]!.plan.summary))])
        guard case .playing = driver.receivingPhase(first) else { return XCTFail("not playing after it resumed") }
    }

    func testASilentReceiverIsGivenNinetySeconds() {
        var driver = D(timeouts: .peer)
        driver.liveSender(first)
        let start = driver.now
        var stoppedAt: HostTime?
        while stoppedAt == nil, driver.now - start < .seconds(120) {
            let actions = driver.advance(.milliseconds(250))
            if actions.contains(where: isStop) { stoppedAt = driver.now }
            for case .probe(let endpoints, _) in actions { driver.feed(.probed(to: endpoints, .unanswered)) }
        }
        guard let stoppedAt else { return XCTFail("never stopped") }
        XCTAssertGreaterThanOrEqual(stoppedAt - start, .seconds(90))
        XCTAssertLessThan(stoppedAt - start, .seconds(92))
        XCTAssertEqual(driver.log.last, .notify(first, .sending, reason: "closed: B does not answer", to: [D.endpointB]))
    }

    func testAReceiverWhoseHostRefusesControlEndsAtTheNextProbe() {
        var driver = D(timeouts: .peer)
        driver.liveSender(first)
        let start = driver.now
        var refusedAt: HostTime?
        while refusedAt == nil, driver.now - start < .seconds(5) {
            for case .probe(let endpoints, _) in driver.advance(.milliseconds(250)) {
                driver.feed(.probed(to: endpoints, .refused))
                refusedAt = driver.now
            }
        }
        XCTAssertNotNil(refusedAt)
        XCTAssertLessThanOrEqual(driver.now - start, .seconds(1) + .milliseconds(250))
        XCTAssertEqual(driver.log.last, .stop(first, .sending, reason: "closed: B is not running"))
    }

    func testAnAnsweredConnectionThatNeverPlaysIsFreedWithinTenSeconds() {
        var driver = D(timeouts: .peer)
        driver.awaitingReceiver(first)
        let start = driver.now
        var stoppedAt: HostTime?
        while stoppedAt == nil, driver.now - start < .seconds(20) {
            if driver.advance(.milliseconds(250)).contains(where: isStop) { stoppedAt = driver.now }
        }
        guard let stoppedAt else { return XCTFail("never freed") }
        XCTAssertLessThan(stoppedAt - start, .seconds(10))
        XCTAssertEqual(
            driver.log.suffix(2),
            [
                .stop(first, .receiving, reason: "closed: no media arrived in 9 s"),
                .notify(first, .receiving, reason: "closed: no media arrived in 9 s", to: [D.endpointB]),
            ])
    }
}
