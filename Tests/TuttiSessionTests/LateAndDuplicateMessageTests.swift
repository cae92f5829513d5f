import TuttiCore
import TuttiWire
import XCTest

@testable import TuttiSession

/// The rows that make the table total: outcomes for an unknown connection or in the wrong phase do nothing (a
/// late answer excepted), duplicates act once, and presence news never closes what it should not.
final class LateAndDuplicateMessageTests: XCTestCase {
    typealias D = LifecycleDriver
    typealias S = LifecycleStates

    private func assertUnchanged(_ before: ConnectionLifecycle, _ after: ConnectionLifecycle, _ context: String, line: UInt = #line) {
        XCTAssertEqual(before.sending, after.sending, context, line: line)
        XCTAssertEqual(before.receiving, after.receiving, context, line: line)
        XCTAssertEqual(before.waiting, after.waiting, context, line: line)
    }

    func testOutcomesForAnUnknownConnectionDoNothingExceptALateAnswer() {
        for state in S.all {
            // Probe results name endpoints, not connections: `testOutcomesThatDoNotFitThePhaseDoNothing` has them.
            for (label, input) in S.outcomes(for: S.unknown) where !label.hasPrefix("probed") {
                var driver = D()
                state.setUp(&driver)
                let before = driver.machine
                let actions = driver.feed(input)
                let context = "\(state.name) + \(label)"
                if label == "answered" {
                    XCTAssertEqual(
                        actions, [.notify(S.unknown, .sending, reason: "the offer's answer did not arrive", to: [D.endpointB])], context)
                } else {
                    XCTAssertEqual(actions, [], context)
                }
                assertUnchanged(before, driver.machine, context)
            }
        }
    }

    func testOutcomesThatDoNotFitThePhaseDoNothing() {
        var checked = 0
        for state in S.all {
            for (label, input) in S.outcomes(for: state.id) where !state.fits.contains(label) {
                var driver = D()
                state.setUp(&driver)
                let before = driver.machine
                let actions = driver.feed(input)
                let context = "\(state.name) + \(label)"
                if label == "answered", before.sending[state.id] == nil {
                    // Nobody sends this id here: the receiver that answered is told to drop it.
                    XCTAssertEqual(actions.count, 1, context)
                } else {
                    XCTAssertEqual(actions, [], context)
                }
                assertUnchanged(before, driver.machine, context)
                checked += 1
            }
        }
        XCTAssertGreaterThan(checked, 300)
    }

    func testOutcomesThatFitThePhaseChangeIt() {
        for state in S.all {
            for (label, input) in S.outcomes(for: state.id) where state.fits.contains(label) {
                var driver = D()
                state.setUp(&driver)
                let before = driver.machine
                driver.feed(input)
                let changed = before.sending != driver.machine.sending || before.receiving != driver.machine.receiving
                XCTAssertTrue(changed, "\(state.name) + \(label)")
            }
        }
    }

    func testATeardownForAnUnknownConnectionIsDoneAtOnce() {
        var driver = D()
        driver.liveSender(S.first)
        let request = driver.request()
        XCTAssertEqual(
            driver.feed(.teardown(TeardownNotice(connectionID: S.unknown, reason: "x"), request: request)), [.reply(request, .done)])
    }

    func testATeardownOrDisconnectOfAClosingConnectionRepliesWhenItIsGone() {
        var driver = D()
        driver.liveSender(S.first)
        let disconnect = driver.request()
        driver.feed(.disconnect(DisconnectRequest(connectionID: S.first), request: disconnect))
        let teardown = driver.request()
        let again = driver.request()
        XCTAssertEqual(driver.feed(.teardown(TeardownNotice(connectionID: S.first, reason: "x"), request: teardown)), [])
        XCTAssertEqual(driver.feed(.disconnect(DisconnectRequest(connectionID: S.first), request: again)), [])
        driver.feed(.stopped(S.first, .sending))
        XCTAssertEqual(
            driver.feed(.notified(S.first, .sending)),
            [
                .reply(disconnect, .disconnected(count: 1)), .reply(teardown, .done), .reply(again, .disconnected(count: 1)),
            ])
    }

    func testEveryInputAppliedTwiceActsOnce() {
        // Outcomes delivered twice (a duplicated message, a retried callback): the second does nothing.
        for state in S.all {
            for (label, input) in S.outcomes(for: state.id) where state.fits.contains(label) {
                var driver = D()
                state.setUp(&driver)
                driver.feed(input)
                let before = driver.machine
                let second = driver.feed(input)
                if label.hasPrefix("probed") || (label == "answered" && driver.machine.sending[state.id] == nil) {
                    continue  // a probe result applies to whatever is verifying or probing now; a late answer is told again
                }
                XCTAssertEqual(second, [], "\(state.name) + \(label) twice")
                XCTAssertEqual(before.sending, driver.machine.sending, "\(state.name) + \(label) twice")
                XCTAssertEqual(before.receiving, driver.machine.receiving, "\(state.name) + \(label) twice")
            }
        }
    }

    func testAvahiRemovalClosesNothing() {
        var driver = D()
        driver.feed(.discovered(KnownPeer(name: "B", id: D.peerB, endpoints: [D.endpointB])))
        driver.liveSender(S.first)
        driver.playingReceiver(S.second)
        let before = driver.machine
        XCTAssertEqual(driver.feed(.vanished(name: "B")), [.report(.peerLeft(name: "B"))])
        XCTAssertEqual(before.sending, driver.machine.sending)
        XCTAssertEqual(before.receiving, driver.machine.receiving)
        XCTAssertEqual(driver.machine.directory.knownPeers, [])
        XCTAssertEqual(driver.feed(.vanished(name: "B")), [])
    }

    func testADiscoveredPeerIsIntroducedOnceAndARenameIntroducesUsAgain() {
        var driver = D()
        let b = KnownPeer(name: "B", id: D.peerB, endpoints: [D.endpointB])
        XCTAssertEqual(driver.feed(.discovered(b)), [.report(.peerFound(b, saidHello: false)), .introduce([D.endpointB])])
        XCTAssertEqual(driver.feed(.discovered(b)), [])
        XCTAssertEqual(driver.feed(.discovered(KnownPeer(name: "A", id: D.peerA, endpoints: []))), [], "itself")
        XCTAssertEqual(driver.feed(.renamed(to: "A")), [])
        XCTAssertEqual(driver.feed(.renamed(to: "A (2)")), [.introduce([D.endpointB])])
        XCTAssertEqual(driver.machine.identity.name, "A (2)")
    }

    func testRequestsWhileStoppingAreRefused() {
        var driver = D()
        driver.feed(.shutdown(request: driver.request()))
        XCTAssertEqual(driver.replies(to: RequestID(1)), [.done])
        for input in [
            driver.connect(S.first), driver.offer(S.first),
            .teardown(TeardownNotice(connectionID: S.first, reason: ""), request: driver.request()),
        ] {
            guard case .reply(_, .failure(let failure)) = driver.feed(input).first else { return XCTFail() }
            XCTAssertEqual(failure, ControlFailure(.busy, "peer A is stopping"))
        }
        XCTAssertTrue(driver.isEmpty)
    }
}
