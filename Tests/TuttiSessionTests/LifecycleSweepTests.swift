import TuttiCore
import TuttiWire
import XCTest

@testable import TuttiSession

/// Every reachable state × every input kind (for the state's connection and for an unknown one), then the
/// world goes on: the machine never traps, every request is answered exactly once (possibly once its
/// connection leaves `closing`), and under `.standard` timeouts nothing is left once time runs on.
final class LifecycleSweepTests: XCTestCase {
    typealias D = LifecycleDriver
    typealias S = LifecycleStates

    private func assertEveryRequestAnsweredOnce(_ driver: D, _ context: String, line: UInt = #line) {
        for request in driver.requests {
            XCTAssertEqual(driver.replies(to: request).count, 1, "\(context): request \(request)", line: line)
        }
        let known = Set(driver.requests)
        XCTAssertTrue(driver.replies.allSatisfy { known.contains($0.0) }, "\(context): a reply to no request", line: line)
    }

    /// Runs `check` for every state × input (× both ids).
    private func sweep(timeouts: LifecycleTimeouts, _ check: (inout D, String) -> Void) -> Int {
        var cells = 0
        for state in S.all {
            for id in [state.id, S.unknown] {
                var probe = D(timeouts: timeouts)
                state.setUp(&probe)
                let count = S.inputs(for: id, &probe).count
                for index in 0..<count {
                    var driver = D(timeouts: timeouts)
                    state.setUp(&driver)
                    let (label, input) = S.inputs(for: id, &driver)[index]
                    driver.feed(input)
                    check(&driver, "\(state.name) + \(label)(\(id == S.unknown ? "unknown" : "own"))")
                    cells += 1
                }
            }
        }
        return cells
    }

    func testWithStandardTimeoutsEveryRequestIsAnsweredOnceAndNothingIsLeft() {
        let cells = sweep(timeouts: .standard) { driver, context in
            let took = driver.runDown(in: .silent, limit: .seconds(60))
            // A standard RTP receiver is never asked anything: its stream runs until disconnected.
            let left = driver.machine.sending.values.filter { entry in
                if case .live = entry.phase, entry.offer == nil { false } else { true }
            }
            XCTAssertTrue(
                left.isEmpty && driver.machine.receiving.isEmpty,
                "\(context): left \(left.map(\.phase)) \(driver.machine.receiving.values.map(\.phase))")
            XCTAssertTrue(driver.machine.waiting.isEmpty, context)
            XCTAssertNil(driver.machine.nextDeadline, context)
            if driver.isEmpty { return }
            // Which the disconnect ends.
            driver.feed(.disconnect(DisconnectRequest(source: D.source), request: driver.request()))
            driver.settle(in: .silent)
            XCTAssertTrue(driver.isEmpty, context)
            XCTAssertLessThan(took, .seconds(25), context)
            assertEveryRequestAnsweredOnce(driver, context)
        }
        XCTAssertEqual(cells, S.all.count * 2 * 36)
    }

    func testWithStandardTimeoutsAHealthyWorldKeepsLiveConnections() {
        // The same cells in a world that answers everything: whatever ends up live stays live (probes answered,
        // media playing), and the requests are answered all the same.
        _ = sweep(timeouts: .standard) { driver, context in
            driver.settle(in: .healthy)
            for _ in 0..<40 {
                driver.advance(.milliseconds(250))
                driver.settle(in: .healthy)
            }
            for entry in driver.machine.sending.values {
                guard case .live = entry.phase else { return XCTFail("\(context): sender left in \(entry.phase)") }
            }
            for entry in driver.machine.receiving.values where entry.phase != .playing {
                // Nothing plays media in the fake world but the receivers set up as playing.
                if case .awaitingMedia = entry.phase { continue }
                if case .lost = entry.phase { continue }
                XCTFail("\(context): receiver left in \(entry.phase)")
            }
            assertEveryRequestAnsweredOnce(driver, context)
        }
    }

    func testWithCompatibleTimeoutsShutdownLeavesNothingAndAnswersEverything() {
        let cells = sweep(timeouts: .compatible) { driver, context in
            driver.settle(in: .silent)
            driver.advance(.seconds(3_600))
            driver.settle(in: .silent)
            driver.feed(.shutdown(request: driver.request()))
            driver.settle(in: .silent)
            XCTAssertTrue(driver.isEmpty, context)
            XCTAssertTrue(driver.machine.waiting.isEmpty, context)
            assertEveryRequestAnsweredOnce(driver, context)
        }
        XCTAssertGreaterThan(cells, 800)
    }

    func testWithCompatibleTimeoutsNothingLiveIsEverFreedByTime() {
        for state in S.all
        where state.name.contains("live") || state.name.contains("playing") || state.name.contains("lost")
            || state.name.contains("awaiting")
        {
            var driver = D(timeouts: .compatible)
            state.setUp(&driver)
            let before = (driver.machine.sending.count, driver.machine.receiving.count)
            XCTAssertEqual(driver.advance(.seconds(86_400)).filter { if case .stop = $0 { true } else { false } }, [], state.name)
            XCTAssertEqual(before.0, driver.machine.sending.count, state.name)
            XCTAssertEqual(before.1, driver.machine.receiving.count, state.name)
        }
    }
}

/// The sweep's own coverage: its states reach every phase, its inputs sample every input kind.
final class LifecycleSweepCoverageTests: XCTestCase {
    typealias D = LifecycleDriver
    typealias S = LifecycleStates

    func testTheStatesReachEveryPhase() {
        var reached = Set<String>()
        for state in S.all {
            var driver = D()
            state.setUp(&driver)
            if let phase = driver.sendingPhase(state.id) { reached.insert(S.phaseName(phase)) }
            if let phase = driver.receivingPhase(state.id) { reached.insert(S.phaseName(phase)) }
        }
        XCTAssertEqual(reached, S.allPhases)
    }

    func testTheInputsSampleEveryKind() {
        var driver = D()
        XCTAssertEqual(Set(S.inputs(for: S.first, &driver).map { S.kind(of: $0.input) }), S.allKinds)
    }
}
