import TuttiCore
import TuttiWire
import XCTest

@testable import TuttiSession

/// Every row of the receiver's table (design §2.2): offer, start, media observed, lost, the timeouts that free
/// a slot, and a live connection's teardown, disconnect and bye.
final class ReceiverLifecycleTests: XCTestCase {
    typealias D = LifecycleDriver
    let first = D.id(1)
    let second = D.id(2)

    private func expectedPlan(_ id: ConnectionID, source: PortReference = D.remoteSource) -> ConnectionLifecycle.ReceivePlan {
        let summary = ConnectionSummary(
            id: id, role: .receiving, source: source, destination: D.localDestination, format: D.format, state: .buffering)
        return .init(
            summary: summary, port: "in", ssrc: 0x7777, payloadType: 96, senderEndpoint: D.endpointB, captureClock: .realtime,
            deviceRate: 48_000, remoteClock: "\(D.peerB.rawValue)/system")
    }

    private var answer: ControlResponse {
        .answer(StreamAnswer(connectionID: first, format: D.format, mediaPort: 5_004, ssrc: 0x7777, payloadType: 96))
    }

    // MARK: - Offer

    func testAnOfferIsNegotiatedAndStartsReceiving() {
        var driver = D()
        XCTAssertEqual(driver.feed(driver.offer(first)), [.startReceiving(expectedPlan(first))])
        XCTAssertEqual(driver.receivingPhase(first), .starting(cancel: nil))
        XCTAssertEqual(driver.machine.liveSummaries, [])
    }

    func testAnOfferForAnIDThatExistsIsBusy() {
        var driver = D()
        driver.playingReceiver(first)
        XCTAssertEqual(
            driver.feed(driver.offer(first, from: PortReference(peer: "C", port: "out"))),
            [
                .reply(RequestID(2), .failure(ControlFailure(.busy, "connection \(first) already exists")))
            ])
    }

    func testAnOfferToAPortThatCannotReceiveIsRefusedAndReported() {
        var driver = D()
        var offer = D.offer(first)
        offer.destination = PortReference(peer: "A", port: "out")
        let actions = driver.feed(.offer(offer, fromHost: "198.18.0.2", ssrc: 1, ports: D.portsNow, request: driver.request()))
        let failure = ControlFailure(.wrongDirection, "A:out is a sender port and cannot receive audio; choose a receiver port")
        XCTAssertEqual(
            actions, [.reply(RequestID(1), .failure(failure)), .report(.refused(source: D.remoteSource, destination: D.source, failure))])
        XCTAssertTrue(driver.isEmpty)
    }

    /// An offer that names another peer reached this one by a wrong or old address: refused, nothing kept, even
    /// though a port of that name is here.
    func testAnOfferForAnotherPeerIsRefused() {
        var driver = D()
        var offer = D.offer(first)
        offer.destination = PortReference(peer: "Z", port: "in")
        let actions = driver.feed(.offer(offer, fromHost: "198.18.0.2", ssrc: 1, ports: D.portsNow, request: driver.request()))
        let failure = ControlFailure(.unknownPeer, "Z:in was offered to A, another peer (an old address?); connect again to find Z")
        let here = PortReference(peer: "A", port: "in")
        XCTAssertEqual(
            actions, [.reply(RequestID(1), .failure(failure)), .report(.refused(source: D.remoteSource, destination: here, failure))])
        XCTAssertTrue(driver.isEmpty)
        // The name compares as DNS-SD names do, without case.
        var lower = D.offer(second)
        lower.destination = PortReference(peer: "a", port: "in")
        guard
            case .startReceiving? = driver.feed(
                .offer(lower, fromHost: "198.18.0.2", ssrc: 1, ports: D.portsNow, request: driver.request())
            ).first
        else { return XCTFail("an offer to 'a' is A's") }
    }

    func testAnOfferNegotiationRefusesIsRefusedAndReported() {
        var driver = D()
        var offer = D.offer(first)
        offer.options.channels = 5
        let actions = driver.feed(.offer(offer, fromHost: "198.18.0.2", ssrc: 1, ports: D.portsNow, request: driver.request()))
        let failure = ControlFailure(.invalidOption, "cannot stream 5 channels: B:out has 2, A:in has 2")
        XCTAssertEqual(
            actions,
            [.reply(RequestID(1), .failure(failure)), .report(.refused(source: D.remoteSource, destination: D.localDestination, failure))])
    }

    func testAnOfferForALivePairIsRefused() {
        let setUps: [(inout D, ConnectionID) -> Void] = [
            { $0.startingReceiver($1) }, { $0.awaitingReceiver($1) }, { $0.playingReceiver($1) },
        ]
        for setUp in setUps {
            var driver = D()
            setUp(&driver, first)
            XCTAssertEqual(
                driver.feed(driver.offer(second)),
                [
                    .reply(RequestID(2), .failure(ControlFailure(.busy, "A:in already receives B:out [\(first)]; disconnect it first")))
                ])
            XCTAssertNil(driver.receivingPhase(second))
        }
    }

    func testAnOfferForALostPairReplacesIt() {
        var driver = D()
        driver.lostReceiver(first)
        XCTAssertEqual(
            driver.feed(driver.offer(second)),
            [
                .stop(first, .receiving, reason: "closed: B:out connected again"), .startReceiving(expectedPlan(second)),
            ])
        XCTAssertEqual(driver.receivingPhase(first), .closing(.init(reason: "closed: B:out connected again", awaiting: [.stop])))
        XCTAssertEqual(driver.feed(.stopped(first, .receiving)), [])
        XCTAssertNil(driver.receivingPhase(first))
    }

    // MARK: - Starting

    func testAStartedReceiverAnswersAndAwaitsMedia() {
        var driver = D()
        driver.startingReceiver(first)
        XCTAssertEqual(
            driver.feed(.started(first, .receiving, mediaPort: 5_004)),
            [
                .reply(RequestID(1), answer), .report(.receiving(expectedPlan(first), mediaPort: 5_004)),
            ])
        XCTAssertEqual(driver.receivingPhase(first), .awaitingMedia)
        XCTAssertEqual(driver.machine.nextDeadline, driver.now + .seconds(9))
        XCTAssertEqual(driver.machine.liveSummaries.map(\.state), [.buffering])
    }

    func testAReceiverThatFailsToStartSaysWhy() {
        var driver = D()
        driver.startingReceiver(first)
        XCTAssertEqual(
            driver.feed(.startFailed(first, .receiving, message: "no slot")),
            [
                .reply(RequestID(1), .failure(ControlFailure(.internalError, "A:in cannot start receiving: no slot")))
            ])
        XCTAssertTrue(driver.isEmpty)
    }

    func testATeardownWhileTheReceiverStartsStopsItOnceStarted() {
        var driver = D()
        driver.startingReceiver(first)
        let teardown = driver.request()
        XCTAssertEqual(driver.feed(.teardown(TeardownNotice(connectionID: first, reason: "answer late"), request: teardown)), [])
        XCTAssertEqual(driver.receivingPhase(first), .starting(cancel: .init(reason: "closed by the other end (answer late)", notice: nil)))
        XCTAssertEqual(
            driver.feed(.started(first, .receiving, mediaPort: 5_004)),
            [
                .reply(
                    RequestID(1), .failure(ControlFailure(.busy, "A:in [\(first)]: closed by the other end (answer late) while starting"))),
                .stop(first, .receiving, reason: "closed by the other end (answer late)"),
            ])
        XCTAssertEqual(driver.feed(.stopped(first, .receiving)), [.reply(teardown, .done)])
        XCTAssertTrue(driver.isEmpty)
    }

    func testADisconnectOrByeOrShutdownWhileStartingWaitsForTheStart() {
        // Each input, and the replies that go out when the start fails: the offer's, and the request's own.
        let inputs: [((inout D) -> Input, Int)] = [
            ({ .disconnect(DisconnectRequest(connectionID: D.id(1)), request: $0.request()) }, 2), ({ _ in .bye(D.presenceB) }, 1),
            ({ .shutdown(request: $0.request()) }, 2),
        ]
        for (input, replies) in inputs {
            var driver = D()
            driver.startingReceiver(first)
            XCTAssertEqual(driver.feed(input(&driver)), [])
            guard case .starting(.some) = driver.receivingPhase(first) else {
                return XCTFail("\(String(describing: driver.receivingPhase(first)))")
            }
            let actions = driver.feed(.startFailed(first, .receiving, message: "x"))
            XCTAssertEqual(actions.count, replies)
            XCTAssertTrue(actions.allSatisfy { if case .reply = $0 { true } else { false } })
            XCTAssertTrue(driver.isEmpty)
        }
    }

    // MARK: - Media

    func testTheFirstPlayingStreamIsReported() {
        var driver = D()
        driver.awaitingReceiver(first)
        XCTAssertEqual(driver.feed(.observed(first, .buffering)), [])
        XCTAssertEqual(driver.feed(.observed(first, .playing)), [.report(.playing(expectedPlan(first).summary))])
        XCTAssertEqual(driver.receivingPhase(first), .playing)
        XCTAssertNil(driver.machine.nextDeadline)
    }

    func testAnOfferThatNeverBringsMediaFreesItsSlot() {
        var driver = D()
        driver.awaitingReceiver(first)
        XCTAssertEqual(driver.advance(.milliseconds(8_999)), [])
        XCTAssertEqual(
            driver.advance(.milliseconds(1)),
            [
                .stop(first, .receiving, reason: "closed: no media arrived in 9 s"),
                .notify(first, .receiving, reason: "closed: no media arrived in 9 s", to: [D.endpointB]),
            ])
    }

    func testALostStreamIsReportedAndResumes() {
        var driver = D()
        driver.playingReceiver(first)
        XCTAssertEqual(driver.feed(.observed(first, .lost)), [.report(.lost(expectedPlan(first).summary))])
        XCTAssertEqual(driver.receivingPhase(first), .lost(since: driver.now))
        XCTAssertEqual(driver.machine.nextDeadline, driver.now + .seconds(8))
        XCTAssertEqual(driver.machine.liveSummaries.map(\.state), [.lost])
        driver.advance(.seconds(7))
        XCTAssertEqual(driver.feed(.observed(first, .playing)), [.report(.resumed(expectedPlan(first).summary))])
        XCTAssertEqual(driver.receivingPhase(first), .playing)
        XCTAssertNil(driver.machine.nextDeadline)
    }

    func testAStreamLostTooLongIsFreedAndTheSenderTold() {
        var driver = D()
        driver.lostReceiver(first)
        XCTAssertEqual(driver.advance(.milliseconds(7_999)), [])
        XCTAssertEqual(
            driver.advance(.milliseconds(1)),
            [
                .stop(first, .receiving, reason: "closed: lost for 8 s"),
                .notify(first, .receiving, reason: "closed: lost for 8 s", to: [D.endpointB]),
            ])
    }

    func testAFailedOutputIsReportedOnceAndTimersKeepRunning() {
        var driver = D()
        driver.lostReceiver(first)
        XCTAssertEqual(
            driver.feed(.observed(first, .outputFailed(reason: "disk full"))),
            [
                .report(.outputFailed(port: "in", reason: "disk full", connections: [first]))
            ])
        XCTAssertEqual(driver.feed(.observed(first, .outputFailed(reason: "disk full"))), [])
        XCTAssertEqual(driver.machine.liveSummaries.map(\.state), [.failed])
        XCTAssertEqual(driver.advance(.seconds(8)).count, 2)
    }

    // MARK: - Ending

    func testATeardownStopsALiveReceiver() {
        var driver = D()
        driver.playingReceiver(first)
        let teardown = driver.request()
        XCTAssertEqual(
            driver.feed(.teardown(TeardownNotice(connectionID: first, reason: "disconnected"), request: teardown)),
            [
                .stop(first, .receiving, reason: "closed by the other end (disconnected)")
            ])
        XCTAssertEqual(driver.feed(.stopped(first, .receiving)), [.reply(teardown, .done)])
    }

    func testADisconnectStopsAndTellsTheSender() {
        var driver = D()
        driver.awaitingReceiver(first)
        let disconnect = driver.request()
        XCTAssertEqual(
            driver.feed(.disconnect(DisconnectRequest(destination: PortReference(peer: "a", port: "in")), request: disconnect)),
            [
                .stop(first, .receiving, reason: "disconnected"), .notify(first, .receiving, reason: "disconnected", to: [D.endpointB]),
            ])
        driver.feed(.stopped(first, .receiving))
        XCTAssertEqual(driver.feed(.notified(first, .receiving)), [.reply(disconnect, .disconnected(count: 1))])
    }

    func testAByeFromTheSenderStopsItsStreams() {
        var driver = D()
        driver.playingReceiver(first)
        let other = PeerPresence(id: PeerID(String(repeating: "c", count: 32))!, name: "C", controlPort: 1)
        XCTAssertEqual(driver.feed(.bye(other)), [])
        XCTAssertEqual(driver.feed(.bye(D.presenceB)), [.stop(first, .receiving, reason: "closed: B left")])
    }

    func testADisconnectOfBothEndsOfOneConnectionToItselfRepliesOnceBothAreGone() {
        var driver = D()
        let id = first
        driver.offering(id)
        driver.feed(D.answered(id))
        driver.feed(.started(id, .sending, mediaPort: nil))
        driver.feed(driver.offer(id))
        driver.feed(.started(id, .receiving, mediaPort: 5_004))
        let disconnect = driver.request()
        XCTAssertEqual(driver.feed(.disconnect(DisconnectRequest(connectionID: id), request: disconnect)).count, 4)
        driver.feed(.stopped(id, .sending))
        driver.feed(.notified(id, .sending))
        driver.feed(.stopped(id, .receiving))
        XCTAssertEqual(driver.replies(to: disconnect), [])
        XCTAssertEqual(driver.feed(.notified(id, .receiving)), [.reply(disconnect, .disconnected(count: 2))])
    }
}
