import TuttiCore
import TuttiWire

/// Ending connections: disconnect, teardown and shutdown requests, the `closing` phase, and the replies that
/// wait for connections to be gone.
extension ConnectionLifecycle {
    /// Why a connection ends, from the request that ends it.
    struct Ending: Hashable, Sendable {
        /// What the log says when it is stopped ("disconnected", "closed by the other end (…)").
        var reason: String
        /// The teardown notice's reason to the other end; nil: the other end is not told (it asked).
        var notice: String?
    }

    // MARK: - Requests

    mutating func disconnect(_ request: DisconnectRequest, request requestID: RequestID) -> [Action] {
        func matches(_ id: ConnectionID, _ source: PortReference, _ destination: PortReference) -> Bool {
            if let wanted = request.connectionID, wanted != id { return false }
            if let wanted = request.source, !Self.samePort(wanted, source) { return false }
            if let wanted = request.destination, !Self.samePort(wanted, destination) { return false }
            return true
        }
        let sent = sending.values.filter { matches($0.id, $0.source, $0.destination) }.map { EntryKey(id: $0.id, role: .sending) }
        let received = receiving.values.filter { matches($0.id, $0.plan.summary.source, $0.plan.summary.destination) }
            .map { EntryKey(id: $0.id, role: .receiving) }
        let keys = (sent + received).sorted()
        guard !keys.isEmpty else {
            let what = [
                request.source.map { "from \($0)" }, request.destination.map { "to \($0)" }, request.connectionID.map { "with id \($0)" },
            ]
            .compactMap { $0 }.joined(separator: " ")
            return [.reply(requestID, .failure(ControlFailure(.notFound, "peer \(identity.name) has no connection \(what)")))]
        }
        let ending = Ending(reason: "disconnected", notice: "disconnected")
        var actions: [Action] = []
        for key in keys { actions += end(key, ending) }
        return actions + wait(requestID, replying: .disconnected(count: keys.count), for: keys)
    }

    mutating func teardown(_ notice: TeardownNotice, request: RequestID) -> [Action] {
        let keys = [EntryKey(id: notice.connectionID, role: .sending), EntryKey(id: notice.connectionID, role: .receiving)]
            .filter(exists)
        let ending = Ending(reason: "closed by the other end (\(notice.reason))", notice: nil)
        var actions: [Action] = []
        for key in keys { actions += end(key, ending) }
        return actions + wait(request, replying: .done, for: keys)
    }

    mutating func shutdown(request: RequestID) -> [Action] {
        isStopping = true
        let keys = (sending.keys.map { EntryKey(id: $0, role: .sending) } + receiving.keys.map { EntryKey(id: $0, role: .receiving) })
            .sorted()
        var actions: [Action] = []
        for key in keys { actions += end(key, Ending(reason: "closed: peer stopping", notice: "peer stopping")) }
        return actions + wait(request, replying: .done, for: keys)
    }

    /// Ends one connection in whatever phase it is: at once, or (while an offer or a start is under way)
    /// as soon as that step's outcome arrives.
    mutating func end(_ key: EntryKey, _ ending: Ending) -> [Action] {
        switch key.role {
        case .sending: endSending(key.id, ending)
        case .receiving: endReceiving(key.id, ending)
        }
    }

    // MARK: - Closing

    func exists(_ key: EntryKey) -> Bool {
        switch key.role {
        case .sending: sending[key.id] != nil
        case .receiving: receiving[key.id] != nil
        }
    }

    /// `reply` to `request` once none of `keys` exists any more (now, if none does).
    mutating func wait(_ request: RequestID, replying response: ControlResponse, for keys: [EntryKey]) -> [Action] {
        let pending = Set(keys.filter(exists))
        guard !pending.isEmpty else { return [.reply(request, response)] }
        if var already = waiting[request] {
            already.entries.formUnion(pending)
            waiting[request] = already
        } else {
            waiting[request] = WaitingReply(response: response, entries: pending)
        }
        return []
    }

    /// Starts closing a connection: `stop` (when it has engine objects) and `notify` (when `endpoints` is not
    /// empty); with neither, it is gone at once.
    mutating func close(
        _ key: EntryKey, reason: String, stop: Bool, notify endpoints: [ControlEndpoint], notice: String? = nil
    ) -> [Action] {
        if key.role == .receiving { freeTrack(of: key.id) }
        var closing = Closing(reason: reason, awaiting: [])
        var actions: [Action] = []
        if stop {
            closing.awaiting.insert(.stop)
            actions.append(.stop(key.id, key.role, reason: reason))
        }
        if !endpoints.isEmpty {
            closing.awaiting.insert(.notify)
            actions.append(.notify(key.id, key.role, reason: notice ?? reason, to: endpoints))
        }
        guard !closing.awaiting.isEmpty else { return discard(key, reason: reason) }
        switch key.role {
        case .sending:
            sending[key.id]?.phase = .closing(closing)
            sending[key.id]?.deadline = nil
        case .receiving:
            receiving[key.id]?.phase = .closing(closing)
            receiving[key.id]?.deadline = nil
        }
        return actions
    }

    /// A `stop` or `notify` finished; a closing connection with nothing left to wait for is gone. A second
    /// outcome, or one for a connection that is not closing, does nothing.
    mutating func finished(_ step: Closing.Step, of key: EntryKey) -> [Action] {
        let phase: Closing?
        switch key.role {
        case .sending: if case .closing(let closing) = sending[key.id]?.phase { phase = closing } else { phase = nil }
        case .receiving: if case .closing(let closing) = receiving[key.id]?.phase { phase = closing } else { phase = nil }
        }
        guard var closing = phase, closing.awaiting.remove(step) != nil else { return [] }
        guard closing.awaiting.isEmpty else {
            switch key.role {
            case .sending: sending[key.id]?.phase = .closing(closing)
            case .receiving: receiving[key.id]?.phase = .closing(closing)
            }
            return []
        }
        return discard(key, reason: closing.reason)
    }

    /// Forgets a connection: the replies that waited only for it go out. (Its own request is answered by then;
    /// should a row forget to, it is refused here, and debug builds trap.)
    mutating func discard(_ key: EntryKey, reason: String) -> [Action] {
        var actions: [Action] = []
        let own: RequestID?
        let name: String
        switch key.role {
        case .sending:
            own = sending[key.id]?.connect
            name = sending[key.id].map { "\($0.source) → \($0.destination)" } ?? "\(key.id)"
            sending[key.id] = nil
        case .receiving:
            freeTrack(of: key.id)
            own = receiving[key.id]?.offerRequest
            name = receiving[key.id].map { "\($0.plan.summary.source) → \($0.plan.summary.destination)" } ?? "\(key.id)"
            receiving[key.id] = nil
        }
        // Every row answers its connection's own request before it lets the connection go; this is a bug net.
        assert(own == nil, "\(key) discarded with its request \(own.map(\.description) ?? "") unanswered")
        if let own { actions.append(.reply(own, .failure(ControlFailure(.busy, "\(name) [\(key.id)] ended while connecting: \(reason)")))) }
        for request in waiting.keys.sorted() {
            guard var reply = waiting[request], reply.entries.remove(key) != nil else { continue }
            if reply.entries.isEmpty {
                waiting[request] = nil
                actions.append(.reply(request, reply.response))
            } else {
                waiting[request] = reply
            }
        }
        return actions
    }
}
