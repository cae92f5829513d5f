import TuttiCore
import TuttiWire
import XCTest

@testable import TuttiSession

/// When a live stream to a peer gets a new SRTP key (issue 14): on a schedule, after the session key changed,
/// and when its receiver answers again after a long loss; never a stream to a standard receiver, never one
/// not yet live, and only from the connection's own sender.
final class RekeyLifecycleTests: XCTestCase {
    typealias D = LifecycleDriver
    let first = D.id(1)
    let second = D.id(2)

    private var timeouts: LifecycleTimeouts {
        var timeouts = LifecycleTimeouts.standard
        timeouts.rekeyInterval = .seconds(600)
        timeouts.rekeyAfterLoss = .seconds(5)
        return timeouts
    }

    private func rekeys(_ actions: [Action]) -> [Action] {
        actions.filter { if case .rekey = $0 { true } else { false } }
    }

    /// Advances in 1 s steps for `seconds`, answering every probe with the live connections; the re-keys seen.
    private func run(_ driver: inout D, seconds: Int) -> [Action] {
        var seen: [Action] = []
        for _ in 0..<seconds {
            let actions = driver.advance(.seconds(1))
            seen += rekeys(actions)
            if actions.contains(where: { if case .probe = $0 { true } else { false } }) {
                seen += rekeys(driver.feed(D.listed(Array(driver.machine.sending.keys))))
            }
        }
        return seen
    }

    func testALiveStreamIsReKeyedEveryIntervalAndTheDeadlineSaysWhen() {
        var driver = D(timeouts: timeouts)
        driver.liveSender(first)
        let started = driver.now
        XCTAssertEqual(run(&driver, seconds: 599), [])
        XCTAssertEqual(driver.machine.sending[first]?.nextRekey, started + .seconds(600))
        XCTAssertEqual(run(&driver, seconds: 1), [.rekey(first, to: D.endpointB, .schedule)])
        XCTAssertEqual(run(&driver, seconds: 600), [.rekey(first, to: D.endpointB, .schedule)])
    }

    func testWithoutAnIntervalNothingIsScheduled() {
        var driver = D()
        driver.liveSender(first)
        XCTAssertNil(driver.machine.sending[first]?.nextRekey)
        XCTAssertEqual(run(&driver, seconds: 700), [])
    }

    func testASessionKeyChangeReKeysEveryLiveStreamToAPeerAtOnce() {
        var driver = D(timeouts: timeouts)
        driver.liveSender(first)
        driver.offering(second)
        driver.feed(driver.connectRTP(D.id(3)))
        driver.feed(.started(D.id(3), .sending, mediaPort: nil))
        driver.playingReceiver(D.id(4))
        XCTAssertEqual(driver.feed(.sessionKeyChanged), [.rekey(first, to: D.endpointB, .sessionKeyChanged)])
        // The schedule starts again from the change.
        XCTAssertEqual(driver.machine.sending[first]?.nextRekey, driver.now + .seconds(600))
    }

    func testAReceiverThatAnswersAgainAfterALongSilenceGetsANewKeyAndAfterAShortOneNot() {
        for (silence, expected) in [(2, [Action]()), (6, [.rekey(first, to: D.endpointB, .resumed)])] {
            var driver = D(timeouts: timeouts)
            driver.liveSender(first)
            var seen: [Action] = []
            for _ in 0..<silence {
                let actions = driver.advance(.seconds(1))
                if actions.contains(where: { if case .probe = $0 { true } else { false } }) {
                    seen += rekeys(driver.feed(.probed(to: [D.endpointB], .unanswered)))
                }
            }
            seen += run(&driver, seconds: 3)
            XCTAssertEqual(seen, expected, "\(silence) s")
            guard case .live(let liveness) = driver.sendingPhase(first) else { return XCTFail("not live after \(silence) s") }
            XCTAssertNil(liveness.unansweredSince)
        }
    }

    func testOnlyTheSenderOfAStreamThisPeerReceivesGivesItANewKey() {
        var driver = D()
        driver.playingReceiver(first)
        let rekey = ControlRequest.rekey(RekeyNotice(connectionID: first, mediaKey: MediaKeying(suite: "AEAD_AES_128_GCM", key: [])))
        XCTAssertNil(driver.machine.refusal(of: rekey, from: D.peerB))
        let refusal = driver.machine.refusal(of: rekey, from: PeerID(String(repeating: "c", count: 32))!)
        XCTAssertEqual(refusal?.code, .forbidden)
        XCTAssertEqual(refusal?.message, "only the sender of connection \(first) may give it a new key")
    }
}
