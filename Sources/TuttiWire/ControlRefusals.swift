/// What a peer's control channel and directory turned away since the peer started, by reason (issue 14), as
/// `describe` reports it; `tutti ls` shows the figures that are not zero.
///
/// A value; thread-safe: yes.
public struct ControlRefusals: Hashable, Sendable, Codable {
    /// Connections closed at once: too many open, in all or from one address, or too many addresses.
    public var connectionsRefused: UInt64 = 0
    /// Connections and requests over an address's rate.
    public var rateLimited: UInt64 = 0
    /// Connections closed because no whole request came in time (idle, or sent too slowly).
    public var timedOut: UInt64 = 0
    /// Requests that could not be read (bad framing, too large, invalid): each closes its connection.
    public var malformed: UInt64 = 0
    /// New peers (hellos, DNS-SD records) turned away because the peer's directory was full.
    public var peersTurnedAway: UInt64 = 0
    /// Beat-clock (Link) peer states turned away because its peer or session table was full, and Link
    /// discovery datagrams that could not be read. Nil from older peers.
    public var linkStatesTurnedAway: UInt64? = nil
    public var linkMalformed: UInt64? = nil
    /// Connections of a members-only session from a client that is not a member: a handshake with another
    /// session key (or broken off), or a plain request. Nil from older peers.
    public var notMembers: UInt64? = nil
    /// Requests a member may not make: a hello or offer in another peer's name, a teardown of a connection
    /// the caller is not an end of, or a transport message that failed to open (forged or replayed).
    public var forbidden: UInt64? = nil

    public init() {}

    /// Whether anything was turned away.
    public var isEmpty: Bool { summary.isEmpty }

    /// The non-zero figures in one line, e.g. `12 connections refused, 1 timed out`; empty when none.
    public var summary: String {
        [
            (connectionsRefused, "connection refused", "connections refused"), (rateLimited, "over the rate", "over the rate"),
            (timedOut, "timed out", "timed out"), (malformed, "malformed", "malformed"),
            (peersTurnedAway, "peer turned away", "peers turned away"),
            (linkStatesTurnedAway ?? 0, "beat-clock peer turned away", "beat-clock peers turned away"),
            (linkMalformed ?? 0, "malformed beat-clock message", "malformed beat-clock messages"),
            (notMembers ?? 0, "not a member", "not members"), (forbidden ?? 0, "forbidden request", "forbidden requests"),
        ].filter { $0.0 > 0 }.map { "\($0.0) \($0.0 == 1 ? $0.1 : $0.2)" }.joined(separator: ", ")
    }
}
