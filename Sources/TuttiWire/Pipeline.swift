import TuttiCore

/// One chain audio takes through the bus: an origin sender port, the filter ports it passes in order, and
/// the port it reaches (`ports`, origin first). Offers carry the chains that reach their source port, and
/// each filter port passes them on extended by itself, so every port knows every chain that feeds it,
/// however many hosts away its origin is.
///
/// A value; thread-safe: yes (any thread).
public struct Pipeline: Hashable, Sendable, Codable, CustomStringConvertible {
    /// Origin sender first, then every filter, then the port the chain reaches.
    public var ports: [PortReference]
    /// Whether the origin sender's audio comes from a live input (its port is `live`); nil: not live.
    public var live: Bool?
    /// The host name of the origin sender's peer (`PeerDescription.host`), for the feedback warning.
    public var originHost: String?

    /// A chain of one port: a sender's own audio.
    public init(origin: PortReference, live: Bool, originHost: String?) {
        ports = [origin]
        self.live = live ? true : nil
        self.originHost = originHost
    }

    public init(ports: [PortReference], live: Bool?, originHost: String?) {
        self.ports = ports
        self.live = live
        self.originHost = originHost
    }

    /// The origin sender port.
    public var origin: PortReference { ports[0] }

    /// The port the chain reaches.
    public var end: PortReference { ports[ports.count - 1] }

    /// The chain continued to `port`.
    public func extended(to port: PortReference) -> Pipeline {
        Pipeline(ports: ports + [port], live: live, originHost: originHost)
    }

    /// Whether `port` is one of the chain's ports (peer names compare case-insensitively, as DNS-SD names do).
    public func passes(_ port: PortReference) -> Bool {
        ports.contains { $0.port == port.port && $0.peer.lowercased() == port.peer.lowercased() }
    }

    /// The chain's stable ID: 12 hex digits of a 64-bit FNV-1a hash of its ports' names in order (peer names
    /// lower-cased). It depends on nothing but the names, so it is the same on every host, across a
    /// disconnect and reconnect and across a restart of any peer on the way, and it changes only when the
    /// chain does (a port renamed, a filter added or taken out).
    public var id: String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for (index, port) in ports.enumerated() {
            let text = (index == 0 ? "" : ">") + port.peer.lowercased() + ":" + port.port
            for byte in text.utf8 {
                hash ^= UInt64(byte)
                hash &*= 0x100_0000_01b3
            }
        }
        let hex = String(hash >> 16, radix: 16)
        return String(repeating: "0", count: 12 - hex.count) + hex
    }

    /// `h1:out → h2:fx → h3:in`.
    public var description: String { ports.map(\.description).joined(separator: " → ") }

    /// The most chains an offer or a notice carries, and the most ports in one chain: bounds what a peer
    /// accepts from the network (a longer chain is refused as malformed).
    public static let maxCount = 64
    public static let maxLength = 16
}

/// A filter port's sources changed: the chains that reach the sending connection's source port now. Sent by
/// the sender's peer to the receiver's peer of each of the filter port's live connections. → `.done`.
///
/// A value; thread-safe: yes (any thread).
public struct UpstreamNotice: Hashable, Sendable, Codable {
    public var connectionID: ConnectionID
    public var upstream: [Pipeline]

    public init(connectionID: ConnectionID, upstream: [Pipeline]) {
        self.connectionID = connectionID
        self.upstream = upstream
    }
}

/// Where one port's audio comes from and goes to, as `describe` lists it (`tutti ls`).
///
/// A value; thread-safe: yes (any thread).
public struct PortRoutes: Hashable, Sendable, Codable {
    public var port: String
    /// The ports that stream into this one now (its live receiving connections' sources).
    public var sources: [PortReference]
    /// The ports this one streams to now (its live sending connections' destinations).
    public var destinations: [PortReference]
    /// Every chain that ends at this port (a sender's: itself alone), with its ID; the recursive sources are
    /// their ports before this one.
    public var pipelines: [Pipeline]
    /// Every port upstream of this one, through filters, nearest first, each once (from `pipelines`).
    public var upstream: [PortReference]
    /// Every port downstream of this one, through filters, on any peer: filled by a client that described every
    /// peer (`tutti ls`, `PeerDescription.withDownstream`); nil from a peer, which knows only its own
    /// `destinations`.
    public var downstream: [PortReference]?
    /// Feedback warnings: chains from a live input on this host that this port plays out.
    public var warnings: [String]?
    /// Whether the port is muted (`tutti mute PEER:PORT`); nil when not.
    public var muted: Bool?

    public init(
        port: String, sources: [PortReference], destinations: [PortReference], pipelines: [Pipeline], warnings: [String]? = nil
    ) {
        self.port = port
        self.sources = sources
        self.destinations = destinations
        self.pipelines = pipelines
        self.warnings = warnings
        upstream = Self.upstream(of: pipelines)
    }

    /// Every port before the last in `pipelines`, nearest first, each once.
    static func upstream(of pipelines: [Pipeline]) -> [PortReference] {
        var seen: [PortReference] = []
        let longest = pipelines.map { $0.ports.count }.max() ?? 0
        for distance in stride(from: 2, through: longest, by: 1) {
            for pipeline in pipelines where pipeline.ports.count >= distance {
                let port = pipeline.ports[pipeline.ports.count - distance]
                if !seen.contains(port) { seen.append(port) }
            }
        }
        return seen
    }
}

extension PeerDescription {
    /// `peers` with every port's `downstream` filled in: the ports, on any of these peers, that some pipeline
    /// reaches after passing that port (nearest first, each once). Pure; thread-safe: yes.
    public static func withDownstream(_ peers: [PeerDescription]) -> [PeerDescription] {
        let chains = peers.flatMap { peer in (peer.routes ?? []).flatMap(\.pipelines) }
        func key(_ port: PortReference) -> String { port.peer.lowercased() + ":" + port.port }
        return peers.map { peer in
            var peer = peer
            peer.routes = peer.routes?.map { route in
                var route = route
                let here = key(PortReference(peer: peer.name, port: route.port))
                var found: [(distance: Int, port: PortReference)] = []
                for chain in chains {
                    guard let index = chain.ports.firstIndex(where: { key($0) == here }) else { continue }
                    for (offset, port) in chain.ports[(index + 1)...].enumerated() { found.append((offset + 1, port)) }
                }
                var seen: [PortReference] = []
                for (_, port) in found.sorted(by: { ($0.distance, key($0.port)) < ($1.distance, key($1.port)) })
                where !seen.contains(where: { key($0) == key(port) }) {
                    seen.append(port)
                }
                route.downstream = seen
                return route
            }
            return peer
        }
    }
}
