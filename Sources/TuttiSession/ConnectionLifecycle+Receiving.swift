import TuttiCore
import TuttiWire

/// The receiver's rows: offer, start, media observed, lost, and the timeouts that free a slot.
extension ConnectionLifecycle {
    /// One connection this peer receives.
    struct Receiving: Hashable, Sendable {
        enum Phase: Hashable, Sendable {
            /// `startReceiving` is under way; `cancel`: ended meanwhile, stopped once started.
            case starting(cancel: Ending?)
            /// Answered; no stream plays yet.
            case awaitingMedia
            case playing
            /// No packets since the jitter buffer said so at `since`.
            case lost(since: HostTime)
            case closing(Closing)
        }

        var id: ConnectionID
        var plan: ReceivePlan
        var senderPeerID: PeerID
        /// The `offer` request, until answered.
        var offerRequest: RequestID?
        var phase: Phase
        /// The chains that reach the connection's source (the offer's, then each `UpstreamNotice`'s).
        var upstream: [Pipeline]
        /// The feedback warning given with the answer, if any.
        var warning: String? = nil
        /// The port's output failure was reported.
        var outputFailed = false
        /// The connection holds its track of a separate-mode port (`plan.summary.track`), until it closes.
        var holdsTrack = false
        /// Awaiting media or lost: when the connection is freed.
        var deadline: HostTime?
        /// Lost: when the sending peer is asked next whether it still sends the stream (none while a probe is
        /// out), and since when it has not answered.
        var nextProbe: HostTime? = nil
        var probing = false
        var unansweredSince: HostTime? = nil

        var isClosing: Bool { if case .closing = phase { true } else { false } }
        var isLive: Bool {
            switch phase {
            case .awaitingMedia, .playing, .lost: true
            case .starting, .closing: false
            }
        }
    }

    // MARK: - Offer

    mutating func offer(
        _ offer: StreamOffer, fromHost host: String?, ssrc: UInt32, ports: [String: PortNow], request: RequestID
    ) -> [Action] {
        let destination = PortReference(peer: identity.name, port: offer.destination.port)
        func refuse(_ failure: ControlFailure) -> [Action] {
            [.reply(request, .failure(failure)), .report(.refused(source: offer.source, destination: destination, failure))]
        }
        guard receiving[offer.connectionID] == nil else {
            return [.reply(request, .failure(ControlFailure(.busy, "connection \(offer.connectionID) already exists")))]
        }
        // An offer for another peer (an old address, now another peer's; or a requester's wrong endpoint) is
        // not this peer's to take, whatever its port names.
        guard Self.samePeer(offer.destination.peer, identity.name) else {
            return refuse(
                ControlFailure(
                    .unknownPeer,
                    "\(offer.destination) was offered to \(identity.name), another peer (an old address?); connect again to find \(offer.destination.peer)"
                ))
        }
        let port: PortDescriptor
        switch PortSelection.destination(destination, in: identity.ports) {
        case .success(let found): port = found
        case .failure(let refusal): return refuse(refusal.failure)
        }
        guard let portNow = ports[port.name] else {
            return refuse(ControlFailure(.wrongDirection, "\(destination) cannot receive audio"))
        }
        if offer.senderPeerID == identity.peerID, let refusal = selfConnectionRefusal(source: offer.source, destination: destination) {
            return refuse(refusal)
        }
        let upstream = offer.upstream ?? [Pipeline(origin: offer.source, live: false, originHost: nil)]
        if let refusal = Self.loopRefusal(upstream: upstream, source: offer.source, destination: destination) {
            return refuse(refusal)
        }
        var actions: [Action] = []
        if let existing = receiving.values.filter({
            !$0.isClosing && $0.plan.summary.destination.port == port.name && Self.samePort($0.plan.summary.source, offer.source)
        }).min(by: { $0.id.rawValue < $1.id.rawValue }) {
            // The sender checks for the pair before offering; a second offer means it lost track (it
            // restarted): a stream that has stopped gives way, a live one is kept.
            guard case .lost = existing.phase else {
                return [
                    .reply(
                        request,
                        .failure(
                            ControlFailure(
                                .busy, "\(destination) already receives \(offer.source) [\(existing.id)]; disconnect it first")))
                ]
            }
            actions += close(
                EntryKey(id: existing.id, role: .receiving), reason: "closed: \(offer.source) connected again", stop: true, notify: [])
        }
        var offer = offer
        offer.destination = destination
        let capabilities = ReceiverCapabilities(port: port, activeSampleRate: portNow.activeSampleRate)
        let format: StreamFormat
        switch Negotiation.chooseFormat(offer: offer, receiver: capabilities) {
        case .success(let chosen): format = chosen
        case .failure(let refusal): return actions + refuse(refusal.failure)
        }
        var summary = ConnectionSummary(
            id: offer.connectionID, role: .receiving, source: offer.source, destination: destination, format: format, state: .buffering)
        if let tracks = port.tracks {
            switch takeTrack(port: port.name, tracks: tracks, upstream: upstream, destination: destination) {
            case .success(let track): summary.track = track
            case .failure(let failure): return actions + refuse(failure)
            }
        }
        let plan = ReceivePlan(
            summary: summary, port: port.name, ssrc: ssrc, payloadType: Self.payloadType,
            senderEndpoint: host.map { ControlEndpoint(host: $0, port: offer.senderControlPort) }, captureClock: offer.captureClock,
            deviceRate: Negotiation.deviceRate(for: format, receiver: capabilities), remoteClock: offer.remoteClockKey)
        let warning = feedbackWarning(port: port.name, pipelines: upstream)
        receiving[offer.connectionID] = Receiving(
            id: offer.connectionID, plan: plan, senderPeerID: offer.senderPeerID, offerRequest: request, phase: .starting(cancel: nil),
            upstream: upstream, warning: warning, holdsTrack: summary.track != nil)
        return actions + [.startReceiving(plan)]
    }

    /// Answers the offer request of `id`, once.
    private mutating func replyOffer(_ id: ConnectionID, _ response: ControlResponse) -> [Action] {
        guard let request = receiving[id]?.offerRequest else { return [] }
        receiving[id]?.offerRequest = nil
        return [.reply(request, response)]
    }

    // MARK: - Outcomes

    mutating func receivingStarted(_ id: ConnectionID, mediaPort: UInt16?, now: HostTime) -> [Action] {
        guard var entry = receiving[id], case .starting(let cancel) = entry.phase else { return [] }
        let summary = entry.plan.summary
        if let cancel {
            return replyOffer(id, .failure(ControlFailure(.busy, "\(summary.destination) [\(id)]: \(cancel.reason) while starting")))
                + close(EntryKey(id: id, role: .receiving), reason: cancel.reason, stop: true, notify: [])
        }
        entry.phase = .awaitingMedia
        entry.deadline = timeouts.start.map { now + $0 }
        receiving[id] = entry
        var answer = StreamAnswer(
            connectionID: id, format: summary.format, mediaPort: mediaPort ?? 0, ssrc: entry.plan.ssrc, payloadType: entry.plan.payloadType)
        answer.warning = entry.warning
        return replyOffer(id, .answer(answer)) + [.report(.receiving(entry.plan, mediaPort: mediaPort ?? 0))]
            + (entry.warning.map { [.report(.feedback(port: entry.plan.port, warning: $0))] } ?? [])
    }

    mutating func receivingStartFailed(_ id: ConnectionID, message: String) -> [Action] {
        guard let entry = receiving[id], case .starting = entry.phase else { return [] }
        return replyOffer(
            id,
            .failure(
                ControlFailure(
                    .internalError, "\(entry.plan.summary.destination) cannot start receiving: \(message)")))
            + discard(EntryKey(id: id, role: .receiving), reason: "failed to start")
    }

    mutating func observed(_ id: ConnectionID, _ observation: MediaObservation, now: HostTime) -> [Action] {
        guard var entry = receiving[id] else { return [] }
        let summary = entry.plan.summary
        let event: LifecycleEvent
        switch (entry.phase, observation) {
        case (.awaitingMedia, .playing):
            (entry.phase, entry.deadline) = (.playing, nil)
            event = .playing(summary)
        case (.playing, .lost):
            (entry.phase, entry.deadline) = (.lost(since: now), timeouts.lost.map { now + $0 })
            if entry.plan.senderEndpoint != nil { entry.nextProbe = timeouts.lostProbeInterval.map { now + $0 } }
            event = .lost(summary)
        case (.lost, .playing):
            (entry.phase, entry.deadline) = (.playing, nil)
            (entry.nextProbe, entry.unansweredSince) = (nil, nil)
            event = .resumed(summary)
        case (_, .outputFailed(let reason)) where entry.isLive && !entry.outputFailed:
            entry.outputFailed = true
            let ids = receiving.values.filter { $0.isLive && $0.plan.port == entry.plan.port }.map(\.id)
            event = .outputFailed(port: entry.plan.port, reason: reason, connections: ids.sorted { $0.rawValue < $1.rawValue })
        default:
            return []
        }
        receiving[id] = entry
        return [.report(event)]
    }

    // MARK: - Ending and time

    mutating func endReceiving(_ id: ConnectionID, _ ending: Ending) -> [Action] {
        guard let entry = receiving[id] else { return [] }
        switch entry.phase {
        case .starting(nil):
            receiving[id]?.phase = .starting(cancel: ending)
            return []
        case .awaitingMedia, .playing, .lost:
            let endpoints = ending.notice == nil ? [] : entry.plan.senderEndpoint.map { [$0] } ?? []
            return close(EntryKey(id: id, role: .receiving), reason: ending.reason, stop: true, notify: endpoints, notice: ending.notice)
        case .starting, .closing:
            return []
        }
    }

    mutating func receivingDeadline(_ id: ConnectionID, now: HostTime) -> [Action] {
        guard let entry = receiving[id] else { return [] }
        let reason: String
        switch entry.phase {
        case .awaitingMedia: reason = "closed: no media arrived in \(timeouts.start.map(Self.seconds) ?? "time")"
        case .lost: reason = "closed: lost for \(timeouts.lost.map(Self.seconds) ?? "too long")"
        case .starting, .playing, .closing: return []
        }
        return close(
            EntryKey(id: id, role: .receiving), reason: reason, stop: true, notify: entry.plan.senderEndpoint.map { [$0] } ?? [])
    }
}

// MARK: - Asking a lost stream's sender

extension ConnectionLifecycle {
    /// Probes the sending peer of every lost stream whose probe is due.
    mutating func probeLostSenders(now: HostTime) -> [Action] {
        let due = receiving.values.filter { !$0.probing && ($0.nextProbe ?? now + .seconds(1)) <= now }.map(\.id)
        return probeSenders(of: due, now: now)
    }

    /// Asks the sending peers of these receiving connections whether they still send them (one probe per
    /// endpoint); nothing without `lostProbeInterval`.
    mutating func probeSenders(of ids: [ConnectionID], now: HostTime) -> [Action] {
        guard let interval = timeouts.lostProbeInterval else { return [] }
        var targets = Set<ControlEndpoint>()
        for id in ids {
            guard var entry = receiving[id], entry.isLive, !entry.probing, let endpoint = entry.plan.senderEndpoint else { continue }
            entry.probing = true
            if case .lost = entry.phase { entry.nextProbe = now + interval }
            receiving[id] = entry
            targets.insert(endpoint)
        }
        return targets.sorted { $0.description < $1.description }.map { .probe(to: [$0], within: timeouts.verify) }
    }

    /// What a probe of a sending peer found, for each receiving connection it asked about.
    mutating func probedSender(_ endpoints: [ControlEndpoint], _ result: ProbeResult, now: HostTime) -> [Action] {
        var actions: [Action] = []
        for id in receiving.keys.sorted(by: { $0.rawValue < $1.rawValue }) {
            guard var entry = receiving[id], entry.probing, entry.plan.senderEndpoint.map({ [$0] }) == endpoints else { continue }
            entry.probing = false
            let key = EntryKey(id: id, role: .receiving)
            let peer = entry.plan.summary.source.peer
            switch result {
            case .listed(let connections):
                guard connections.contains(where: { $0.id == id }) else {
                    actions += close(key, reason: "closed: \(peer) no longer sends it", stop: true, notify: [])
                    continue
                }
                entry.unansweredSince = nil
            case .refused:
                actions += close(key, reason: "closed: \(peer) is not running", stop: true, notify: [])
                continue
            case .unanswered:
                let since = entry.unansweredSince ?? now
                if let limit = timeouts.unanswered, now - since >= limit {
                    actions += close(key, reason: "closed: \(peer) does not answer", stop: true, notify: [])
                    continue
                }
                entry.unansweredSince = since
            }
            receiving[id] = entry
        }
        return actions
    }
}
