import TuttiCore
import TuttiWire
import XCTest

@testable import TuttiSession

typealias Input = ConnectionLifecycle.Input
typealias Action = ConnectionLifecycle.Action
typealias RequestID = ConnectionLifecycle.RequestID

/// Peer A's lifecycle, driven through public inputs on a hand-moved clock, with every action recorded.
///
/// A has a sender port `out` and a receiver port `in`. A sends to B:in (B at 198.18.0.2:7400) and receives
/// from B:out (offers from 198.18.0.2, B's control port 7400). It cannot do what an edge does: nothing is
/// performed unless a test feeds the outcome (`perform` plays a fake edge).
struct LifecycleDriver {
    static let peerA = PeerID(String(repeating: "a", count: 32))!
    static let peerB = PeerID(String(repeating: "b", count: 32))!
    static let endpointB = ControlEndpoint(host: "198.18.0.2", port: 7_400)
    static let ports = [
        PortDescriptor(
            name: "out", title: "Tone", kind: .sender, channels: 2, sampleRates: [48_000, 44_100], sampleFormats: [.l24, .l16]),
        PortDescriptor(name: "in", title: "Sink", kind: .receiver, channels: 2, sampleRates: [48_000], sampleFormats: [.l24, .l16]),
    ]
    static let portsNow: [String: ConnectionLifecycle.PortNow] = [
        "out": .init(currentRates: [48_000, 44_100], clock: "system"), "in": .init(currentRates: [48_000], clock: "system"),
    ]
    /// A:out → B:in, the pair A sends.
    static let source = PortReference(peer: "A", port: "out")
    static let destination = PortReference(peer: "B", port: "in")
    /// B:out → A:in, the pair A receives.
    static let remoteSource = PortReference(peer: "B", port: "out")
    static let localDestination = PortReference(peer: "A", port: "in")
    static let rtp = RTPDestination(address: IPAddress(parsing: "198.18.0.9")!, port: 5_004)
    static let presenceB = PeerPresence(id: peerB, name: "B", controlPort: 7_400)

    static func id(_ number: UInt64) -> ConnectionID {
        let hex = String(number, radix: 16)
        return ConnectionID(String(repeating: "0", count: 16 - hex.count) + hex)!
    }

    var machine: ConnectionLifecycle
    var now = HostTime(nanoseconds: 1_000_000_000_000)
    private var nextRequest: UInt64 = 1
    private var nextID: UInt64 = 0x100
    /// Every request fed, and every reply seen, in order.
    private(set) var requests: [RequestID] = []
    private(set) var replies: [(RequestID, ControlResponse)] = []
    /// Every action, in order.
    private(set) var log: [Action] = []

    init(
        timeouts: LifecycleTimeouts = .standard, directory: PeerDirectory = PeerDirectory(), ports: [PortDescriptor] = Self.ports,
        host: String = "", playingOut: Set<String> = [], rtpAllowed: [IPPrefix] = [IPPrefix(parsing: "198.18.0.0/15")!]
    ) {
        machine = ConnectionLifecycle(
            identity: .init(
                peerID: Self.peerA, name: "A", controlPort: 7_400, captureClock: .realtime, ports: ports, host: host,
                playingOut: playingOut,
                rtpAllowed: rtpAllowed),
            timeouts: timeouts, directory: directory)
    }

    // MARK: Feeding

    /// A fresh request id (recorded when an input carrying it is fed).
    mutating func request() -> RequestID {
        defer { nextRequest += 1 }
        return RequestID(nextRequest)
    }

    /// The request an input carries, if it is one.
    static func requestID(of input: Input) -> RequestID? {
        switch input {
        case .connect(_, _, _, _, let request, _), .offer(_, _, _, _, let request), .disconnect(_, let request), .teardown(_, let request),
            .shutdown(let request):
            request
        default: nil
        }
    }

    /// A fresh connection id.
    mutating func freshID() -> ConnectionID {
        defer { nextID += 1 }
        return Self.id(nextID)
    }

    @discardableResult
    mutating func feed(_ input: Input) -> [Action] {
        if let index = outstanding.firstIndex(where: { Self.outcome(input, answers: $0) }) { outstanding.remove(at: index) }
        if let request = Self.requestID(of: input) { requests.append(request) }
        return record(machine.handle(input, now: now))
    }

    @discardableResult
    mutating func advance(_ duration: Duration) -> [Action] {
        now = now + duration
        return record(machine.tick(now: now))
    }

    /// Actions whose outcome has not been fed yet, in order.
    private(set) var outstanding: [Action] = []

    @discardableResult
    private mutating func record(_ actions: [Action]) -> [Action] {
        log += actions
        for action in actions {
            switch action {
            case .reply(let request, let response): replies.append((request, response))
            case .introduce, .report, .announce, .rekey: break
            default: outstanding.append(action)
            }
        }
        return actions
    }

    /// Whether `input` is the outcome of `action`.
    static func outcome(_ input: Input, answers action: Action) -> Bool {
        switch (input, action) {
        case (.answered(let id, _, _, _, _), .sendOffer(let offered, _, _, _)), (.refused(let id, _, _), .sendOffer(let offered, _, _, _)),
            (.unreachable(let id, _), .sendOffer(let offered, _, _, _)):
            return id == offered
        case (.started(let id, .sending, _), .startSending(let plan)), (.startFailed(let id, .sending, _), .startSending(let plan)):
            return id == plan.summary.id
        case (.started(let id, .receiving, _), .startReceiving(let plan)), (.startFailed(let id, .receiving, _), .startReceiving(let plan)):
            return id == plan.summary.id
        case (.stopped(let id, let role), .stop(let stopped, let stoppedRole, _)): return id == stopped && role == stoppedRole
        case (.notified(let id, let role), .notify(let notified, let notifiedRole, _, _)): return id == notified && role == notifiedRole
        case (.probed(let endpoints, _), .probe(let probed, _)): return endpoints == probed
        default: return false
        }
    }

    /// The replies to `request` seen so far.
    func replies(to request: RequestID) -> [ControlResponse] { replies.filter { $0.0 == request }.map(\.1) }

    // MARK: Inputs

    static func connectRequest(options: ConnectOptions = ConnectOptions()) -> ConnectRequest {
        ConnectRequest(source: source, destination: destination, destinationEndpoints: [endpointB], options: options)
    }

    mutating func connect(_ id: ConnectionID, options: ConnectOptions = ConnectOptions()) -> Input {
        .connect(Self.connectRequest(options: options), id: id, ssrc: 0x5555, ports: Self.portsNow, request: request())
    }

    mutating func connectRTP(_ id: ConnectionID) -> Input {
        .connect(
            ConnectRequest(source: Self.source, rtpDestination: Self.rtp, options: ConnectOptions()), id: id, ssrc: 0x6666,
            ports: Self.portsNow, request: request())
    }

    static func offer(_ id: ConnectionID, from source: PortReference = remoteSource) -> StreamOffer {
        let port = PortDescriptor(name: source.port, title: "", kind: .sender, channels: 2, sampleRates: [48_000], sampleFormats: [.l24])
        return Negotiation.offer(
            id: id, peerID: peerB, source: source, destination: PortReference(peer: "A", port: "in"), port: port,
            currentRates: [48_000], senderClock: "system", options: ConnectOptions(), captureClock: .realtime, controlPort: 7_400)
    }

    mutating func offer(_ id: ConnectionID, from source: PortReference = remoteSource) -> Input {
        .offer(Self.offer(id, from: source), fromHost: "198.18.0.2", ssrc: 0x7777, ports: Self.portsNow, request: request())
    }

    /// The format B answers with (A's offers carry 48/44.1 kHz, 2 channels, L24/L16).
    static let format = StreamFormat(sampleRate: 48_000, channels: 2, sampleFormat: .l24, packetFrames: 64, targetLatencyFrames: 192)

    static func answered(_ id: ConnectionID, format: StreamFormat = format, remoteAddress: String? = nil) -> Input {
        .answered(
            id, StreamAnswer(connectionID: id, format: format, mediaPort: 5_004, ssrc: 0x1234, payloadType: 96), reached: endpointB,
            remoteAddress: remoteAddress)
    }

    /// What B's `describe` lists: `ids` as B receives them.
    static func listed(_ ids: [ConnectionID], state: ConnectionState = .playing, failure: String? = nil) -> Input {
        .probed(
            to: [endpointB],
            .listed(
                ids.map { id in
                    var summary = ConnectionSummary(
                        id: id, role: .receiving, source: source, destination: destination, format: format, state: state)
                    summary.failureReason = failure
                    return summary
                }))
    }

    // MARK: Named states (through public inputs only)

    /// A sender in `offering`.
    mutating func offering(_ id: ConnectionID) {
        let actions = feed(connect(id))
        precondition(actions.count == 1, "offering: \(actions)")
    }

    /// A sender in `starting` (B answered).
    mutating func startingSender(_ id: ConnectionID) {
        offering(id)
        feed(Self.answered(id))
    }

    /// A live sender.
    mutating func liveSender(_ id: ConnectionID) {
        startingSender(id)
        feed(.started(id, .sending, mediaPort: nil))
    }

    /// A receiver in `starting`.
    mutating func startingReceiver(_ id: ConnectionID) {
        feed(offer(id))
    }

    /// A receiver that answered and awaits media.
    mutating func awaitingReceiver(_ id: ConnectionID) {
        startingReceiver(id)
        feed(.started(id, .receiving, mediaPort: 5_004))
    }

    mutating func playingReceiver(_ id: ConnectionID) {
        awaitingReceiver(id)
        feed(.observed(id, .playing))
    }

    mutating func lostReceiver(_ id: ConnectionID) {
        playingReceiver(id)
        feed(.observed(id, .lost))
    }

    // MARK: Reading

    func sendingPhase(_ id: ConnectionID) -> ConnectionLifecycle.Sending.Phase? { machine.sending[id]?.phase }
    func receivingPhase(_ id: ConnectionID) -> ConnectionLifecycle.Receiving.Phase? { machine.receiving[id]?.phase }
    var isEmpty: Bool { machine.sending.isEmpty && machine.receiving.isEmpty }

    // MARK: A fake edge

    /// How the fake edge answers what it is asked.
    enum World {
        /// Offers are answered, starts succeed, probes list the connection, media plays.
        case healthy
        /// Nothing answers: offers are unreachable, probes unanswered, playing streams get lost.
        case silent
    }

    /// Performs every outstanding action as an edge would and feeds its outcome back, until nothing is left.
    mutating func settle(in world: World) {
        var steps = 0
        while let action = outstanding.first, steps < 10_000 {
            steps += 1
            let outcome: Input
            switch action {
            case .sendOffer(let id, _, _, _):
                outcome = world == .healthy ? Self.answered(id) : .unreachable(id, ControlFailure(.unreachable, "timed out"))
            case .startSending(let plan): outcome = .started(plan.summary.id, .sending, mediaPort: nil)
            case .startReceiving(let plan): outcome = .started(plan.summary.id, .receiving, mediaPort: 5_004)
            case .stop(let id, let role, _): outcome = .stopped(id, role)
            case .notify(let id, let role, _, _): outcome = .notified(id, role)
            case .probe(let endpoints, _):
                let ids = machine.sending.values.filter { $0.reached.map { [$0] } == endpoints }.map(\.id)
                outcome = world == .healthy ? Self.listed(ids) : .probed(to: endpoints, .unanswered)
            case .reply, .introduce, .report, .announce, .rekey:
                outstanding.removeFirst()
                continue
            }
            feed(outcome)
        }
        precondition(outstanding.isEmpty, "the fake edge did not settle")
    }

    /// Moves time on to each deadline in turn (the silent world loses every playing stream), performing what
    /// is outstanding and what comes due, until nothing is scheduled or `limit` has passed. Returns the time it took.
    @discardableResult
    mutating func runDown(in world: World, limit: Duration = .seconds(120)) -> Duration {
        let start = now
        var steps = 0
        while now - start < limit, steps < 10_000 {
            steps += 1
            if world == .silent {
                for id in machine.receiving.keys.sorted(by: { $0.rawValue < $1.rawValue }) where machine.receiving[id]?.phase == .playing {
                    feed(.observed(id, .lost))
                }
            }
            settle(in: world)
            guard let deadline = machine.nextDeadline else { break }
            now = max(now, deadline)
            record(machine.tick(now: now))
        }
        return now - start
    }
}
