import TuttiClock
import XCTest

/// The session state machine in a simulated network: joining, tie-break, tempo and start/stop
/// propagation, the late joiner, leaving with BYEBYE or silently, re-founding.
final class LinkNodeTests: XCTestCase {
    private let second: Int64 = 1_000_000

    /// Session beats of every member at the same true instant agree to the micro-beat.
    private func assertSameBeat(_ simulation: LinkSessionSimulation, _ members: [Int], file: StaticString = #filePath, line: UInt = #line) {
        let beats = members.map { simulation.members[$0].node.clock.beats(atHostTime: simulation.hostTime($0)).microBeats }
        XCTAssertLessThanOrEqual(beats.max()! - beats.min()!, 1, "beats \(beats)", file: file, line: line)
    }

    func testANewcomerJoinsTheOlderSessionAndTheyShareTheBeat() {
        var simulation = LinkSessionSimulation()
        let founder = simulation.enable(hostOffset: 1_000 * second, seed: 1)
        simulation.run(until: 2 * second)
        let newcomer = simulation.enable(tempo: Tempo(bpm: 90), hostOffset: -300 * second, seed: 2)
        // Joining takes one measurement (5 ms here); the founder counts the newcomer once its next state
        // message (50 ms floor after its first ALIVE) announces the new session.
        simulation.run(until: 2 * second + 60_000)
        let session = simulation.members[founder].node.sessionID
        XCTAssertEqual(simulation.members[newcomer].node.sessionID, session, "the newcomer joins")
        XCTAssertEqual(simulation.members[founder].node.sessionID, session, "the founder stays")
        XCTAssertEqual(simulation.members[newcomer].node.clock.timeline.tempo, Tempo(bpm: 120), "the session's tempo wins")
        XCTAssertEqual(simulation.members[founder].node.peerCount, 1)
        XCTAssertEqual(simulation.members[newcomer].node.peerCount, 1)
        XCTAssertEqual(simulation.ghostTime(newcomer), simulation.ghostTime(founder))
        assertSameBeat(simulation, [founder, newcomer])
        simulation.run(until: 60 * second)
        assertSameBeat(simulation, [founder, newcomer])
    }

    func testNearSimultaneousStartsEndInTheSessionWithTheSmallerID() {
        for seeds in [(UInt64(11), UInt64(12)), (21, 22), (31, 32), (41, 42)] {
            var simulation = LinkSessionSimulation()
            let first = simulation.enable(hostOffset: 5 * second, seed: seeds.0)
            simulation.run(until: 200_000)  // 0.2 s apart: within the 0.5 s band
            let second = simulation.enable(hostOffset: 77 * self.second, seed: seeds.1)
            let smaller = min(simulation.members[first].node.sessionID, simulation.members[second].node.sessionID)
            simulation.run(until: 2 * self.second)
            XCTAssertEqual(simulation.members[first].node.sessionID, smaller)
            XCTAssertEqual(simulation.members[second].node.sessionID, smaller)
            assertSameBeat(simulation, [first, second])
        }
    }

    func testTempoAndStartStopChangesReachThePeerWithinOneMessage() {
        var simulation = LinkSessionSimulation()
        let a = simulation.enable(hostOffset: 0, seed: 3)
        simulation.run(until: second)
        let b = simulation.enable(hostOffset: 123_456, seed: 4)
        simulation.run(until: 3 * second)

        let changedAt = simulation.now
        simulation.change(b) { node, now in node.setTempo(Tempo(bpm: 128), anchor: now, now: now) }
        simulation.run(until: changedAt + 60_000)
        XCTAssertEqual(simulation.members[a].node.clock.timeline.tempo, Tempo(bpm: 128), "within 60 ms")
        assertSameBeat(simulation, [a, b])

        let startedAt = simulation.now
        simulation.change(a) { node, now in node.setPlaying(true, at: now, now: now) }
        simulation.run(until: startedAt + 60_000)
        XCTAssertTrue(simulation.members[b].node.startStop.isPlaying)
        XCTAssertEqual(simulation.members[b].node.startStop, simulation.members[a].node.startStop)

        simulation.run(until: simulation.now + 100_000)
        simulation.change(b) { node, now in node.setPlaying(false, at: now, now: now) }
        simulation.run(until: simulation.now + 60_000)
        XCTAssertFalse(simulation.members[a].node.startStop.isPlaying)
    }

    func testALateJoinerDoesNotStartARunningTransport() {
        var simulation = LinkSessionSimulation()
        let a = simulation.enable(hostOffset: 0, seed: 5)
        simulation.run(until: second)
        simulation.change(a) { node, now in node.setPlaying(true, at: now, now: now) }
        simulation.run(until: 2 * second)
        let late = simulation.enable(hostOffset: 9 * second, seed: 6)
        simulation.run(until: 5 * second)
        XCTAssertEqual(simulation.members[late].node.sessionID, simulation.members[a].node.sessionID)
        XCTAssertTrue(simulation.members[a].node.startStop.isPlaying)
        XCTAssertFalse(simulation.members[late].node.startStop.isPlaying, "as Link: the joiner stays stopped")
        // A later change reaches it.
        simulation.change(a) { node, now in node.setPlaying(false, at: now, now: now) }
        simulation.run(until: 5 * second + 60_000)
        simulation.change(a) { node, now in node.setPlaying(true, at: now, now: now) }
        simulation.run(until: 5 * second + 200_000)
        XCTAssertTrue(simulation.members[late].node.startStop.isPlaying)
    }

    func testAPeerLeavingWithByeByeIsDroppedAtOnceAndTheLastOneRefounds() {
        var simulation = LinkSessionSimulation()
        let a = simulation.enable(hostOffset: 0, seed: 7)
        simulation.run(until: second)
        let b = simulation.enable(hostOffset: 0, seed: 8)
        simulation.run(until: 3 * second)
        simulation.change(a) { node, now in node.setPlaying(true, at: now, now: now) }
        simulation.run(until: 3 * second + 100_000)
        let oldSession = simulation.members[b].node.sessionID
        let beatBefore = simulation.members[b].node.clock.beats(atHostTime: simulation.hostTime(b))
        simulation.disable(a)
        simulation.run(until: simulation.now + 1_000)
        XCTAssertEqual(simulation.members[b].node.peerCount, 0)
        XCTAssertNotEqual(simulation.members[b].node.sessionID, oldSession, "re-founded")
        XCTAssertEqual(simulation.members[b].node.sessionID, simulation.members[b].node.nodeID)
        XCTAssertEqual(simulation.ghostTime(b), 1_000 - 100, "ghost time restarts at 0 when re-founding")
        XCTAssertFalse(simulation.members[b].node.startStop.isPlaying, "start/stop resets")
        let beatAfter = simulation.members[b].node.clock.beats(atHostTime: simulation.hostTime(b))
        XCTAssertLessThan(abs(beatAfter.microBeats - beatBefore.microBeats - 2_000), 10, "beats continue")
    }

    func testASilentPeerIsDroppedBetweenFiveAndSevenSeconds() {
        var simulation = LinkSessionSimulation()
        let a = simulation.enable(hostOffset: 0, seed: 9)
        simulation.run(until: second)
        let b = simulation.enable(hostOffset: 0, seed: 10)
        simulation.run(until: 3 * second)
        let killedAt = simulation.now
        simulation.kill(a)
        var droppedAfter: Int64?
        while simulation.now < killedAt + 8 * second {
            simulation.run(until: simulation.now + 10_000)
            if simulation.members[b].node.peerCount == 0 {
                droppedAfter = simulation.now - killedAt
                break
            }
        }
        let dropped = try! XCTUnwrap(droppedAfter)
        XCTAssertGreaterThanOrEqual(dropped, 5 * second)
        XCTAssertLessThanOrEqual(dropped, 7 * second)
    }

    func testThreePeersInEveryJoinOrderEndInOneSession() {
        for order in [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]] {
            var simulation = LinkSessionSimulation()
            var indices = [Int](repeating: 0, count: 3)
            for (position, peer) in order.enumerated() {
                indices[peer] = simulation.enable(hostOffset: Int64(peer) * 7 * second, seed: UInt64(100 + peer))
                simulation.run(until: Int64(position + 1) * second)
            }
            simulation.run(until: 6 * second)
            let sessions = Set(indices.map { simulation.members[$0].node.sessionID })
            XCTAssertEqual(sessions.count, 1, "order \(order)")
            for index in indices { XCTAssertEqual(simulation.members[index].node.peerCount, 2, "order \(order)") }
            assertSameBeat(simulation, indices)
        }
    }

    func testAlivesGoOutEveryQuarterSecondAndChangesRespectTheFiftyMillisecondFloor() {
        var simulation = LinkSessionSimulation()
        let a = simulation.enable(hostOffset: 0, seed: 13)
        simulation.run(until: 2 * second)
        let alives = simulation.sent.filter { $0.from == a && $0.message.kind == .alive }.map(\.time)
        XCTAssertEqual(alives.first, 0, "the first ALIVE goes out at once")
        XCTAssertEqual(Set(zip(alives.dropFirst(), alives).map { $0 - $1 }), [250_000])
        // Two changes 10 ms apart: the second waits for the 50 ms floor.
        simulation.change(a) { node, now in node.setTempo(Tempo(bpm: 100), anchor: now, now: now) }
        let firstChange = simulation.now
        simulation.run(until: firstChange + 10_000)
        simulation.change(a) { node, now in node.setTempo(Tempo(bpm: 101), anchor: now, now: now) }
        simulation.run(until: firstChange + 100_000)
        let after = simulation.sent.filter { $0.from == a && $0.time >= firstChange }.map(\.time)
        XCTAssertEqual(Array(after.prefix(2)), [firstChange, firstChange + 50_000])
    }
}

/// A stranger multicasting ALIVEs under made-up NodeIDs and sessions cannot grow a node's tables or make it
/// measure without end (issue 14): beyond `peerCapacity` entries and `otherSessionCapacity` sessions, states
/// are turned away and counted; a session whose peers all expired is forgotten, so room comes back.
final class LinkNodeCapacityTests: XCTestCase {
    private let second: Int64 = 1_000_000
    private let measurement = LinkEndpoint(ipv4: 198, 18, 0, 1, port: 20_000)

    private func node(now: Int64) -> LinkNode {
        var node = LinkNode(tempo: Tempo(bpm: 120), now: now, seed: 7)
        _ = node.addGateway(0, measurementEndpoint: measurement, now: now)
        return node
    }

    private func alive(_ sender: UInt64, session: SessionID, ttl: UInt8 = 5) -> LinkDiscoveryMessage {
        let state = LinkPeerState(
            timeline: Timeline(tempo: Tempo(bpm: 120), beatOrigin: Beats(microBeats: 0), timeOrigin: 0), sessionID: session,
            startStop: nil, measurementEndpoint: LinkEndpoint(ipv4: 198, 18, 0, 9, port: UInt16(truncatingIfNeeded: 30_000 + sender)))
        return .alive(sender: NodeID(rawValue: sender), state: state, ttl: ttl)
    }

    private let stranger = LinkEndpoint(ipv4: 198, 18, 0, 9, port: 20_808)

    func testMadeUpPeersOfOurSessionFillThePeerTableOnlyToItsCapacity() {
        var node = node(now: 0)
        let session = node.sessionID
        for sender in 1...300 { _ = node.received(alive(UInt64(sender), session: session), from: stranger, gateway: 0, now: 1_000) }
        XCTAssertEqual(node.peerCount, LinkNode.peerCapacity)
        XCTAssertEqual(node.refused, UInt64(300 - LinkNode.peerCapacity))
        // A peer already in the table is still heard (its state updates), not refused.
        _ = node.received(alive(1, session: session), from: stranger, gateway: 0, now: 2_000)
        XCTAssertEqual(node.refused, UInt64(300 - LinkNode.peerCapacity))
        // They expire (TTL 5 s, no more ALIVEs): the table empties and takes new peers again.
        _ = node.tick(now: 8 * second)
        XCTAssertEqual(node.peerCount, 0)
        _ = node.received(alive(999, session: node.sessionID), from: stranger, gateway: 0, now: 8 * second)  // (re-founded)
        XCTAssertEqual(node.peerCount, 1)
    }

    func testMadeUpSessionsAreMeasuredOnlyUpToTheirCapacityAndForgottenWhenTheirPeersGo() {
        var node = node(now: 0)
        var measured = 0
        for sender in 1...50 {
            // Every one a session of its own, younger than ours: measured once each, then kept (settled).
            let actions = node.received(
                alive(UInt64(sender), session: NodeID(rawValue: 0xFFFF_0000 + UInt64(sender))), from: stranger, gateway: 0, now: 1_000)
            measured += actions.filter { if case .measure = $0 { true } else { false } }.count
        }
        XCTAssertEqual(measured, LinkNode.otherSessionCapacity)
        XCTAssertEqual(node.refused, UInt64(50 - LinkNode.otherSessionCapacity))
        // Once their peers expired, the sessions not under measurement are forgotten: a new one is measured.
        // Each measured as a session younger than ours (its ghost time far behind): this node stays, and keeps
        // each as settled while its peer lives.
        for session in 1...LinkNode.otherSessionCapacity {
            _ = node.measurementFinished(
                session: NodeID(rawValue: 0xFFFF_0000 + UInt64(session)), result: GhostTransform(intercept: -1_000 * second), now: 2_000)
        }
        let refused = node.refused
        _ = node.received(alive(78, session: NodeID(rawValue: 0xFFFF_7778)), from: stranger, gateway: 0, now: 3_000)
        XCTAssertEqual(node.refused, refused + 1, "still full while their peers live")
        _ = node.tick(now: 8 * second)
        let actions = node.received(alive(77, session: NodeID(rawValue: 0xFFFF_7777)), from: stranger, gateway: 0, now: 8 * second)
        XCTAssertEqual(actions.filter { if case .measure = $0 { true } else { false } }.count, 1)
    }
}
