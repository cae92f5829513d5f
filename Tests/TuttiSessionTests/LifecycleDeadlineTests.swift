import TuttiCore
import TuttiWire
import XCTest

@testable import TuttiSession

/// Deadlines through `tick` and `nextDeadline` with `.standard` timeouts, the edge ticking every 250 ms as
/// its watch loop does: a lost receiver is freed within 10 s of its last packet, an answer that never
/// arrives frees both ends, and unanswered probes free the sender.
final class LifecycleDeadlineTests: XCTestCase {
    typealias D = LifecycleDriver
    let first = D.id(1)
    let second = D.id(2)

    /// Ticks every 250 ms until an action matches or `limit` passes; returns the time it took.
    private func tickUntil(_ driver: inout D, limit: Duration, _ matches: (Action) -> Bool) -> Duration? {
        let start = driver.now
        while driver.now - start < limit {
            if driver.advance(.milliseconds(250)).contains(where: matches) { return driver.now - start }
        }
        return nil
    }

    private func isStop(_ action: Action) -> Bool { if case .stop = action { true } else { false } }

    func testALostTeardownFreesTheReceiversSlotWithinTenSeconds() {
        var driver = D()
        driver.playingReceiver(first)
        // The last packet arrives now; the jitter buffer says lost 1 s later, seen by the next 250 ms poll.
        let lastPacket = driver.now
        driver.advance(.milliseconds(1_250))
        driver.feed(.observed(first, .lost))
        guard tickUntil(&driver, limit: .seconds(20), isStop) != nil else { return XCTFail("never freed") }
        XCTAssertLessThan(driver.now - lastPacket, .seconds(10))
        XCTAssertEqual(
            driver.log.suffix(2),
            [
                .stop(first, .receiving, reason: "closed: lost for 8 s"),
                .notify(first, .receiving, reason: "closed: lost for 8 s", to: [D.endpointB]),
            ])
    }

    func testALostAnswerFreesBothEndsWithinTenSeconds() {
        // The receiver answered, but the answer is lost: the sender's offer times out and its teardown is lost
        // too; the receiver, with no media, frees itself.
        var sender = D()
        sender.offering(first)
        let offered = sender.now
        guard let senderGaveUp = tickUntil(&sender, limit: .seconds(20), { if case .notify = $0 { true } else { false } }) else {
            return XCTFail("the offer never ended")
        }
        XCTAssertLessThan(sender.now - offered, .seconds(8), "before the CLI's 8 s")
        XCTAssertEqual(senderGaveUp, .seconds(6))
        XCTAssertEqual(
            sender.replies(to: RequestID(1)).first,
            .failure(ControlFailure(.unreachable, "cannot reach B: no answer to the offer within 6 s")))

        var receiver = D()
        receiver.awaitingReceiver(first)
        let answered = receiver.now
        guard tickUntil(&receiver, limit: .seconds(20), isStop) != nil else { return XCTFail("never freed") }
        XCTAssertLessThan(receiver.now - answered, .seconds(10))
    }

    func testAKilledReceiverIsNoticedByTheSenderWithinThreeSeconds() {
        var driver = D()
        driver.liveSender(first)
        let killed = driver.now
        // The receiver's host refuses the next probe.
        let start = driver.now
        while driver.now - start < .seconds(5) {
            let actions = driver.advance(.milliseconds(250))
            if actions.contains(.probe(to: [D.endpointB], within: .seconds(1))) {
                driver.feed(.probed(to: [D.endpointB], .refused))
                break
            }
        }
        XCTAssertEqual(driver.log.last, .stop(first, .sending, reason: "closed: B is not running"))
        XCTAssertLessThan(driver.now - killed, .seconds(3))
    }

    func testUnansweredProbesFreeTheSender() {
        var driver = D()
        driver.liveSender(first)
        var firstUnanswered: HostTime?
        var stoppedAt: HostTime?
        for _ in 0..<100 {
            let actions = driver.advance(.milliseconds(250))
            if actions.contains(where: isStop) {
                stoppedAt = driver.now
                break
            }
            for case .probe(let endpoints, _) in actions {
                // The probe times out a second later (the unanswered deadline may fall meanwhile).
                if driver.advance(.seconds(1)).contains(where: isStop) { stoppedAt = driver.now }
                firstUnanswered = firstUnanswered ?? driver.now
                driver.feed(.probed(to: endpoints, .unanswered))
            }
            if stoppedAt != nil { break }
        }
        guard let firstUnanswered, let stoppedAt else { return XCTFail("never stopped") }
        XCTAssertGreaterThanOrEqual(stoppedAt - firstUnanswered, .seconds(10))
        XCTAssertLessThan(stoppedAt - firstUnanswered, .seconds(11))
        XCTAssertEqual(
            driver.log.suffix(2),
            [
                .stop(first, .sending, reason: "closed: B does not answer"),
                .notify(first, .sending, reason: "closed: B does not answer", to: [D.endpointB]),
            ])
    }

    func testAnAnsweredProbeKeepsTheSenderLive() {
        var driver = D()
        driver.liveSender(first)
        driver.advance(.seconds(1))
        driver.feed(.probed(to: [D.endpointB], .unanswered))
        XCTAssertEqual(driver.machine.sending[first]?.deadline, driver.now + .seconds(10))
        XCTAssertEqual(driver.machine.nextDeadline, driver.now + .seconds(1), "the next probe")
        driver.advance(.seconds(1))
        driver.feed(D.listed([first]))
        XCTAssertNil(driver.machine.sending[first]?.deadline)
        XCTAssertEqual(driver.machine.nextDeadline, driver.now + .seconds(1), "the next probe only")
        driver.advance(.seconds(30))
        guard case .live = driver.sendingPhase(first) else { return XCTFail() }
    }

    func testNextDeadlineIsTheEarliestPendingTimer() {
        var driver = D()
        XCTAssertNil(driver.machine.nextDeadline)
        let start = driver.now
        driver.awaitingReceiver(first)  // start: +9 s
        XCTAssertEqual(driver.machine.nextDeadline, start + .seconds(9))
        driver.advance(.seconds(2))
        driver.offering(second)  // offer: +2 + 6 s
        XCTAssertEqual(driver.machine.nextDeadline, start + .seconds(8))
        driver.feed(.unreachable(second, ControlFailure(.unreachable, "x")))
        XCTAssertEqual(driver.machine.nextDeadline, start + .seconds(9))
        driver.feed(.observed(first, .playing))
        XCTAssertNil(driver.machine.nextDeadline)
        // A tick before any deadline does nothing.
        XCTAssertEqual(driver.advance(.seconds(60)), [])
    }
}
