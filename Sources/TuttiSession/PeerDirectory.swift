import TuttiCore
import TuttiWire

/// The other peers this peer knows, by published name: found through Avahi, named with `--peer HOST:PORT`, or
/// heard from (`hello`). The rules the peer applied inline before:
/// - a hello under a name another known id holds is ignored (Avahi is about to rename one of them, and the
///   renamed peer says hello again);
/// - a peer that reappears under a new name (same id) replaces its old entry;
/// - a bye forgets the peer by id; Avahi's removal forgets it by name.
///
/// Pure value; thread-safe: yes (any thread).
package struct PeerDirectory: Hashable, Sendable {
    /// Known peers by name.
    package private(set) var peers: [String: KnownPeer] = [:]

    /// A directory of the peers named on the command line (no id: named by their endpoint).
    package init(explicit endpoints: [ControlEndpoint] = []) {
        for endpoint in endpoints {
            peers[endpoint.description] = KnownPeer(name: endpoint.description, id: nil, endpoints: [endpoint])
        }
    }

    /// Every known peer, by name.
    package var knownPeers: [KnownPeer] { peers.values.sorted { $0.name < $1.name } }

    /// Where `name` (case-insensitive, as DNS-SD names compare) listens for control, or nil when unknown.
    package func endpoints(forPeer name: String) -> [ControlEndpoint]? {
        let lowered = name.lowercased()
        return peers.values.filter { $0.name.lowercased() == lowered }.min { $0.name < $1.name }?.endpoints
    }

    /// The name a known peer has now.
    package func name(of id: PeerID) -> String? {
        peers.values.filter { $0.id == id }.map(\.name).min()
    }

    /// A peer said hello from `endpoint`. Returns whether it is new here.
    package mutating func introduced(_ presence: PeerPresence, from endpoint: ControlEndpoint) -> Bool {
        if let holder = peers[presence.name], holder.id != nil, holder.id != presence.id { return false }
        forget(id: presence.id, except: presence.name)
        guard peers[presence.name] == nil else { return false }
        peers[presence.name] = KnownPeer(name: presence.name, id: presence.id, endpoints: [endpoint])
        return true
    }

    /// Avahi found (or updated) a peer. Returns whether it is new here.
    package mutating func found(_ peer: KnownPeer) -> Bool {
        let isNew = peers[peer.name] == nil
        if let id = peer.id { forget(id: id, except: peer.name) }
        peers[peer.name] = peer
        return isNew
    }

    /// Avahi withdrew the peer's name. Returns whether it was known.
    package mutating func removed(name: String) -> Bool {
        peers.removeValue(forKey: name) != nil
    }

    /// The peer said bye: forgotten by id. Returns the name it had.
    package mutating func left(id: PeerID) -> String? {
        guard let name = name(of: id) else { return nil }
        peers.removeValue(forKey: name)
        return name
    }

    private mutating func forget(id: PeerID, except name: String) {
        for stale in peers.values where stale.id == id && stale.name != name { peers.removeValue(forKey: stale.name) }
    }
}
