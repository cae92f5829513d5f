import TuttiClock

/// A deterministic simulation of Link peers on one network: every node has its own host clock (true time
/// plus an offset), datagrams take `delay` µs, a clock measurement takes `measurementDuration` µs and
/// returns the exact transform (the measurement's own accuracy is tested on its own). Peers can be killed
/// (silent) or disabled (BYEBYE), and every datagram is encoded and decoded on the way, as on the wire.
struct LinkSessionSimulation {
    struct Member {
        var node: LinkNode
        /// host time = true time + hostOffset.
        var hostOffset: Int64
        var alive = true
        var endpoint: LinkEndpoint
    }

    enum Event {
        case deliver(to: Int, message: LinkDiscoveryMessage, from: LinkEndpoint)
        case measurementDone(member: Int, session: SessionID, target: Int?)
        case wake(member: Int)
    }

    var members: [Member] = []
    var now: Int64 = 0
    var delay: Int64 = 100
    var measurementDuration: Int64 = 5_000
    /// When each datagram was sent, for propagation checks: (true time, sender index, message).
    var sent: [(time: Int64, from: Int, message: LinkDiscoveryMessage)] = []
    private var queue: [(time: Int64, order: Int, event: Event)] = []
    private var order = 0

    /// Adds and enables a peer at the current time.
    @discardableResult
    mutating func enable(tempo: Tempo = Tempo(bpm: 120), hostOffset: Int64, seed: UInt64) -> Int {
        let index = members.count
        let endpoint = LinkEndpoint(ipv4: 198, 18, 0, UInt8(index + 1), port: 20_000 + UInt16(index))
        let node = LinkNode(tempo: tempo, now: now + hostOffset, seed: seed)
        members.append(Member(node: node, hostOffset: hostOffset, endpoint: endpoint))
        let actions = members[index].node.addGateway(0, measurementEndpoint: endpoint, now: hostTime(index))
        perform(actions, member: index)
        return index
    }

    func hostTime(_ index: Int) -> Int64 { now + members[index].hostOffset }

    /// The ghost time of member `index` at the current true time.
    func ghostTime(_ index: Int) -> Int64 { members[index].node.clock.ghostTime(atHostTime: hostTime(index)) }

    mutating func kill(_ index: Int) { members[index].alive = false }

    mutating func disable(_ index: Int) {
        let actions = members[index].node.disable(now: hostTime(index))
        perform(actions, member: index)
        members[index].alive = false
    }

    mutating func change(_ index: Int, _ body: (inout LinkNode, Int64) -> [LinkNode.Action]) {
        let actions = body(&members[index].node, hostTime(index))
        perform(actions, member: index)
    }

    private mutating func schedule(_ time: Int64, _ event: Event) {
        order += 1
        queue.append((time, order, event))
    }

    private mutating func perform(_ actions: [LinkNode.Action], member index: Int) {
        for action in actions {
            switch action {
            case .send(let message, _, let destination):
                // Through the codec, as on the wire.
                let decoded = try! LinkDiscoveryMessage.decode(try! message.encode())
                sent.append((now, index, decoded))
                switch destination {
                case .group:
                    for target in members.indices where target != index {
                        schedule(now + delay, .deliver(to: target, message: decoded, from: members[index].endpoint))
                    }
                case .unicast(let endpoint):
                    if let target = members.firstIndex(where: { $0.endpoint == endpoint }) {
                        schedule(now + delay, .deliver(to: target, message: decoded, from: members[index].endpoint))
                    }
                }
            case .measure(let session, let endpoint, _):
                let target = members.firstIndex { $0.endpoint == endpoint && $0.alive }
                schedule(now + measurementDuration, .measurementDone(member: index, session: session, target: target))
            case .stateChanged:
                break
            }
        }
        if let deadline = members[index].node.nextDeadline {
            schedule(deadline - members[index].hostOffset, .wake(member: index))
        }
    }

    /// Runs every event up to true time `end`.
    mutating func run(until end: Int64) {
        while true {
            guard let next = queue.indices.min(by: { (queue[$0].time, queue[$0].order) < (queue[$1].time, queue[$1].order) }),
                queue[next].time <= end
            else { break }
            let (time, _, event) = queue.remove(at: next)
            now = max(now, time)
            switch event {
            case .deliver(let target, let message, let source):
                guard members[target].alive else { continue }
                let actions = members[target].node.received(message, from: source, gateway: 0, now: hostTime(target))
                perform(actions, member: target)
            case .measurementDone(let index, let session, let target):
                guard members[index].alive else { continue }
                var result: GhostTransform?
                if let target, members[target].alive, members[target].node.sessionID == session {
                    // ghost_target(t) = host_index(t) + intercept: exact.
                    let intercept = members[target].node.clock.ghostTime(atHostTime: hostTime(target)) - hostTime(index)
                    result = GhostTransform(intercept: intercept)
                }
                let actions = members[index].node.measurementFinished(session: session, result: result, now: hostTime(index))
                perform(actions, member: index)
            case .wake(let index):
                guard members[index].alive, let deadline = members[index].node.nextDeadline,
                    deadline <= hostTime(index)
                else { continue }
                let actions = members[index].node.tick(now: hostTime(index))
                perform(actions, member: index)
            }
        }
        now = max(now, end)
    }
}
