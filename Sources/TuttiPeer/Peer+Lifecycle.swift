import TuttiCore
import TuttiSRTP
import TuttiSession
import TuttiWire

/// One thing that advances the lifecycle: an input, or a call at its next deadline.
enum LifecycleStep: Sendable {
    case input(ConnectionLifecycle.Input)
    case tick
}

/// The lifecycle's edge: the peer feeds `ConnectionLifecycle` its inputs (requests, presence news, the outcomes
/// of its own actions, deadlines) and performs the actions it returns. Control plane (the actor).
extension Peer {
    /// Feeds a control request to the lifecycle under a fresh number and waits for its reply (which may come
    /// at once, or when the connections it waits for are gone).
    func request(_ input: (ConnectionLifecycle.RequestID) -> ConnectionLifecycle.Input) async -> ControlResponse {
        nextRequestNumber += 1
        let number = ConnectionLifecycle.RequestID(nextRequestNumber)
        let input = input(number)
        return await withCheckedContinuation { continuation in
            pendingReplies[number] = continuation
            step(input)
        }
    }

    /// Feeds one input. Outcomes that actions feed back while it is handled wait their turn, so that every
    /// input's actions are performed in the order the lifecycle gave them.
    func step(_ input: ConnectionLifecycle.Input) { advance(.input(input)) }

    func advance(_ next: LifecycleStep) {
        queuedInputs.append(next)
        guard !isStepping else { return }
        isStepping = true
        defer { isStepping = false }
        while !queuedInputs.isEmpty {
            let step = queuedInputs.removeFirst()
            let now = environment.clock.now()
            let actions: [ConnectionLifecycle.Action]
            switch step {
            case .input(let input): actions = lifecycle.handle(input, now: now)
            case .tick: actions = lifecycle.tick(now: now)
            }
            for action in actions { perform(action) }
        }
    }

    /// Performs one action; what takes time (the network, the engine's attach and detach) runs in a task that
    /// feeds its outcome back.
    private func perform(_ action: ConnectionLifecycle.Action) {
        let transport = environment.transport
        switch action {
        case .reply(let request, let response):
            pendingReplies.removeValue(forKey: request)?.resume(returning: response)
        case .sendOffer(let id, var offer, let endpoints, let within):
            if sessionKeys != nil {
                // Members-only: the stream is SRTP, its key drawn here and carried in the (encrypted) offer.
                let key = SRTPMasterKey.random(.aeadAES128GCM)
                outgoingMediaKeys[id] = key
                offer.mediaKey = MediaKeying(suite: key.suite.rawValue, key: key.bytes)
            }
            launch { [offer] in await Self.offer(offer, id: id, to: endpoints, within: within, over: transport) }
        case .startSending(let plan):
            launch { await self.startSending(plan) }
        case .startReceiving(let plan):
            launch {
                await self.startReceiving(plan)
                return nil
            }
        case .stop(let id, let role, let reason):
            launch {
                switch role {
                case .sending: await self.stopSending(id, reason: reason)
                case .receiving: await self.stopReceiving(id, reason: reason)
                }
                return .stopped(id, role)
            }
        case .notify(let id, let role, let reason, let endpoints):
            launch {
                await Self.notify(endpoints, of: id, reason: reason, over: transport)
                return .notified(id, role)
            }
        case .probe(let endpoints, let within):
            launch { .probed(to: endpoints, await Self.probe(endpoints, within: within, over: transport)) }
        case .introduce(let endpoints):
            guard !stopped else { return }
            let presence = self.presence
            let number = nextIntroduction
            nextIntroduction &+= 1
            // Kept until answered: `stop()` waits for them, so no hello of ours lands after our bye.
            introductions[number] = Task {
                _ = try? await transport.reply(to: .hello(presence), fromAnyOf: endpoints, timeout: .seconds(1))
                self.introductions[number] = nil
            }
        case .announce(let notice, let endpoints):
            launch {
                _ = try? await transport.reply(to: .upstream(notice), fromAnyOf: endpoints, timeout: .seconds(1))
                return nil
            }
        case .rekey(let id, let endpoint, let reason):
            // Only a members' stream re-keys (plain RTP has no key; a standard receiver's is in its SDP).
            guard sending[id]?.connection.canRekey == true else { return }
            let key = SRTPMasterKey.random(.aeadAES128GCM)
            launch {
                await self.rekey(id, with: key, at: endpoint, because: reason)
                return nil
            }
        case .report(let event):
            report(event)
        }
    }

    /// Runs `work` in a task on the actor and feeds the input it returns, if any; counted in `actionsInFlight`
    /// until then.
    private func launch(_ work: @escaping @Sendable () async -> ConnectionLifecycle.Input?) {
        actionsInFlight += 1
        Task {
            let outcome = await work()
            self.actionsInFlight -= 1
            if let outcome { self.step(outcome) }
        }
    }

    /// Waits until every action under way has fed its outcome back (and the actions those caused, in turn).
    /// For tests on fake time.
    func settle() async {
        while actionsInFlight > 0 { try? await Task.sleep(for: .milliseconds(1)) }
    }

    /// Offers a stream to the receiving peer; its answer, refusal or silence as the lifecycle's input.
    private static func offer(
        _ offer: StreamOffer, id: ConnectionID, to endpoints: [ControlEndpoint], within: Duration?, over transport: any ControlTransport
    ) async -> ConnectionLifecycle.Input {
        // The lifecycle's deadline ends the whole offer; each endpoint gets at most 3 s of it.
        let each = min(within ?? .seconds(3), .seconds(3))
        let reply: ControlReply
        do {
            reply = try await transport.reply(to: .offer(offer), fromAnyOf: endpoints, timeout: each)
        } catch {
            return .unreachable(id, error.failure)
        }
        switch reply.response {
        case .answer(let answer):
            return .answered(id, answer, reached: reply.endpoint, remoteAddress: reply.remoteAddress, receiver: reply.remotePeer)
        case .failure(let failure):
            return .refused(id, failure, unusableAnswerFrom: nil)
        default:
            let failure = ControlFailure(.malformed, "\(offer.destination.peer) answered the offer with \(reply.response.typeName)")
            return .refused(id, failure, unusableAnswerFrom: reply.endpoint)
        }
    }

    /// Asks a peer to describe itself: what the lifecycle makes of its answer.
    private static func probe(
        _ endpoints: [ControlEndpoint], within: Duration, over transport: any ControlTransport
    ) async -> ConnectionLifecycle.ProbeResult {
        do {
            let reply = try await transport.reply(to: .describe, fromAnyOf: endpoints, timeout: within)
            guard case .description(let description) = reply.response else { return .unanswered }
            return .listed(description.connections)
        } catch {
            return error.refusedEverywhere ? .refused : .unanswered
        }
    }

    /// Sends a teardown notice to every endpoint at once, 1 s each; errors are ignored (the other end may be gone).
    private static func notify(
        _ endpoints: [ControlEndpoint], of id: ConnectionID, reason: String, over transport: any ControlTransport
    ) async {
        await withDiscardingTaskGroup { group in
            for endpoint in endpoints {
                group.addTask {
                    _ = try? await transport.reply(
                        to: .teardown(TeardownNotice(connectionID: id, reason: reason)), fromAnyOf: [endpoint], timeout: .seconds(1))
                }
            }
        }
    }

    /// Four times a second: `pollConnections`, and JACK events reported.
    func watchConnections() async {
        while !stopped {
            try? await Task.sleep(for: .milliseconds(250))
            reportJACKEvents()
            pollConnections()
        }
    }

    /// Feeds what each receiving stream does now (on change) and runs the lifecycle's due deadlines.
    func pollConnections() {
        observeReceivers()
        if let due = lifecycle.nextDeadline, due <= environment.clock.now() { advance(.tick) }
    }
}
