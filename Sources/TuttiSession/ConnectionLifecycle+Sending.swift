import TuttiCore
import TuttiWire

/// The sender's rows: connect, the check of an existing pair, offer and answer, start, liveness probes.
extension ConnectionLifecycle {
    /// One connection this peer sends.
    struct Sending: Hashable, Sendable {
        enum Phase: Hashable, Sendable {
            /// A live connection of the same pair exists: the receiver is asked whether it still has it.
            case verifying(existing: ConnectionID)
            /// The offer is out; `cancel`: ended meanwhile, undone when the outcome arrives.
            case offering(cancel: Ending?)
            /// `startSending` is under way.
            case starting(cancel: Ending?)
            case live(Liveness)
            case closing(Closing)
        }

        /// What the sender knows of its receiver while it streams.
        struct Liveness: Hashable, Sendable {
            var remoteState: ConnectionState?
            var remoteFailure: String?
            var unansweredSince: HostTime?
            var nextProbe: HostTime?
            /// A probe is out; its result applies.
            var probing = false
        }

        var id: ConnectionID
        var source: PortReference
        var destination: PortReference
        var port: PortDescriptor
        /// Nil to a standard RTP receiver.
        var offer: StreamOffer?
        /// Where the offer, the check of an existing pair and an early teardown go.
        var endpoints: [ControlEndpoint]
        /// The endpoint that answered the offer: the peer endpoint of the live connection.
        var reached: ControlEndpoint?
        /// The peer ID the receiver proved when it answered (members-only sessions): the one other peer that may
        /// tear the connection down.
        var receiverPeerID: PeerID? = nil
        var plan: SendPlan?
        /// The `connect` request, until answered.
        var connect: RequestID?
        var phase: Phase
        /// The chains reaching the source port that the receiver was last told of (the offer's, then each
        /// `UpstreamNotice`'s); nil to a standard RTP receiver.
        var announced: [Pipeline]? = nil
        /// When a live stream to a peer gets its next SRTP key on schedule.
        var nextRekey: HostTime? = nil
        /// Verifying or offering: its timeout; live: when unanswered probes end it.
        var deadline: HostTime?

        var summary: ConnectionSummary? { plan?.summary }
        var isClosing: Bool { if case .closing = phase { true } else { false } }

        /// The deadline `tick` acts on in this phase.
        var dueDeadline: HostTime? {
            switch phase {
            case .verifying, .offering, .live: deadline
            case .starting, .closing: nil
            }
        }

        /// When the receiver is probed next (none while a probe is out).
        var nextProbe: HostTime? {
            guard case .live(let liveness) = phase, !liveness.probing else { return nil }
            return liveness.nextProbe
        }
    }

    // MARK: - Connect

    mutating func connect(
        _ request: ConnectRequest, id: ConnectionID, ssrc: UInt32, ports: [String: PortNow], request requestID: RequestID,
        requester: ConnectRequester = .member, now: HostTime
    ) -> [Action] {
        func refuse(_ failure: ControlFailure, source: PortReference = request.source) -> [Action] {
            [.reply(requestID, .failure(failure)), .report(.refused(source: source, destination: request.destination, failure))]
        }
        let port: PortDescriptor
        switch PortSelection.source(PortReference(peer: identity.name, port: request.source.port), in: identity.ports) {
        case .success(let found): port = found
        case .failure(let refusal): return refuse(refusal.failure)
        }
        guard let portNow = ports[port.name] else {
            return refuse(ControlFailure(.wrongDirection, "\(request.source) cannot be a source"))
        }
        let source = PortReference(peer: identity.name, port: port.name)
        guard sending[id] == nil else {
            return [.reply(requestID, .failure(ControlFailure(.internalError, "connection \(id) already exists")))]
        }
        if let rate = request.options.sampleRate,
            let refusal = Negotiation.senderRate(
                rate, source: source, port: port, currentRates: portNow.currentRates, runningFor: runningSummary(of: port.name))
        {
            return refuse(refusal.failure, source: source)
        }
        if request.rtpDestination == nil {
            if let refusal = selfConnectionRefusal(source: source, destination: request.destination) {
                return refuse(refusal, source: source)
            }
            if let refusal = Self.loopRefusal(upstream: pipelines(reaching: port.name), source: source, destination: request.destination) {
                return refuse(refusal, source: source)
            }
        }
        let endpoints = directory.endpoints(forPeer: request.destination.peer) ?? requester.dialable(request.destinationEndpoints)
        if request.rtpDestination == nil, endpoints.isEmpty {
            let peer = request.destination.peer
            return refuse(
                ControlFailure(
                    .unknownPeer,
                    "\(identity.name) does not know peer \(peer) (not found through Avahi, not named with --peer, no hello from it), and in an open session it dials no address a client gives it: start \(identity.name) with --peer HOST:PORT of \(peer), ask from \(peer)'s own host, or run a members-only session (tutti key new)"
                ), source: source)
        }
        var entry = Sending(
            id: id, source: source, destination: request.destination, port: port, offer: nil, endpoints: endpoints, reached: nil,
            plan: nil, connect: requestID, phase: .offering(cancel: nil), deadline: nil)
        if let existing = sending.values.filter({
            !$0.isClosing && $0.source.port == port.name && Self.samePort($0.destination, request.destination)
        }).min(by: { $0.id.rawValue < $1.id.rawValue }) {
            guard case .live = existing.phase, let summary = existing.summary else {
                return [
                    .reply(
                        requestID,
                        .failure(
                            ControlFailure(
                                .busy, "\(source) is being connected to \(request.destination) right now; try again in a moment")))
                ]
            }
            guard existing.reached != nil else {
                return [.reply(requestID, .alreadyConnected(summary)), .report(.alreadyConnected(summary))]
            }
            entry.offer = offer(id: id, source: source, request: request, port: port, now: portNow)
            entry.announced = entry.offer?.upstream
            entry.phase = .verifying(existing: existing.id)
            entry.deadline = now + timeouts.verify
            sending[id] = entry
            return [.probe(to: endpoints, within: timeouts.verify)]
        }
        if let rtp = request.rtpDestination {
            return connect(entry, toStandardReceiver: rtp, ssrc: ssrc, options: request.options, now: portNow) {
                refuse($0, source: source)
            }
        }
        entry.offer = offer(id: id, source: source, request: request, port: port, now: portNow)
        entry.announced = entry.offer?.upstream
        sending[id] = entry
        return beginOffer(id, now: now)
    }

    private func offer(id: ConnectionID, source: PortReference, request: ConnectRequest, port: PortDescriptor, now: PortNow) -> StreamOffer
    {
        var offer = Negotiation.offer(
            id: id, peerID: identity.peerID, source: source, destination: request.destination, port: port,
            currentRates: now.currentRates, senderClock: now.clock, options: request.options, captureClock: identity.captureClock,
            controlPort: identity.controlPort)
        offer.upstream = pipelines(reaching: port.name)
        return offer
    }

    /// To a standard RTP receiver: no offer, no answer, no teardown; the format is this peer's choice.
    private mutating func connect(
        _ entry: Sending, toStandardReceiver rtp: RTPDestination, ssrc: UInt32, options: ConnectOptions, now: PortNow,
        refuse: (ControlFailure) -> [Action]
    ) -> [Action] {
        guard identity.rtpAllowed.contains(where: { $0.contains(rtp.address) }) else {
            let allowed = identity.rtpAllowed.isEmpty ? "none" : identity.rtpAllowed.map(\.description).joined(separator: ", ")
            return refuse(
                ControlFailure(
                    .forbidden,
                    "\(identity.name) streams plain RTP only to addresses its configuration allows (now: \(allowed)); start it with --allow-rtp \(rtp.address)\(rtp.address.isIPv6 ? "/128" : "/32") or a prefix that holds it"
                ))
        }
        if let existing = sending.values.filter({ !$0.isClosing && $0.offer == nil && $0.summary?.rtpDestination == rtp })
            .min(by: { $0.id.rawValue < $1.id.rawValue })
        {
            return refuse(ControlFailure(.busy, "\(rtp) already receives \(existing.source) [\(existing.id)]; disconnect it first"))
        }
        let format: StreamFormat
        switch StandardReceiverFormat.chooseFormat(
            source: entry.source, destination: rtp, port: entry.port, currentRates: now.currentRates, options: options)
        {
        case .success(let chosen): format = chosen
        case .failure(let refusal): return refuse(refusal.failure)
        }
        var entry = entry
        let summary = ConnectionSummary(
            id: entry.id, role: .sending, source: entry.source, destination: rtp.portReference, format: format, state: .playing,
            rtpDestination: rtp, payloadType: Self.payloadType)
        let plan = SendPlan(
            summary: summary, port: entry.port.name, mediaHost: rtp.address.description, mediaPort: rtp.port, ssrc: ssrc,
            payloadType: Self.payloadType, peerEndpoint: nil)
        entry.plan = plan
        entry.phase = .starting(cancel: nil)
        sending[entry.id] = entry
        return [.startSending(plan)]
    }

    /// The summary of a connection that keeps `portName` running now (named when another rate is refused).
    private func runningSummary(of portName: String) -> ConnectionSummary? {
        sending.values.filter { entry in
            switch entry.phase {
            case .starting, .live: entry.source.port == portName && entry.summary != nil
            default: false
            }
        }.min { $0.id.rawValue < $1.id.rawValue }?.summary
    }

    private mutating func beginOffer(_ id: ConnectionID, now: HostTime) -> [Action] {
        guard var entry = sending[id], let offer = entry.offer else { return [] }
        entry.phase = .offering(cancel: nil)
        entry.deadline = timeouts.offer.map { now + $0 }
        sending[id] = entry
        return [.sendOffer(id, offer, to: entry.endpoints, within: timeouts.offer)]
    }

    /// Answers the connect request of `id`, once.
    private mutating func replyConnect(_ id: ConnectionID, _ response: ControlResponse) -> [Action] {
        guard let request = sending[id]?.connect else { return [] }
        sending[id]?.connect = nil
        return [.reply(request, response)]
    }

    private func cancelled(_ entry: Sending, _ ending: Ending) -> ControlResponse {
        .failure(ControlFailure(.busy, "\(entry.source) → \(entry.destination) [\(entry.id)]: \(ending.reason) while connecting"))
    }

    // MARK: - Outcomes

    mutating func answered(
        _ id: ConnectionID, _ answer: StreamAnswer, reached: ControlEndpoint, remoteAddress: String?, receiver: PeerID? = nil,
        now: HostTime
    ) -> [Action] {
        guard var entry = sending[id] else {
            // A late answer: the receiver holds a connection nobody sends to.
            return [.notify(id, .sending, reason: "the offer's answer did not arrive", to: [reached])]
        }
        guard case .offering(let cancel) = entry.phase, let offer = entry.offer else { return [] }
        let key = EntryKey(id: id, role: .sending)
        entry.reached = reached
        entry.receiverPeerID = receiver
        sending[id] = entry
        if let cancel {
            return replyConnect(id, cancelled(entry, cancel))
                + close(key, reason: cancel.reason, stop: false, notify: [reached], notice: cancel.notice ?? cancel.reason)
        }
        guard answer.connectionID == id else {
            return replyConnect(
                id,
                .failure(
                    ControlFailure(
                        .malformed, "\(entry.destination.peer) answered the offer for another connection (\(answer.connectionID))")))
                + close(key, reason: "answer outside the offer", stop: false, notify: [reached])
        }
        let format: StreamFormat
        switch Negotiation.acceptAnswer(answer, to: offer, port: entry.port) {
        case .success(let accepted): format = accepted
        case .failure(let refusal):
            return replyConnect(id, .failure(refusal.failure))
                + close(key, reason: "answer outside the offer", stop: false, notify: [reached])
        }
        let host = Self.mediaHost(reached: reached, remoteAddress: remoteAddress)
        var summary = ConnectionSummary(
            id: id, role: .sending, source: entry.source, destination: entry.destination, format: format, state: .playing)
        summary.warning = answer.warning
        if let address = IPAddress(parsing: host) {
            summary.rtpDestination = RTPDestination(address: address, port: answer.mediaPort)
            summary.payloadType = answer.payloadType
        }
        let plan = SendPlan(
            summary: summary, port: entry.port.name, mediaHost: host, mediaPort: answer.mediaPort, ssrc: answer.ssrc,
            payloadType: answer.payloadType, peerEndpoint: reached)
        entry.plan = plan
        entry.phase = .starting(cancel: nil)
        entry.deadline = nil
        sending[id] = entry
        return [.startSending(plan)]
    }

    /// Where media go: the reached endpoint's host when it is numeric (a `%zone` kept), else the numeric address
    /// the control connection went to, else the host as given (the edge resolves it).
    static func mediaHost(reached: ControlEndpoint, remoteAddress: String?) -> String {
        let bare = reached.host.split(separator: "%", maxSplits: 1).first ?? Substring(reached.host)
        if IPAddress(parsing: bare) != nil { return reached.host }
        return remoteAddress ?? reached.host
    }

    mutating func refused(_ id: ConnectionID, _ failure: ControlFailure, unusableAnswerFrom endpoint: ControlEndpoint?) -> [Action] {
        guard let entry = sending[id], case .offering = entry.phase else { return [] }
        let key = EntryKey(id: id, role: .sending)
        let reply = replyConnect(id, .failure(failure))
        if let endpoint {
            sending[id]?.reached = endpoint
            return reply + close(key, reason: "unusable answer", stop: false, notify: [endpoint])
        }
        return reply + [.report(.refused(source: entry.source, destination: entry.destination, failure))]
            + discard(key, reason: "refused")
    }

    mutating func unreachable(_ id: ConnectionID, _ failure: ControlFailure) -> [Action] {
        guard let entry = sending[id], case .offering = entry.phase else { return [] }
        return offerFailed(entry, failure)
    }

    /// The offer's answer did not arrive: every endpoint is told to drop the connection, in case only the
    /// answer was lost.
    private mutating func offerFailed(_ entry: Sending, _ failure: ControlFailure) -> [Action] {
        replyConnect(entry.id, .failure(ControlFailure(failure.code, "cannot reach \(entry.destination.peer): \(failure.message)")))
            + close(
                EntryKey(id: entry.id, role: .sending), reason: "the offer's answer did not arrive", stop: false, notify: entry.endpoints)
    }

    mutating func sendingStarted(_ id: ConnectionID, now: HostTime) -> [Action] {
        guard var entry = sending[id], case .starting(let cancel) = entry.phase, let plan = entry.plan else { return [] }
        if let cancel {
            return replyConnect(id, cancelled(entry, cancel))
                + close(
                    EntryKey(id: id, role: .sending), reason: cancel.reason, stop: true, notify: entry.reached.map { [$0] } ?? [],
                    notice: cancel.notice ?? cancel.reason)
        }
        let probes = timeouts.probeInterval != nil && entry.reached != nil
        entry.phase = .live(Sending.Liveness(nextProbe: probes ? timeouts.probeInterval.map { now + $0 } : nil))
        if entry.offer != nil, entry.reached != nil { entry.nextRekey = timeouts.rekeyInterval.map { now + $0 } }
        sending[id] = entry
        return replyConnect(id, .connected(plan.summary)) + [.report(.sending(plan))]
    }

    mutating func sendingStartFailed(_ id: ConnectionID, message: String) -> [Action] {
        guard let entry = sending[id], case .starting = entry.phase else { return [] }
        return replyConnect(id, .failure(ControlFailure(.internalError, "\(entry.source) cannot start sending: \(message)")))
            + close(
                EntryKey(id: id, role: .sending), reason: "sender failed to start", stop: false, notify: entry.reached.map { [$0] } ?? [])
    }

    // MARK: - Ending

    mutating func endSending(_ id: ConnectionID, _ ending: Ending) -> [Action] {
        guard let entry = sending[id] else { return [] }
        let key = EntryKey(id: id, role: .sending)
        switch entry.phase {
        case .verifying:
            return replyConnect(id, cancelled(entry, ending)) + discard(key, reason: ending.reason)
        case .offering(nil):
            sending[id]?.phase = .offering(cancel: ending)
            return []
        case .starting(nil):
            sending[id]?.phase = .starting(cancel: ending)
            return []
        case .live:
            let endpoints = ending.notice == nil ? [] : entry.reached.map { [$0] } ?? []
            return close(key, reason: ending.reason, stop: true, notify: endpoints, notice: ending.notice)
        case .offering, .starting, .closing:
            return []
        }
    }

    // MARK: - Time and probes

    mutating func sendingDeadline(_ id: ConnectionID, now: HostTime) -> [Action] {
        guard let entry = sending[id] else { return [] }
        switch entry.phase {
        case .verifying:
            return beginOffer(id, now: now)
        case .offering:
            let within = timeouts.offer.map { " within \(Self.seconds($0))" } ?? ""
            return offerFailed(entry, ControlFailure(.unreachable, "no answer to the offer\(within)"))
        case .live:
            return close(
                EntryKey(id: id, role: .sending), reason: "closed: \(entry.destination.peer) does not answer", stop: true,
                notify: entry.reached.map { [$0] } ?? [])
        case .starting, .closing:
            return []
        }
    }

    /// Probes the receiving peer of every live connection whose probe is due: one probe per endpoint.
    mutating func probeDueReceivers(now: HostTime) -> [Action] {
        let due = sending.values.filter { ($0.nextProbe ?? now + .seconds(1)) <= now }.map(\.id)
        return probe(due, now: now)
    }

    /// Probes the receivers of these live connections now (one probe per endpoint).
    mutating func probe(_ ids: [ConnectionID], now: HostTime) -> [Action] {
        guard let interval = timeouts.probeInterval else { return [] }
        var targets = Set<ControlEndpoint>()
        for id in ids {
            guard var entry = sending[id], case .live(var liveness) = entry.phase, !liveness.probing, let reached = entry.reached
            else { continue }
            liveness.probing = true
            liveness.nextProbe = now + interval
            entry.phase = .live(liveness)
            sending[id] = entry
            targets.insert(reached)
        }
        return targets.sorted { $0.description < $1.description }.map { .probe(to: [$0], within: timeouts.verify) }
    }

    mutating func probed(_ endpoints: [ControlEndpoint], _ result: ProbeResult, now: HostTime) -> [Action] {
        var actions = probedSender(endpoints, result, now: now)
        for id in sending.keys.sorted(by: { $0.rawValue < $1.rawValue }) {
            guard let entry = sending[id] else { continue }
            switch entry.phase {
            case .verifying(let existing) where entry.endpoints == endpoints:
                actions += verified(entry, existing: existing, result, now: now)
            case .live(let liveness) where liveness.probing && entry.reached.map({ [$0] }) == endpoints:
                actions += probedLive(entry, liveness, result, now: now)
            default:
                continue
            }
        }
        return actions
    }

    /// The receiver's answer about an existing pair: already connected, broken, gone (connect again), or no
    /// answer (offer anyway, and let the offer say what is wrong).
    private mutating func verified(_ entry: Sending, existing id: ConnectionID, _ result: ProbeResult, now: HostTime) -> [Action] {
        guard case .listed(let connections) = result, let existing = sending[id], case .live = existing.phase,
            var summary = existing.summary
        else { return beginOffer(entry.id, now: now) }
        let key = EntryKey(id: entry.id, role: .sending)
        guard let remote = connections.first(where: { $0.id == id }) else {
            return close(
                EntryKey(id: id, role: .sending), reason: "closed: \(entry.destination.peer) no longer receives it", stop: true, notify: [])
                + beginOffer(entry.id, now: now)
        }
        (summary.state, summary.failureReason) = (remote.state, remote.failureReason)
        if remote.state == .failed {
            // Connecting again would not mend the receiver's output: say what is wrong there.
            return replyConnect(
                entry.id,
                .failure(
                    ControlFailure(
                        .busy,
                        "\(entry.destination) cannot play: \(remote.failureReason ?? "its output failed") (\(entry.source) is connected to it [\(id)]; disconnect, mend the output, then connect again)"
                    )))
                + discard(key, reason: "already connected")
        }
        return replyConnect(entry.id, .alreadyConnected(summary)) + [.report(.alreadyConnected(summary))]
            + discard(key, reason: "already connected")
    }

    private mutating func probedLive(_ entry: Sending, _ liveness: Sending.Liveness, _ result: ProbeResult, now: HostTime) -> [Action] {
        var liveness = liveness
        liveness.probing = false
        let key = EntryKey(id: entry.id, role: .sending)
        let peer = entry.destination.peer
        switch result {
        case .listed(let connections):
            guard let remote = connections.first(where: { $0.id == entry.id }) else {
                return close(key, reason: "closed: \(peer) no longer receives it", stop: true, notify: [])
            }
            let silentFor = liveness.unansweredSince.map { now - $0 }
            (liveness.remoteState, liveness.remoteFailure, liveness.unansweredSince) = (remote.state, remote.failureReason, nil)
            sending[entry.id]?.deadline = nil
            sending[entry.id]?.phase = .live(liveness)
            if let silentFor, let long = timeouts.rekeyAfterLoss, silentFor >= long {
                return rekey([entry.id], .resumed, now: now)
            }
            return []
        case .refused:
            return close(key, reason: "closed: \(peer) is not running", stop: true, notify: [])
        case .unanswered:
            let since = liveness.unansweredSince ?? now
            liveness.unansweredSince = since
            sending[entry.id]?.deadline = timeouts.unanswered.map { since + $0 }
        }
        sending[entry.id]?.phase = .live(liveness)
        return []
    }
}

// MARK: - Re-keying

extension ConnectionLifecycle {
    /// Re-keys every live stream to a peer whose scheduled key change is due.
    mutating func rekeyDue(now: HostTime) -> [Action] {
        let due = sending.values.filter { ($0.nextRekey ?? now + .seconds(1)) <= now }.map(\.id)
        return rekey(due, .schedule, now: now)
    }

    /// Re-keys every live stream to a peer.
    mutating func rekeyLive(_ reason: RekeyReason, now: HostTime) -> [Action] {
        rekey(Array(sending.keys), reason, now: now)
    }

    /// A `.rekey` for each of these connections that is a live stream to a peer (not to a standard receiver),
    /// in id order; the schedule starts again from now.
    mutating func rekey(_ ids: [ConnectionID], _ reason: RekeyReason, now: HostTime) -> [Action] {
        var actions: [Action] = []
        for id in ids.sorted(by: { $0.rawValue < $1.rawValue }) {
            guard var entry = sending[id], case .live = entry.phase, entry.offer != nil, let reached = entry.reached else { continue }
            entry.nextRekey = timeouts.rekeyInterval.map { now + $0 }
            sending[id] = entry
            actions.append(.rekey(id, to: reached, reason))
        }
        return actions
    }
}
