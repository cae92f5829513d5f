import TuttiCore
import TuttiWire
import XCTest

@testable import TuttiSession

/// A receiver does not keep a lost stream forever: it asks the sending peer every interval whether it still
/// sends it, and frees the connection when the sender answers without it (restarted, or freed it while its
/// teardown notice was lost), refuses (its peer is gone) or stays silent for `unanswered`. A hello from the
/// sender asks at once.
final class LostStreamProbeTests: XCTestCase {
    typealias D = LifecycleDriver
    let first = D.id(1)

    private var timeouts: LifecycleTimeouts {
        var timeouts = LifecycleTimeouts.peer
        timeouts.rekeyInterval = nil
        return timeouts
    }

    private func probes(_ actions: [Action]) -> [Action] {
        actions.filter { if case .probe = $0 { true } else { false } }
    }

    /// What B lists when it sends `ids` to A.
    private func senderLists(_ ids: [ConnectionID]) -> Input {
        .probed(
            to: [D.endpointB],
            .listed(
                ids.map {
                    ConnectionSummary(
                        id: $0, role: .sending, source: D.remoteSource, destination: D.localDestination, format: D.format,
                        state: .playing)
                }))
    }

    func testAPlayingStreamIsNotAskedAboutAndALostOneEveryTwoSeconds() {
        var driver = D(timeouts: timeouts)
        driver.playingReceiver(first)
        XCTAssertEqual(probes(driver.advance(.seconds(10))), [])
        driver.feed(.observed(first, .lost))
        XCTAssertEqual(driver.machine.nextDeadline, driver.now + .seconds(2))
        XCTAssertEqual(probes(driver.advance(.seconds(2))), [.probe(to: [D.endpointB], within: .seconds(1))])
        XCTAssertEqual(probes(driver.advance(.seconds(2))), [], "none while one is out")
        XCTAssertEqual(driver.feed(senderLists([first])), [], "the sender still sends it: kept (the network lost it)")
        XCTAssertEqual(probes(driver.advance(.seconds(2))).count, 1)
        driver.feed(.observed(first, .playing))
        driver.feed(senderLists([first]))
        XCTAssertEqual(probes(driver.advance(.seconds(10))), [], "playing again: no more questions")
    }

    func testASenderThatNoLongerSendsItOrIsGoneFreesTheConnection() {
        for (answer, reason) in [
            (senderLists([]), "closed: B no longer sends it"), (Input.probed(to: [D.endpointB], .refused), "closed: B is not running"),
        ] {
            var driver = D(timeouts: timeouts)
            driver.lostReceiver(first)
            driver.advance(.seconds(2))
            XCTAssertEqual(driver.feed(answer), [.stop(first, .receiving, reason: reason)])
        }
    }

    func testASenderSilentForTheUnansweredTimeFreesTheConnection() {
        var driver = D(timeouts: timeouts)
        driver.lostReceiver(first)
        var stopped: [Action] = []
        for _ in 0..<60 {
            guard stopped.isEmpty else { break }
            if !probes(driver.advance(.seconds(2))).isEmpty {
                stopped = driver.feed(.probed(to: [D.endpointB], .unanswered))
            }
        }
        XCTAssertEqual(stopped, [.stop(first, .receiving, reason: "closed: B does not answer")])
        XCTAssertGreaterThanOrEqual(driver.now - D().now, .seconds(90))
    }

    func testAHelloFromTheSenderAsksAtOnceEvenWhilePlaying() {
        var driver = D(timeouts: timeouts)
        driver.playingReceiver(first)
        XCTAssertEqual(probes(driver.feed(.hello(D.presenceB, from: D.endpointB))), [.probe(to: [D.endpointB], within: .seconds(1))])
        // It restarted: it sends nothing now.
        XCTAssertEqual(driver.feed(senderLists([])), [.stop(first, .receiving, reason: "closed: B no longer sends it")])
    }

    func testAHelloDoesNotAskAboutAStreamStillAwaitingItsFirstPacket() {
        var driver = D(timeouts: timeouts)
        driver.awaitingReceiver(first)
        XCTAssertEqual(probes(driver.feed(.hello(D.presenceB, from: D.endpointB))), [], "the sender may not list it yet")
    }

    func testWithStandardTimeoutsNothingIsAsked() {
        var driver = D()
        driver.lostReceiver(first)
        XCTAssertEqual(probes(driver.advance(.seconds(4))), [])
        XCTAssertEqual(probes(driver.feed(.hello(D.presenceB, from: D.endpointB))), [])
    }
}
