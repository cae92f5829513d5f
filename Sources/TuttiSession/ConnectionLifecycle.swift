import TuttiCore
import TuttiWire

/// One peer's connections, from `connect` or `offer` to the last teardown, as a value-type state machine: every
/// input takes the current host time and returns the actions to perform (replies, offers, starts, stops,
/// teardown notices, probes, log events). It opens no socket, reads no clock and draws no random number: the
/// edge (`Peer`) performs the actions, feeds their outcomes back as inputs, and calls `tick` at `nextDeadline`.
///
/// What it keeps: the peer's identity and directory, one `Sending` record per connection this peer sends
/// (key: its id; a pair is source port + destination, case-insensitive) and one `Receiving` record per
/// connection it receives, each with its phase and deadline, and the replies waiting for connections to be
/// gone. A record in `closing` disappears once its `stop` and `notify` have finished; the replies waiting for
/// it go out then. The rows it implements are those of the design (house-lifecycle-design.md §2.2).
///
/// Realtime-safe: no (allocates). Thread-safe: a value (any thread; the edge keeps it on its actor).
package struct ConnectionLifecycle: Sendable {
    /// Who this peer is: what offers and summaries name. A value; thread-safe: yes (any thread).
    package struct Identity: Hashable, Sendable {
        package var peerID: PeerID
        /// The published name (changes on a collision: `.renamed`).
        package var name: String
        package var controlPort: UInt16
        /// The clock capture timestamps are counted on (`linkGhost` when the peer runs Link).
        package var captureClock: CaptureClock
        package var ports: [PortDescriptor]
        /// The peer's host name (`PeerDescription.host`): where its senders' pipelines start.
        package var host: String
        /// The receiver ports whose sink plays out (a device or a pipe to one), where a live input from this
        /// host makes feedback.
        package var playingOut: Set<String>
        /// The addresses this peer may stream plain RTP to (`rtp://` destinations, `--allow-rtp`); empty: none, so
        /// a stranger cannot make the peer send a stream to any address it likes.
        package var rtpAllowed: [IPPrefix]

        package init(
            peerID: PeerID, name: String, controlPort: UInt16, captureClock: CaptureClock, ports: [PortDescriptor], host: String = "",
            playingOut: Set<String> = [], rtpAllowed: [IPPrefix] = []
        ) {
            self.rtpAllowed = rtpAllowed
            self.host = host
            self.playingOut = playingOut
            self.peerID = peerID
            self.name = name
            self.controlPort = controlPort
            self.captureClock = captureClock
            self.ports = ports
        }
    }

    /// One control request, numbered by the edge; its reply is `Action.reply` with the same id. A value;
    /// thread-safe: yes (any thread).
    package struct RequestID: Hashable, Comparable, Sendable, CustomStringConvertible {
        package let rawValue: UInt64
        package init(_ rawValue: UInt64) { self.rawValue = rawValue }
        package static func < (lhs: RequestID, rhs: RequestID) -> Bool { lhs.rawValue < rhs.rawValue }
        package var description: String { "#\(rawValue)" }
    }

    /// What one of the peer's ports can do now (its device clock decides). A value; thread-safe: yes (any thread).
    package struct PortNow: Hashable, Sendable {
        /// Sender: the rates it can stream at now (only its running rate while it streams).
        package var currentRates: [Int]
        /// Receiver: the rate it already runs at, which every new stream must use.
        package var activeSampleRate: Int?
        /// Its device clock: "jack" or "system".
        package var clock: String

        package init(currentRates: [Int], activeSampleRate: Int? = nil, clock: String) {
            self.currentRates = currentRates
            self.activeSampleRate = activeSampleRate
            self.clock = clock
        }
    }

    /// A connection's record, by id and end (a peer connected to itself holds both ends of one id).
    struct EntryKey: Hashable, Comparable, Sendable {
        var id: ConnectionID
        var role: ConnectionRole
        static func < (lhs: EntryKey, rhs: EntryKey) -> Bool {
            (lhs.id.rawValue, lhs.role.rawValue) < (rhs.id.rawValue, rhs.role.rawValue)
        }
    }

    /// How a record in `closing` ends: it waits for its `stop` and `notify` to finish.
    struct Closing: Hashable, Sendable {
        enum Step: Hashable, Sendable { case stop, notify }
        var reason: String
        var awaiting: Set<Step>
    }

    /// A reply that goes out when the connections it names are gone.
    struct WaitingReply: Hashable, Sendable {
        var response: ControlResponse
        var entries: Set<EntryKey>
    }

    /// The RTP payload type of every stream this peer receives or sends to a standard receiver: the first
    /// dynamic one (RFC 3551 §6). Each connection has its own SSRC and UDP port, so one number serves all.
    /// Thread-safe: yes (a constant).
    package static let payloadType: UInt8 = 96

    /// Who this peer is (its name follows `.renamed`). Thread-safe: a value.
    package internal(set) var identity: Identity
    /// Fixed for the lifecycle's life. Thread-safe: a value.
    package let timeouts: LifecycleTimeouts
    /// The peers this peer knows (was `Peer.knownPeers`). Thread-safe: a value.
    package internal(set) var directory: PeerDirectory
    /// Set by `.shutdown`: every later request is refused. Thread-safe: a value.
    package internal(set) var isStopping = false
    var sending: [ConnectionID: Sending] = [:]
    var receiving: [ConnectionID: Receiving] = [:]
    var waiting: [RequestID: WaitingReply] = [:]
    /// Each separate-mode receiver port's tracks, by port name: which pipelines have which track, for the
    /// port's life (`ConnectionLifecycle+Tracks`).
    var trackAssignments: [String: TrackAssignment] = [:]

    /// A peer with no connections. Thread-safe: any thread.
    package init(identity: Identity, timeouts: LifecycleTimeouts, directory: PeerDirectory = PeerDirectory()) {
        self.identity = identity
        self.timeouts = timeouts
        self.directory = directory
    }

    // MARK: - Stepping

    /// Advances the lifecycle by one input at `now`; returns the actions to perform, in order. Never traps on
    /// any input: an outcome for an unknown connection, or one that does not fit its phase, does nothing
    /// (except a late answer, whose receiver is told to drop the connection). Thread-safe: a value.
    package mutating func handle(_ input: Input, now: HostTime) -> [Action] {
        let actions = dispatch(input, now: now)
        return actions + announceUpstreamChanges()
    }

    private mutating func dispatch(_ input: Input, now: HostTime) -> [Action] {
        if isStopping, let refused = refusedWhileStopping(input) { return refused }
        switch input {
        case .connect(let request, let id, let ssrc, let ports, let requestID, let requester):
            return connect(request, id: id, ssrc: ssrc, ports: ports, request: requestID, requester: requester, now: now)
        case .offer(let offer, let host, let ssrc, let ports, let requestID):
            return self.offer(offer, fromHost: host, ssrc: ssrc, ports: ports, request: requestID)
        case .disconnect(let request, let requestID): return disconnect(request, request: requestID)
        case .teardown(let notice, let requestID): return teardown(notice, request: requestID)
        case .shutdown(let requestID): return shutdown(request: requestID)
        case .upstream(let notice): return upstream(notice)
        case .hello(let presence, let endpoint): return hello(presence, from: endpoint, now: now)
        case .bye(let presence): return bye(presence)
        case .discovered(let peer): return discovered(peer)
        case .vanished(let name): return vanished(name)
        case .renamed(let name): return renamed(to: name)
        case .sessionKeyChanged: return rekeyLive(.sessionKeyChanged, now: now)
        case .answered(let id, let answer, let reached, let remoteAddress, let receiver):
            return answered(id, answer, reached: reached, remoteAddress: remoteAddress, receiver: receiver, now: now)
        case .refused(let id, let failure, let unusable): return refused(id, failure, unusableAnswerFrom: unusable)
        case .unreachable(let id, let failure): return unreachable(id, failure)
        case .started(let id, .sending, _): return sendingStarted(id, now: now)
        case .started(let id, .receiving, let mediaPort): return receivingStarted(id, mediaPort: mediaPort, now: now)
        case .startFailed(let id, .sending, let message): return sendingStartFailed(id, message: message)
        case .startFailed(let id, .receiving, let message): return receivingStartFailed(id, message: message)
        case .observed(let id, let observation): return observed(id, observation, now: now)
        case .probed(let endpoints, let result): return probed(endpoints, result, now: now)
        case .stopped(let id, let role): return finished(.stop, of: EntryKey(id: id, role: role))
        case .notified(let id, let role): return finished(.notify, of: EntryKey(id: id, role: role))
        }
    }

    /// Runs every deadline due at `now`: checks of an existing pair and offers that took too long, receivers
    /// that never played or stayed lost, probes of live senders' receivers and probes unanswered too long.
    /// Thread-safe: a value.
    package mutating func tick(now: HostTime) -> [Action] {
        var actions: [Action] = []
        for id in sending.keys.sorted(by: { $0.rawValue < $1.rawValue }) {
            guard let entry = sending[id], let due = entry.dueDeadline, due <= now else { continue }
            actions += sendingDeadline(id, now: now)
        }
        actions += probeDueReceivers(now: now)
        actions += rekeyDue(now: now)
        actions += probeLostSenders(now: now)
        for id in receiving.keys.sorted(by: { $0.rawValue < $1.rawValue }) {
            guard let due = receiving[id]?.deadline, due <= now else { continue }
            actions += receivingDeadline(id, now: now)
        }
        return actions + announceUpstreamChanges()
    }

    /// When `tick` must be called next, or nil when nothing is scheduled. Thread-safe: a value.
    package var nextDeadline: HostTime? {
        let senders = sending.values.flatMap { [$0.dueDeadline, $0.nextProbe, $0.nextRekey].compactMap { $0 } }
        return (senders + receiving.values.flatMap { [$0.deadline, $0.probing ? nil : $0.nextProbe].compactMap { $0 } }).min()
    }

    /// The connections `describe` lists: live senders and receivers that started, by id. Thread-safe: a value.
    package var liveSummaries: [ConnectionSummary] {
        let sent = sending.values.compactMap { entry -> ConnectionSummary? in
            guard case .live = entry.phase else { return nil }
            return entry.summary
        }
        let received = receiving.values.compactMap { entry -> ConnectionSummary? in
            var summary = entry.plan.summary
            switch entry.phase {
            case .awaitingMedia: summary.state = .buffering
            case .playing: summary.state = .playing
            case .lost: summary.state = .lost
            case .starting, .closing: return nil
            }
            if entry.outputFailed { summary.state = .failed }
            return summary
        }
        return (sent + received).sorted { $0.id.rawValue < $1.id.rawValue }
    }

    // MARK: - Shared rules

    /// Peer names compare case-insensitively, as DNS-SD names do.
    static func samePeer(_ lhs: String, _ rhs: String) -> Bool { lhs.lowercased() == rhs.lowercased() }

    static func samePort(_ lhs: PortReference, _ rhs: PortReference) -> Bool {
        lhs.port == rhs.port && samePeer(lhs.peer, rhs.peer)
    }

    /// A duration as the log words it: "8 s", "0.5 s".
    static func seconds(_ duration: Duration) -> String {
        let value = duration.seconds
        return value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
    }

    private func refusedWhileStopping(_ input: Input) -> [Action]? {
        let failure = ControlResponse.failure(ControlFailure(.busy, "peer \(identity.name) is stopping"))
        switch input {
        case .connect(_, _, _, _, let request, _), .offer(_, _, _, _, let request), .disconnect(_, let request),
            .teardown(_, let request):
            return [.reply(request, failure)]
        case .hello, .bye, .discovered, .vanished, .renamed, .upstream, .sessionKeyChanged: return []
        default: return nil
        }
    }
}
