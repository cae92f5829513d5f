/// How much of a peer's control channel one client, or all of them, may take (issue 14's limits): the most
/// open connections in all and from one address, how many requests an address may send a second, how long a
/// connection may take to bring a whole request, and the largest request. The defaults leave a session's own
/// traffic (a few requests a second from each host) far below every limit.
///
/// A value; thread-safe: yes.
public struct ControlLimits: Hashable, Sendable {
    /// Open control connections, from every address together.
    public var connections = 256
    /// Open control connections from one address.
    public var connectionsPerSource = 32
    /// New connections and requests one address may make a second, on average…
    public var requestsPerSecond: Double = 100
    /// …and at once, after a quiet while.
    public var burst: Double = 400
    /// A connection must bring a whole request within this time of opening or of its last answer, or it is
    /// closed: an idle socket, or a frame sent a byte at a time, holds nothing for long.
    public var requestTimeout: Duration = .seconds(10)
    /// The largest request frame, in bytes (answers may be larger: `ControlProtocol.maxFrameBytes`).
    public var requestBytes = 64 * 1024
    /// Addresses whose rate is tracked at once.
    public var trackedSources = 1024

    public init() {}
}
