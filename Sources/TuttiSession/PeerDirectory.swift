import TuttiCore
import TuttiWire

/// The other peers this peer knows, by published name: found through Avahi, named with `--peer HOST:PORT`, or
/// heard from (`hello`). The rules the peer applied inline before:
/// - a hello under a name another known id holds is ignored (Avahi is about to rename one of them, and the
///   renamed peer says hello again);
/// - a peer that reappears under a new name (same id) replaces its old entry;
/// - a bye forgets the peer by id; Avahi's removal forgets it by name;
/// - it holds at most `capacity` peers, each with at most `maximumEndpoints` endpoints: a stranger flooding the
///   LAN with hellos or DNS-SD records under made-up names cannot grow it without bound (issue 14); a new name
///   beyond the capacity is turned away and counted in `refused`, and room comes back as peers leave.
///
/// Pure value; thread-safe: yes (any thread).
package struct PeerDirectory: Hashable, Sendable {
    /// Known peers by name.
    package private(set) var peers: [String: KnownPeer] = [:]
    /// New peers turned away because the directory was full.
    package private(set) var refused: UInt64 = 0

    /// The most peers a directory holds: far more than a session's hosts, few enough that `tutti ls` stays one
    /// reply.
    package static let capacity = 256
    /// The most control endpoints kept for one peer (its addresses, in the order given).
    package static let maximumEndpoints = 8

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
        guard hasRoom() else { return false }
        peers[presence.name] = KnownPeer(name: presence.name, id: presence.id, endpoints: [endpoint])
        return true
    }

    /// Avahi found (or updated) a peer. Returns whether it is new here.
    package mutating func found(_ peer: KnownPeer) -> Bool {
        let isNew = peers[peer.name] == nil
        if let id = peer.id { forget(id: id, except: peer.name) }
        if isNew, !hasRoom() { return false }
        var kept = peer
        kept.endpoints = Array(peer.endpoints.prefix(Self.maximumEndpoints))
        peers[peer.name] = kept
        return isNew
    }

    /// Whether a new peer fits; counts the one turned away when not.
    private mutating func hasRoom() -> Bool {
        guard peers.count >= Self.capacity else { return true }
        refused &+= 1
        return false
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
