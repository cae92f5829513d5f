import TuttiCore
import TuttiWire

/// Presence rows: hello, bye, Avahi's findings and renames keep the directory; a bye ends the leaving peer's
/// connections, a hello from a live connection's receiver, or from the sender of a stream received here,
/// probes it at once (it may have restarted).
extension ConnectionLifecycle {
    mutating func hello(_ presence: PeerPresence, from endpoint: ControlEndpoint, now: HostTime) -> [Action] {
        guard presence.id != identity.peerID else { return [] }
        var actions: [Action] = []
        if directory.introduced(presence, from: endpoint) {
            actions.append(.report(.peerFound(KnownPeer(name: presence.name, id: presence.id, endpoints: [endpoint]), saidHello: true)))
        }
        let live = sending.values.filter { entry in
            guard case .live = entry.phase, entry.reached != nil else { return false }
            return Self.samePeer(entry.destination.peer, presence.name)
        }.map(\.id)
        // And every stream it sends here that has played: a sender that restarted says hello, and no longer has
        // them. (Not one still awaiting its first packet: the sender may not list it until it has started.)
        let received = receiving.values.filter { entry in
            switch entry.phase {
            case .playing, .lost: entry.senderPeerID == presence.id
            case .starting, .awaitingMedia, .closing: false
            }
        }.map(\.id)
        // Probing is off with `.compatible` timeouts (`probe` returns nothing then).
        return actions + probe(live, now: now) + probeSenders(of: received, now: now)
    }

    mutating func bye(_ presence: PeerPresence) -> [Action] {
        guard presence.id != identity.peerID else { return [] }
        let known = directory.left(id: presence.id)
        var actions: [Action] = known.map { [Action.report(.peerLeft(name: $0))] } ?? []
        let names = Set([presence.name, known].compactMap { $0?.lowercased() })
        for id in sending.keys.sorted(by: { $0.rawValue < $1.rawValue }) {
            guard let entry = sending[id], entry.offer != nil, names.contains(entry.destination.peer.lowercased()) else { continue }
            actions += endSending(id, Ending(reason: "closed: \(entry.destination.peer) left", notice: nil))
        }
        for id in receiving.keys.sorted(by: { $0.rawValue < $1.rawValue }) {
            guard let entry = receiving[id], entry.senderPeerID == presence.id else { continue }
            actions += endReceiving(id, Ending(reason: "closed: \(entry.plan.summary.source.peer) left", notice: nil))
        }
        return actions
    }

    mutating func discovered(_ peer: KnownPeer) -> [Action] {
        guard peer.id != identity.peerID else { return [] }
        guard directory.found(peer) else { return [] }
        return [.report(.peerFound(peer, saidHello: false)), .introduce(peer.endpoints)]
    }

    mutating func vanished(_ name: String) -> [Action] {
        directory.removed(name: name) ? [.report(.peerLeft(name: name))] : []
    }

    mutating func renamed(to name: String) -> [Action] {
        guard name != identity.name else { return [] }
        identity.name = name
        return directory.knownPeers.filter { $0.id != nil }.map { .introduce($0.endpoints) }
    }
}
