import TuttiCore

/// Asks a peer to mute or unmute, with short fades: one of its ports (`destination` nil: everything the port
/// sends, or plays), or one connection from that port (`destination`: its receiver port, or `rtp://HOST` with
/// the UDP port), leaving the port's other connections as they are. → `.muted` (the state now) or `.failure`.
/// Sent by the CLI to the peer that owns `port`. A value; thread-safe: yes.
public struct MuteRequest: Hashable, Sendable, Codable {
    public var port: String
    public var destination: PortReference?
    public var muted: Bool

    public init(port: String, destination: PortReference? = nil, muted: Bool) {
        self.port = port
        self.destination = destination
        self.muted = muted
    }
}

/// What `mute` answers: the port (and connections) it applied to, and whether they are muted now. A value;
/// thread-safe: yes.
public struct MuteState: Hashable, Sendable, Codable {
    public var port: PortReference
    /// The connections it applied to, by id; empty for a port's mute.
    public var connections: [ConnectionID]
    public var muted: Bool

    public init(port: PortReference, connections: [ConnectionID], muted: Bool) {
        self.port = port
        self.connections = connections
        self.muted = muted
    }
}
