import TuttiCore
import TuttiWire
import XCTest

@testable import TuttiSession

/// Every row of the sender's table (design §2.2): connect, the check of an existing pair, offer and answer,
/// start, and a live connection's teardown, disconnect, bye, probes and shutdown.
final class SenderLifecycleTests: XCTestCase {
    typealias D = LifecycleDriver
    let first = D.id(1)
    let second = D.id(2)

    private func expectedOffer(_ id: ConnectionID, options: ConnectOptions = ConnectOptions()) -> StreamOffer {
        var offer = Negotiation.offer(
            id: id, peerID: D.peerA, source: D.source, destination: D.destination, port: D.ports[0], currentRates: [48_000, 44_100],
            senderClock: "system", options: options, captureClock: .realtime, controlPort: 7_400)
        // A sender port's own chain: itself alone.
        offer.upstream = [Pipeline(origin: D.source, live: false, originHost: nil)]
        return offer
    }

    private func expectedPlan(_ id: ConnectionID, host: String = "198.18.0.2") -> ConnectionLifecycle.SendPlan {
        var summary = ConnectionSummary(
            id: id, role: .sending, source: D.source, destination: D.destination, format: D.format, state: .playing)
        if let address = IPAddress(parsing: host) {
            summary.rtpDestination = RTPDestination(address: address, port: 5_004)
            summary.payloadType = 96
        }
        return .init(
            summary: summary, port: "out", mediaHost: host, mediaPort: 5_004, ssrc: 0x1234, payloadType: 96, peerEndpoint: D.endpointB)
    }

    // MARK: - Connect

    func testAConnectFromAnUnknownPortIsRefusedAndReported() {
        var driver = D()
        let request = ConnectRequest(
            source: PortReference(peer: "A", port: "nope"), destination: D.destination, destinationEndpoints: [D.endpointB],
            options: ConnectOptions())
        let id = driver.request()
        let actions = driver.feed(.connect(request, id: first, ssrc: 1, ports: D.portsNow, request: id))
        let failure = ControlFailure(.unknownPort, "peer A has no port 'nope' (ports: out, in)")
        XCTAssertEqual(
            actions, [.reply(id, .failure(failure)), .report(.refused(source: request.source, destination: D.destination, failure))])
        XCTAssertTrue(driver.isEmpty)
    }

    func testAConnectToAPortTheEdgeDoesNotRunAsASenderIsRefused() {
        var driver = D()
        let id = driver.request()
        let actions = driver.feed(.connect(D.connectRequest(), id: first, ssrc: 1, ports: ["in": D.portsNow["in"]!], request: id))
        XCTAssertEqual(actions.first, .reply(id, .failure(ControlFailure(.wrongDirection, "A:out cannot be a source"))))
        XCTAssertTrue(driver.isEmpty)
    }

    func testAConnectAtARateThePortCannotTakeIsRefused() {
        var driver = D()
        let actions = driver.feed(driver.connect(first, options: ConnectOptions(sampleRate: 96_000)))
        let failure = ControlFailure(.noCommonFormat, "A:out cannot send at 96000 Hz (its rates: 48000/44100 Hz)")
        XCTAssertEqual(
            actions, [.reply(RequestID(1), .failure(failure)), .report(.refused(source: D.source, destination: D.destination, failure))])
    }

    func testARunningPortNamesTheConnectionThatKeepsItsRate() {
        var driver = D()
        driver.liveSender(first)
        var ports = D.portsNow
        ports["out"]!.currentRates = [48_000]
        let request = ConnectRequest(
            source: D.source, destination: PortReference(peer: "C", port: "in"), destinationEndpoints: [],
            options: ConnectOptions(sampleRate: 44_100))
        let actions = driver.feed(.connect(request, id: second, ssrc: 1, ports: ports, request: driver.request()))
        XCTAssertEqual(
            actions.first,
            .reply(
                RequestID(2),
                .failure(
                    ControlFailure(
                        .noCommonFormat, "A:out is running at 48000 Hz for B:in [\(first)]; connect at 48000 Hz, or disconnect that first"))
            ))
    }

    func testANewPairIsOfferedWithinTheOfferTimeout() {
        var driver = D()
        let actions = driver.feed(driver.connect(first))
        XCTAssertEqual(actions, [.sendOffer(first, expectedOffer(first), to: [D.endpointB], within: .seconds(6))])
        XCTAssertEqual(driver.sendingPhase(first), .offering(cancel: nil))
        XCTAssertEqual(driver.machine.nextDeadline, driver.now + .seconds(6))
    }

    func testTheOfferGoesToTheDirectorysEndpointsFirst() {
        var directory = PeerDirectory()
        let found = ControlEndpoint(host: "fe80::2%eth0", port: 7_401)
        XCTAssertTrue(directory.found(KnownPeer(name: "b", id: D.peerB, endpoints: [found])))
        var driver = D(directory: directory)
        XCTAssertEqual(driver.feed(driver.connect(first)), [.sendOffer(first, expectedOffer(first), to: [found], within: .seconds(6))])
    }

    func testTwoConnectsOfOnePairAtOnceGetBusy() {
        var driver = D()
        driver.offering(first)
        let actions = driver.feed(driver.connect(second))
        let busy = ControlFailure(.busy, "A:out is being connected to B:in right now; try again in a moment")
        XCTAssertEqual(actions, [.reply(RequestID(2), .failure(busy))])
        XCTAssertNil(driver.sendingPhase(second))
    }

    func testConnectingALivePairAsksTheReceiverFirst() {
        var driver = D()
        driver.liveSender(first)
        let actions = driver.feed(driver.connect(second))
        XCTAssertEqual(actions, [.probe(to: [D.endpointB], within: .seconds(1))])
        XCTAssertEqual(driver.sendingPhase(second), .verifying(existing: first))
    }

    func testALivePairThatTheReceiverStillPlaysIsAlreadyConnected() {
        var driver = D()
        driver.liveSender(first)
        driver.feed(driver.connect(second))
        let actions = driver.feed(D.listed([first], state: .lost))
        var summary = expectedPlan(first).summary
        summary.state = .lost
        XCTAssertEqual(actions, [.reply(RequestID(2), .alreadyConnected(summary)), .report(.alreadyConnected(summary))])
        XCTAssertNil(driver.sendingPhase(second))
        guard case .live = driver.sendingPhase(first) else { return XCTFail("the existing connection must stay live") }
    }

    func testALivePairWhoseReceiverFailedIsBusyAndSaysWhy() {
        var driver = D()
        driver.liveSender(first)
        driver.feed(driver.connect(second))
        let actions = driver.feed(D.listed([first], state: .failed, failure: "the pipe's reader exited"))
        let busy = ControlFailure(
            .busy,
            "B:in cannot play: the pipe's reader exited (A:out is connected to it [\(first)]; disconnect, mend the output, then connect again)"
        )
        XCTAssertEqual(actions, [.reply(RequestID(2), .failure(busy))])
        XCTAssertNil(driver.sendingPhase(second))
    }

    func testALivePairTheReceiverNoLongerHasIsReplaced() {
        var driver = D()
        driver.liveSender(first)
        driver.feed(driver.connect(second))
        let actions = driver.feed(D.listed([]))
        XCTAssertEqual(
            actions,
            [
                .stop(first, .sending, reason: "closed: B no longer receives it"),
                .sendOffer(second, expectedOffer(second), to: [D.endpointB], within: .seconds(6)),
            ])
        XCTAssertEqual(driver.sendingPhase(second), .offering(cancel: nil))
    }

    func testAnUnansweredCheckOffersAnyway() {
        for result in [ConnectionLifecycle.ProbeResult.refused, .unanswered] {
            var driver = D()
            driver.liveSender(first)
            driver.feed(driver.connect(second))
            XCTAssertEqual(
                driver.feed(.probed(to: [D.endpointB], result)),
                [.sendOffer(second, expectedOffer(second), to: [D.endpointB], within: .seconds(6))])
        }
        var driver = D()
        driver.liveSender(first)
        driver.feed(driver.connect(second))
        XCTAssertEqual(driver.advance(.milliseconds(999)).filter { if case .sendOffer = $0 { true } else { false } }, [])
        XCTAssertTrue(
            driver.advance(.milliseconds(1)).contains(.sendOffer(second, expectedOffer(second), to: [D.endpointB], within: .seconds(6))))
    }

    func testALiveStandardReceiverPairIsAlreadyConnectedWithoutAsking() {
        var driver = D()
        driver.feed(driver.connectRTP(first))
        driver.feed(.started(first, .sending, mediaPort: nil))
        let actions = driver.feed(driver.connectRTP(second))
        guard case .reply(_, .alreadyConnected(let summary)) = actions.first else { return XCTFail("\(actions)") }
        XCTAssertEqual(summary.id, first)
    }

    func testAStandardReceiverStartsAtOnceWithANumericHost() {
        var driver = D()
        let actions = driver.feed(driver.connectRTP(first))
        guard case .startSending(let plan) = actions.first, actions.count == 1 else { return XCTFail("\(actions)") }
        XCTAssertEqual(plan.mediaHost, "198.18.0.9")
        XCTAssertEqual(plan.mediaPort, 5_004)
        XCTAssertEqual(plan.ssrc, 0x6666)
        XCTAssertEqual(plan.payloadType, 96)
        XCTAssertNil(plan.peerEndpoint)
        XCTAssertEqual(plan.summary.rtpDestination, D.rtp)
        XCTAssertEqual(plan.summary.format.sampleFormat, .l16)
        XCTAssertEqual(
            driver.feed(.started(first, .sending, mediaPort: nil)),
            [.reply(RequestID(1), .connected(plan.summary)), .report(.sending(plan))])
        // Live without probes: nobody to ask.
        XCTAssertNil(driver.machine.nextDeadline)
    }

    func testAStandardReceiverThatAnotherPortFeedsIsBusy() {
        let aux = PortDescriptor(name: "aux", title: "", kind: .sender, channels: 2, sampleRates: [48_000], sampleFormats: [.l16])
        var driver = D(ports: D.ports + [aux])
        driver.feed(driver.connectRTP(first))
        var ports = D.portsNow
        ports["aux"] = .init(currentRates: [48_000], clock: "system")
        let request = ConnectRequest(source: PortReference(peer: "A", port: "aux"), rtpDestination: D.rtp, options: ConnectOptions())
        let failure = ControlFailure(.busy, "rtp://198.18.0.9:5004 already receives A:out [\(first)]; disconnect it first")
        XCTAssertEqual(
            driver.feed(.connect(request, id: second, ssrc: 1, ports: ports, request: driver.request())),
            [
                .reply(RequestID(2), .failure(failure)),
                .report(.refused(source: PortReference(peer: "A", port: "aux"), destination: request.destination, failure)),
            ])
    }

    /// A peer streams plain RTP only where its configuration allows: anyone who reaches its control channel
    /// could otherwise point a stream at any address. Nothing starts, nothing is kept.
    func testAStandardReceiverOutsideTheAllowedPrefixesIsForbidden() {
        for allowed in [[], [IPPrefix(parsing: "198.18.1.0/24")!, IPPrefix(parsing: "::1")!]] {
            var driver = D(rtpAllowed: allowed)
            let actions = driver.feed(driver.connectRTP(first))
            guard case .reply(_, .failure(let failure)) = actions.first else { return XCTFail("\(actions)") }
            XCTAssertEqual(failure.code, .forbidden)
            XCTAssertEqual(
                failure.message,
                "A streams plain RTP only to addresses its configuration allows (now: \(allowed.isEmpty ? "none" : "198.18.1.0/24, ::1/128")); start it with --allow-rtp 198.18.0.9/32 or a prefix that holds it"
            )
            XCTAssertTrue(driver.isEmpty)
        }
    }

    func testAStandardReceiverRefusesLatencyOptions() {
        var driver = D()
        let request = ConnectRequest(source: D.source, rtpDestination: D.rtp, options: ConnectOptions(latencyMilliseconds: 5))
        let actions = driver.feed(.connect(request, id: first, ssrc: 1, ports: D.portsNow, request: driver.request()))
        guard case .reply(_, .failure(let failure)) = actions.first else { return XCTFail("\(actions)") }
        XCTAssertEqual(failure.code, .invalidOption)
        XCTAssertTrue(driver.isEmpty)
    }

    // MARK: - Offering

    func testAnAcceptedAnswerStartsSendingToTheReachedHost() {
        var driver = D()
        driver.offering(first)
        XCTAssertEqual(driver.feed(D.answered(first)), [.startSending(expectedPlan(first))])
        XCTAssertEqual(driver.sendingPhase(first), .starting(cancel: nil))
        XCTAssertNil(driver.machine.nextDeadline)
    }

    func testTheMediaHostIsAlwaysNumericWhenTheControlConnectionSaysWhere() {
        var driver = D()
        driver.feed(
            .connect(
                ConnectRequest(
                    source: D.source, destination: D.destination, destinationEndpoints: [ControlEndpoint(host: "b.local", port: 7_400)],
                    options: ConnectOptions()), id: first, ssrc: 1, ports: D.portsNow, request: driver.request()))
        let answer = StreamAnswer(connectionID: first, format: D.format, mediaPort: 5_004, ssrc: 0x1234, payloadType: 96)
        let actions = driver.feed(
            .answered(first, answer, reached: ControlEndpoint(host: "b.local", port: 7_400), remoteAddress: "198.18.0.2"))
        guard case .startSending(let plan) = actions.first else { return XCTFail("\(actions)") }
        XCTAssertEqual(plan.mediaHost, "198.18.0.2")
        XCTAssertEqual(plan.summary.rtpDestination, RTPDestination(address: IPAddress(parsing: "198.18.0.2")!, port: 5_004))
        // A zoned link-local address is kept as it is, and has no SDP destination.
        XCTAssertEqual(
            ConnectionLifecycle.mediaHost(reached: ControlEndpoint(host: "fe80::2%eth0", port: 1), remoteAddress: "x"), "fe80::2%eth0")
    }

    func testAnAnswerOutsideTheOfferIsTornDown() {
        var driver = D()
        driver.offering(first)
        let outside = StreamFormat(sampleRate: 96_000, channels: 2, sampleFormat: .l24, packetFrames: 64, targetLatencyFrames: 384)
        let actions = driver.feed(D.answered(first, format: outside))
        XCTAssertEqual(
            actions,
            [
                .reply(RequestID(1), .failure(ControlFailure(.noCommonFormat, "B chose a format outside the offer: \(outside)"))),
                .notify(first, .sending, reason: "answer outside the offer", to: [D.endpointB]),
            ])
        XCTAssertEqual(driver.sendingPhase(first), .closing(.init(reason: "answer outside the offer", awaiting: [.notify])))
        XCTAssertEqual(driver.feed(.notified(first, .sending)), [])
        XCTAssertTrue(driver.isEmpty)
    }

    func testARefusalIsPassedOnAndLeavesNothing() {
        var driver = D()
        driver.offering(first)
        let failure = ControlFailure(.busy, "B:in already receives A:out [x]; disconnect it first")
        XCTAssertEqual(
            driver.feed(.refused(first, failure, unusableAnswerFrom: nil)),
            [
                .reply(RequestID(1), .failure(failure)), .report(.refused(source: D.source, destination: D.destination, failure)),
            ])
        XCTAssertTrue(driver.isEmpty)
    }

    func testAnUnusableAnswerIsTornDown() {
        var driver = D()
        driver.offering(first)
        let failure = ControlFailure(.malformed, "B answered the offer with done")
        XCTAssertEqual(
            driver.feed(.refused(first, failure, unusableAnswerFrom: D.endpointB)),
            [
                .reply(RequestID(1), .failure(failure)), .notify(first, .sending, reason: "unusable answer", to: [D.endpointB]),
            ])
    }

    func testAnUnreachableReceiverIsToldOnEveryEndpoint() {
        var driver = D()
        let other = ControlEndpoint(host: "198.18.1.2", port: 7_400)
        driver.feed(
            .connect(
                ConnectRequest(
                    source: D.source, destination: D.destination, destinationEndpoints: [D.endpointB, other], options: ConnectOptions()),
                id: first, ssrc: 1, ports: D.portsNow, request: driver.request()))
        XCTAssertEqual(
            driver.feed(.unreachable(first, ControlFailure(.unreachable, "connection refused"))),
            [
                .reply(RequestID(1), .failure(ControlFailure(.unreachable, "cannot reach B: connection refused"))),
                .notify(first, .sending, reason: "the offer's answer did not arrive", to: [D.endpointB, other]),
            ])
    }

    func testAnOfferWithoutAnswerEndsAtItsDeadline() {
        var driver = D()
        driver.offering(first)
        XCTAssertEqual(driver.advance(.milliseconds(5_999)), [])
        XCTAssertEqual(
            driver.advance(.milliseconds(1)),
            [
                .reply(RequestID(1), .failure(ControlFailure(.unreachable, "cannot reach B: no answer to the offer within 6 s"))),
                .notify(first, .sending, reason: "the offer's answer did not arrive", to: [D.endpointB]),
            ])
        // Its late answer is ignored while the notice is out, and torn down once the entry is gone.
        XCTAssertEqual(driver.feed(D.answered(first)), [])
        driver.feed(.notified(first, .sending))
        XCTAssertEqual(
            driver.feed(D.answered(first)), [.notify(first, .sending, reason: "the offer's answer did not arrive", to: [D.endpointB])])
    }

    func testADisconnectWhileOfferingTearsTheAnswerDown() {
        var driver = D()
        driver.offering(first)
        let disconnect = driver.request()
        XCTAssertEqual(driver.feed(.disconnect(DisconnectRequest(connectionID: first), request: disconnect)), [])
        XCTAssertEqual(driver.sendingPhase(first), .offering(cancel: .init(reason: "disconnected", notice: "disconnected")))
        XCTAssertEqual(
            driver.feed(D.answered(first)),
            [
                .reply(RequestID(1), .failure(ControlFailure(.busy, "A:out → B:in [\(first)]: disconnected while connecting"))),
                .notify(first, .sending, reason: "disconnected", to: [D.endpointB]),
            ])
        XCTAssertEqual(driver.feed(.notified(first, .sending)), [.reply(disconnect, .disconnected(count: 1))])
    }

    func testAByeOrShutdownWhileOfferingWaitsForTheOutcome() {
        var driver = D()
        driver.offering(first)
        XCTAssertEqual(driver.feed(.bye(D.presenceB)), [])
        XCTAssertEqual(driver.sendingPhase(first), .offering(cancel: .init(reason: "closed: B left", notice: nil)))
        let shutdown = driver.request()
        XCTAssertEqual(driver.feed(.shutdown(request: shutdown)), [])
        XCTAssertEqual(
            driver.feed(.refused(first, ControlFailure(.busy, "no"), unusableAnswerFrom: nil)).first,
            .reply(RequestID(1), .failure(ControlFailure(.busy, "no"))))
        XCTAssertEqual(driver.replies(to: shutdown), [.done])
    }

    // MARK: - Starting

    func testAStartedSenderIsLiveAndConnected() {
        var driver = D()
        driver.startingSender(first)
        XCTAssertEqual(
            driver.feed(.started(first, .sending, mediaPort: nil)),
            [
                .reply(RequestID(1), .connected(expectedPlan(first).summary)), .report(.sending(expectedPlan(first))),
            ])
        XCTAssertEqual(driver.sendingPhase(first), .live(.init(nextProbe: driver.now + .seconds(1))))
        XCTAssertEqual(driver.machine.liveSummaries, [expectedPlan(first).summary])
    }

    func testASenderThatFailsToStartTellsTheReceiver() {
        var driver = D()
        driver.startingSender(first)
        XCTAssertEqual(
            driver.feed(.startFailed(first, .sending, message: "no socket")),
            [
                .reply(RequestID(1), .failure(ControlFailure(.internalError, "A:out cannot start sending: no socket"))),
                .notify(first, .sending, reason: "sender failed to start", to: [D.endpointB]),
            ])
    }

    func testATeardownWhileStartingStopsTheSenderOnceStarted() {
        var driver = D()
        driver.startingSender(first)
        let teardown = driver.request()
        XCTAssertEqual(driver.feed(.teardown(TeardownNotice(connectionID: first, reason: "gone"), request: teardown)), [])
        XCTAssertEqual(
            driver.feed(.started(first, .sending, mediaPort: nil)),
            [
                .reply(
                    RequestID(1),
                    .failure(ControlFailure(.busy, "A:out → B:in [\(first)]: closed by the other end (gone) while connecting"))),
                .stop(first, .sending, reason: "closed by the other end (gone)"),
                .notify(first, .sending, reason: "closed by the other end (gone)", to: [D.endpointB]),
            ])
        driver.feed(.stopped(first, .sending))
        XCTAssertEqual(driver.feed(.notified(first, .sending)), [.reply(teardown, .done)])
    }

    // MARK: - Live

    func testATeardownStopsALiveSenderAndRepliesWhenStopped() {
        var driver = D()
        driver.liveSender(first)
        let teardown = driver.request()
        XCTAssertEqual(
            driver.feed(.teardown(TeardownNotice(connectionID: first, reason: "peer stopping"), request: teardown)),
            [
                .stop(first, .sending, reason: "closed by the other end (peer stopping)")
            ])
        XCTAssertEqual(driver.machine.liveSummaries, [])
        XCTAssertEqual(driver.feed(.stopped(first, .sending)), [.reply(teardown, .done)])
        XCTAssertTrue(driver.isEmpty)
    }

    func testADisconnectStopsAndNotifiesThenReplies() {
        var driver = D()
        driver.liveSender(first)
        let disconnect = driver.request()
        XCTAssertEqual(
            driver.feed(.disconnect(DisconnectRequest(source: PortReference(peer: "a", port: "out")), request: disconnect)),
            [
                .stop(first, .sending, reason: "disconnected"), .notify(first, .sending, reason: "disconnected", to: [D.endpointB]),
            ])
        XCTAssertEqual(driver.feed(.notified(first, .sending)), [])
        XCTAssertEqual(driver.feed(.stopped(first, .sending)), [.reply(disconnect, .disconnected(count: 1))])
    }

    func testADisconnectMatchingNothingIsNotFound() {
        var driver = D()
        driver.liveSender(first)
        let disconnect = driver.request()
        XCTAssertEqual(
            driver.feed(.disconnect(DisconnectRequest(destination: PortReference(peer: "C", port: "in")), request: disconnect)),
            [
                .reply(disconnect, .failure(ControlFailure(.notFound, "peer A has no connection to C:in")))
            ])
    }

    func testByeClosesTheLeavingPeersConnections() {
        var driver = D()
        driver.liveSender(first)
        XCTAssertEqual(driver.feed(.bye(D.presenceB)), [.stop(first, .sending, reason: "closed: B left")])
    }

    func testLiveSendersProbeEachReceivingPeerOncePerInterval() {
        var driver = D()
        driver.liveSender(first)
        // A second pair to the same peer.
        let request = ConnectRequest(
            source: D.source, destination: PortReference(peer: "B", port: "in2"), destinationEndpoints: [D.endpointB],
            options: ConnectOptions())
        driver.feed(.connect(request, id: second, ssrc: 1, ports: D.portsNow, request: driver.request()))
        driver.feed(D.answered(second))
        driver.feed(.started(second, .sending, mediaPort: nil))
        XCTAssertEqual(driver.advance(.seconds(1)), [.probe(to: [D.endpointB], within: .seconds(1))])
        // None while one is out.
        XCTAssertEqual(driver.advance(.seconds(5)), [])
        XCTAssertEqual(driver.feed(D.listed([first, second], state: .playing)), [])
        guard case .live(let liveness) = driver.sendingPhase(first) else { return XCTFail() }
        XCTAssertEqual(liveness.remoteState, .playing)
        XCTAssertFalse(liveness.probing)
    }

    func testAProbeThatNoLongerListsTheConnectionStopsIt() {
        for (result, reason) in [
            (D.listed([]), "closed: B no longer receives it"), (Input.probed(to: [D.endpointB], .refused), "closed: B is not running"),
        ] {
            var driver = D()
            driver.liveSender(first)
            driver.advance(.seconds(1))
            XCTAssertEqual(driver.feed(result), [.stop(first, .sending, reason: reason)])
        }
    }

    func testAResultForAProbeNotAskedChangesNothing() {
        var driver = D()
        driver.liveSender(first)
        XCTAssertEqual(driver.feed(D.listed([])), [])
        guard case .live = driver.sendingPhase(first) else { return XCTFail() }
    }

    func testHelloFromAReturningReceiverProbesAtOnce() {
        var driver = D()
        driver.liveSender(first)
        XCTAssertEqual(
            driver.feed(.hello(D.presenceB, from: D.endpointB)),
            [
                .report(.peerFound(KnownPeer(name: "B", id: D.peerB, endpoints: [D.endpointB]), saidHello: true)),
                .probe(to: [D.endpointB], within: .seconds(1)),
            ])
    }

    func testWithCompatibleTimeoutsNothingProbes() {
        var driver = D(timeouts: .compatible)
        driver.liveSender(first)
        XCTAssertNil(driver.machine.nextDeadline)
        XCTAssertEqual(driver.feed(.hello(D.presenceB, from: D.endpointB)).count, 1)  // the report only
        XCTAssertEqual(driver.advance(.seconds(3_600)), [])
        guard case .live = driver.sendingPhase(first) else { return XCTFail() }
    }

    func testShutdownTearsEverythingDownAndRepliesWhenDone() {
        var driver = D()
        driver.liveSender(first)
        let shutdown = driver.request()
        XCTAssertEqual(
            driver.feed(.shutdown(request: shutdown)),
            [
                .stop(first, .sending, reason: "closed: peer stopping"),
                .notify(first, .sending, reason: "peer stopping", to: [D.endpointB]),
            ])
        XCTAssertEqual(driver.feed(driver.connect(second)), [.reply(RequestID(3), .failure(ControlFailure(.busy, "peer A is stopping")))])
        driver.feed(.stopped(first, .sending))
        XCTAssertEqual(driver.feed(.notified(first, .sending)), [.reply(shutdown, .done)])
    }
}
