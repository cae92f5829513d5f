/// One Link peer's session logic (protocol reference 4.3, 4.4, 6.1–6.6, 7) as a value-type state machine:
/// every input takes the current host time (microseconds, the peer's monotonic clock) and returns the
/// actions to perform: datagrams to send, clock measurements to run, and whether the shared state changed.
/// It opens no socket, reads no clock and runs no timer; the edge (`LinkService` in TuttiIO) performs the
/// actions, runs the `GhostClockMeasurement`s, answers pings, and calls `tick` at `nextDeadline`.
///
/// What it keeps: its NodeID and session, the session clock (timeline on ghost time and its ghost
/// transform), the start/stop state, the peer table keyed by (NodeID, gateway) with expiry, the other
/// sessions it has seen (best timeline, measurement), and per gateway the send schedule (an ALIVE every
/// 250 ms, state changes as soon as 50 ms have passed since the last state message).
///
/// Realtime-safe: no (allocates); it runs on the clock's network thread. Thread-safe: a value.
package struct LinkNode: Sendable {
    /// Where a datagram goes.
    package enum Destination: Hashable, Sendable {
        /// The Link group of the gateway's address family (224.76.78.75 or ff12::8080, port 20808).
        case group
        case unicast(LinkEndpoint)
    }

    /// What the edge must do.
    package enum Action: Hashable, Sendable {
        case send(LinkDiscoveryMessage, gateway: Int, to: Destination)
        /// Run a clock measurement of `session` against the peer whose measurement endpoint is `endpoint`,
        /// through `gateway`; report with `measurementFinished`.
        case measure(session: SessionID, endpoint: LinkEndpoint, gateway: Int)
        /// The session, its clock, the start/stop state or the peer count changed: publish a new snapshot.
        case stateChanged
    }

    /// Link's constants (reference section 7), in microseconds.
    package enum Timing {
        package static let ttlSeconds: UInt8 = 5
        package static let alivePeriod: Int64 = 250_000
        package static let minimumSpacing: Int64 = 50_000
        package static let expiryPadding: Int64 = 1_000_000
        package static let remeasurePeriod: Int64 = 30_000_000
    }

    struct PeerKey: Hashable, Comparable, Sendable {
        var node: NodeID
        var gateway: Int
        static func < (lhs: PeerKey, rhs: PeerKey) -> Bool {
            (lhs.node, lhs.gateway) < (rhs.node, rhs.gateway)
        }
    }

    struct PeerEntry: Sendable {
        var state: LinkPeerState
        var expiry: Int64
    }

    struct OtherSession: Sendable {
        var timeline: Timeline
        /// Set once measured and decided (stay), or for the session this peer left: not measured again.
        var settled: Bool
        var measuring: Bool
    }

    struct Gateway: Sendable {
        var measurementEndpoint: LinkEndpoint
        var lastStateSend: Int64?
        var nextAlive: Int64
    }

    /// The most entries the peer table holds (a peer is one entry per gateway), and the most other sessions
    /// known at once: a stranger multicasting ALIVEs under made-up NodeIDs or sessions cannot grow them, nor
    /// make this peer measure without end (issue 14). Far beyond a stage's peers; Link itself sets no bound.
    package static let peerCapacity = 256
    package static let otherSessionCapacity = 32
    /// States turned away because the peer table or the table of other sessions was full.
    package private(set) var refused: UInt64 = 0

    package private(set) var nodeID: NodeID
    package private(set) var sessionID: SessionID
    package private(set) var clock: LinkSessionClock
    package private(set) var startStop: StartStopState
    private var peers: [PeerKey: PeerEntry] = [:]
    private var otherSessions: [SessionID: OtherSession] = [:]
    private var gateways: [Int: Gateway] = [:]
    private var remeasureDeadline: Int64?
    private var remeasuring = false
    private var nextExpiryCheck: Int64?
    private var random: LinkRandom

    /// Enables a peer: founds a new session at `now` (ghost time 0 now, so an existing session always wins
    /// against it), stopped, at `tempo`.
    /// - Parameter seed: the random source for NodeIDs (Link draws a new one at every founding).
    package init(tempo: Tempo, beatOrigin: Beats = Beats(microBeats: 0), now: Int64, seed: UInt64) {
        random = LinkRandom(seed: seed)
        nodeID = random.nodeID()
        sessionID = nodeID
        clock = .founded(hostTimeAtEnable: now, tempo: tempo, beatOrigin: beatOrigin)
        startStop = .default
    }

    // MARK: - Reading

    /// Peers in this peer's session (distinct NodeIDs), not counting itself.
    package var peerCount: Int {
        Set(peers.filter { $0.value.state.sessionID == sessionID }.map(\.key.node)).count
    }

    /// When `tick` must be called next (host µs), or nil when nothing is scheduled.
    package var nextDeadline: Int64? {
        var deadlines = gateways.values.map(\.nextAlive)
        if let nextExpiryCheck { deadlines.append(nextExpiryCheck) }
        if let remeasureDeadline, !remeasuring { deadlines.append(remeasureDeadline) }
        return deadlines.min()
    }

    /// This peer's state as announced through `gateway`.
    func announcedState(gateway: Int) -> LinkPeerState? {
        guard let endpoint = gateways[gateway]?.measurementEndpoint else { return nil }
        return LinkPeerState(timeline: clock.timeline, sessionID: sessionID, startStop: startStop, measurementEndpoint: endpoint)
    }

    // MARK: - Gateways

    /// Starts announcing through a local address whose measurement socket is `measurementEndpoint`; the
    /// first ALIVE goes out at once.
    package mutating func addGateway(_ id: Int, measurementEndpoint: LinkEndpoint, now: Int64) -> [Action] {
        gateways[id] = Gateway(measurementEndpoint: measurementEndpoint, lastStateSend: nil, nextAlive: now)
        return tick(now: now)
    }

    /// Stops announcing through a gateway (address gone, or disabling): BYEBYE on it, its peers forgotten.
    package mutating func removeGateway(_ id: Int, now: Int64) -> [Action] {
        guard gateways.removeValue(forKey: id) != nil else { return [] }
        let countBefore = peerCount
        peers = peers.filter { $0.key.gateway != id }
        var actions: [Action] = [.send(.byebye(sender: nodeID), gateway: id, to: .group)]
        actions += afterPeerCountChange(from: countBefore, now: now)
        return actions
    }

    /// Disables the peer: BYEBYE on every gateway.
    package mutating func disable(now: Int64) -> [Action] {
        var actions: [Action] = []
        for id in gateways.keys.sorted() { actions += removeGateway(id, now: now) }
        return actions
    }

    // MARK: - Receiving

    /// A discovery datagram arrived on `gateway` from `source` (the sender's discovery socket).
    package mutating func received(_ message: LinkDiscoveryMessage, from source: LinkEndpoint, gateway: Int, now: Int64)
        -> [Action]
    {
        guard message.sender != nodeID, message.groupID == 0, gateways[gateway] != nil else { return [] }
        var actions: [Action] = []
        let key = PeerKey(node: message.sender, gateway: gateway)
        switch message.kind {
        case .byebye:
            let countBefore = peerCount
            if peers.removeValue(forKey: key) != nil { actions += afterPeerCountChange(from: countBefore, now: now) }
            return actions
        case .alive:
            // Answer first, with the state as it is before reading the ALIVE (4.3).
            if let state = announcedState(gateway: gateway) {
                actions.append(.send(.response(sender: nodeID, state: state), gateway: gateway, to: .unicast(source)))
                gateways[gateway]?.lastStateSend = now
            }
        case .response:
            break
        }
        guard let state = message.state else { return actions }
        actions += process(state, key: key, ttl: message.ttl, now: now)
        return actions
    }

    private mutating func process(_ state: LinkPeerState, key: PeerKey, ttl: UInt8, now: Int64) -> [Action] {
        let newSession = state.sessionID != sessionID && otherSessions[state.sessionID] == nil
        if peers[key] == nil && peers.count >= Self.peerCapacity || newSession && otherSessions.count >= Self.otherSessionCapacity {
            refused &+= 1
            return []
        }
        var actions: [Action] = []
        let countBefore = peerCount
        // Link evaluates a (session, start/stop) pair once, when it first appears in the peer table (6.5).
        let startStopPairHeld = peers.values.contains {
            $0.state.sessionID == state.sessionID && $0.state.effectiveStartStop == state.effectiveStartStop
        }
        peers[key] = PeerEntry(state: state, expiry: now + Int64(ttl) * 1_000_000)
        scheduleExpiryCheck()
        var changed = peerCount != countBefore

        if state.sessionID == sessionID {
            if state.timeline.supersedes(clock.timeline) {
                clock.timeline = state.timeline
                changed = true
            }
            if startStop.adoptsAnnounced(
                state.effectiveStartStop, senderSession: state.sessionID, ownSession: sessionID,
                pairAlreadyHeld: startStopPairHeld)
            {
                startStop = state.effectiveStartStop
                changed = true
                actions += announceSoon(now: now)
            }
        } else if var other = otherSessions[state.sessionID] {
            if state.timeline.supersedes(other.timeline) {
                other.timeline = state.timeline
                otherSessions[state.sessionID] = other
            }
        } else {
            // A session not seen before (or forgotten after a failed measurement): measure it (6.3).
            otherSessions[state.sessionID] = OtherSession(timeline: state.timeline, settled: false, measuring: true)
            if let target = measurementTarget(for: state.sessionID) {
                actions.append(.measure(session: state.sessionID, endpoint: target.endpoint, gateway: target.gateway))
            }
        }
        if changed { actions.append(.stateChanged) }
        actions += afterPeerCountChange(from: countBefore, now: now, alreadyReported: changed)
        return actions
    }

    /// The peer to measure for a session: its founder if present, else the first entry in (NodeID, gateway) order.
    private func measurementTarget(for session: SessionID) -> (endpoint: LinkEndpoint, gateway: Int)? {
        let members = peers.filter { $0.value.state.sessionID == session }.sorted { $0.key < $1.key }
        let chosen = members.first { $0.key.node == session } ?? members.first
        return chosen.map { ($0.value.state.measurementEndpoint, $0.key.gateway) }
    }

    // MARK: - Measurements

    /// A measurement asked for by `.measure` ended: the other session's ghost transform as seen from this
    /// peer's host clock, or nil if it failed.
    package mutating func measurementFinished(session: SessionID, result: GhostTransform?, now: Int64) -> [Action] {
        if session == sessionID {
            // Re-measurement of our own session (6.3 step 6): a step to the new transform.
            remeasuring = false
            remeasureDeadline = now + Timing.remeasurePeriod
            guard let result, result != clock.ghostTransform else { return [] }
            clock.ghostTransform = result
            return [.stateChanged]
        }
        guard var other = otherSessions[session] else { return [] }
        other.measuring = false
        guard let result else {
            // Forget the session and its peers: the next ALIVE from it starts a new measurement.
            otherSessions[session] = nil
            let countBefore = peerCount
            peers = peers.filter { $0.value.state.sessionID != session }
            return afterPeerCountChange(from: countBefore, now: now)
        }
        switch LinkSessionComparison.decide(
            otherSession: session, otherTransform: result, ownSession: sessionID, ownTransform: clock.ghostTransform,
            atHostTime: now)
        {
        case .stay:
            other.settled = true
            otherSessions[session] = other
            return []
        case .join:
            let countBefore = peerCount
            otherSessions[sessionID] = OtherSession(timeline: clock.timeline, settled: true, measuring: false)
            otherSessions[session] = nil
            startStop = startStop.afterSwitchingSession(from: sessionID, to: session)
            sessionID = session
            clock = LinkSessionClock(timeline: other.timeline, ghostTransform: result)
            remeasureDeadline = now + Timing.remeasurePeriod
            var actions: [Action] = [.stateChanged]
            actions += announceSoon(now: now)
            actions += afterPeerCountChange(from: countBefore, now: now, alreadyReported: true)
            return actions
        }
    }

    // MARK: - Local changes

    /// The tempo from `anchor` on (host µs), the beat at the anchor kept; committed at `now`.
    package mutating func setTempo(_ tempo: Tempo, anchor: Int64, now: Int64) -> [Action] {
        let updated = clock.changingTempo(to: tempo, keepingBeatsContinuousAtHostTime: anchor, committedAtHostTime: now)
        guard updated != clock else { return [] }
        clock = updated
        return [.stateChanged] + announceSoon(now: now)
    }

    /// Session beat `beats` falls at host time `at` from now on (moves everybody's phase); committed at `now`.
    package mutating func forceBeats(_ beats: Beats, at hostTime: Int64, now: Int64) -> [Action] {
        let updated = clock.forcingBeats(beats, atHostTime: hostTime, committedAtHostTime: now)
        guard updated != clock else { return [] }
        clock = updated
        return [.stateChanged] + announceSoon(now: now)
    }

    /// Start or stop the session's transport at host time `at`; committed at `now`.
    package mutating func setPlaying(_ playing: Bool, at hostTime: Int64, now: Int64) -> [Action] {
        let state = clock.startStop(isPlaying: playing, atHostTime: hostTime, committedAtHostTime: now)
        guard state.supersedes(startStop), state.isPlaying != startStop.isPlaying || state.beats != startStop.beats else {
            return []
        }
        startStop = state
        return [.stateChanged] + announceSoon(now: now)
    }

    // MARK: - Time

    /// Runs what is due at `now`: ALIVEs, peer expiry (and re-founding when the last peer is gone),
    /// re-measurement of the session every 30 s after joining it.
    package mutating func tick(now: Int64) -> [Action] {
        var actions: [Action] = []
        if let check = nextExpiryCheck, now >= check {
            let countBefore = peerCount
            peers = peers.filter { $0.value.expiry > now }
            // A session none of whose peers is left is forgotten (unless under measurement now).
            let heard = Set(peers.values.map(\.state.sessionID))
            otherSessions = otherSessions.filter { $0.value.measuring || heard.contains($0.key) }
            nextExpiryCheck = nil
            scheduleExpiryCheck()
            actions += afterPeerCountChange(from: countBefore, now: now)
        }
        if let deadline = remeasureDeadline, now >= deadline, !remeasuring,
            let target = measurementTarget(for: sessionID)
        {
            remeasuring = true
            actions.append(.measure(session: sessionID, endpoint: target.endpoint, gateway: target.gateway))
        }
        for id in gateways.keys.sorted() where gateways[id]!.nextAlive <= now {
            guard let state = announcedState(gateway: id) else { continue }
            actions.append(.send(.alive(sender: nodeID, state: state), gateway: id, to: .group))
            gateways[id]!.lastStateSend = now
            gateways[id]!.nextAlive = now + Timing.alivePeriod
        }
        return actions
    }

    /// Brings the next ALIVE forward after a change: now if 50 ms have passed since the last state message
    /// of each gateway, else as soon as they have.
    private mutating func announceSoon(now: Int64) -> [Action] {
        for id in gateways.keys {
            let earliest = (gateways[id]!.lastStateSend ?? .min / 2) + Timing.minimumSpacing
            gateways[id]!.nextAlive = min(gateways[id]!.nextAlive, max(now, earliest))
        }
        return tick(now: now)
    }

    private mutating func scheduleExpiryCheck() {
        guard let earliest = peers.values.map(\.expiry).min() else {
            nextExpiryCheck = nil
            return
        }
        let check = earliest + Timing.expiryPadding
        if nextExpiryCheck == nil || check < nextExpiryCheck! { nextExpiryCheck = check }
    }

    /// Reports a peer-count change; when the last peer of the session is gone, re-founds (6.2): new NodeID
    /// and session, ghost 0 now, beats continuous, stopped.
    private mutating func afterPeerCountChange(from countBefore: Int, now: Int64, alreadyReported: Bool = false) -> [Action] {
        let count = peerCount
        guard count != countBefore else { return [] }
        guard count == 0, countBefore > 0 else { return alreadyReported ? [] : [.stateChanged] }
        nodeID = random.nodeID()
        sessionID = nodeID
        clock = clock.refounded(atHostTime: now)
        startStop = .default
        otherSessions.removeAll()
        peers.removeAll()
        nextExpiryCheck = nil
        remeasureDeadline = nil
        remeasuring = false
        var actions: [Action] = alreadyReported ? [] : [.stateChanged]
        for id in gateways.keys { gateways[id]!.nextAlive = now }
        actions += tick(now: now)
        return actions
    }
}

/// SplitMix64: the node's own random source for NodeIDs, so the state machine stays a deterministic value.
struct LinkRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func nodeID() -> NodeID { NodeID.random(using: &self) }
}
