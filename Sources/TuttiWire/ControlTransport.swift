import TuttiCore

/// How a peer's control plane reaches other peers: one request, one response, trying the endpoints in turn.
/// The real one is TCP (`TCPControlTransport` in TuttiPeer); tests give an in-memory network
/// (`FakeControlNetwork` in TuttiTesting). Implementations are called from the peer's actor and from its tasks:
/// thread-safe.
public protocol ControlTransport: Sendable {
    /// Sends `request` to each endpoint in turn (`timeout` each) until one answers.
    ///
    /// - Throws: `ControlTransportFailure`: no endpoint answered (`unreachable`, with whether every host refused
    ///   the connection), or an answer was not a valid response (`malformed`: the tries end there).
    func reply(
        to request: ControlRequest, fromAnyOf endpoints: [ControlEndpoint], timeout: Duration
    ) async throws(ControlTransportFailure) -> ControlReply
}

/// A response and where it came from. A value; thread-safe: yes (any thread).
public struct ControlReply: Hashable, Sendable {
    public var response: ControlResponse
    /// The endpoint (of those tried) that answered.
    public var endpoint: ControlEndpoint
    /// The numeric address the control connection went to (no IPv6 zone), when the transport knows it.
    public var remoteAddress: String?
    /// The peer ID the answering peer proved in a members-only session's handshake; nil on a plain connection.
    public var remotePeer: PeerID?

    public init(response: ControlResponse, endpoint: ControlEndpoint, remoteAddress: String?, remotePeer: PeerID? = nil) {
        self.response = response
        self.endpoint = endpoint
        self.remoteAddress = remoteAddress
        self.remotePeer = remotePeer
    }
}

/// Why no response came. A value; thread-safe: yes (any thread).
public struct ControlTransportFailure: Error, Hashable, Sendable {
    /// The failure as the CLI and the log word it (`unreachable` or `malformed`).
    public var failure: ControlFailure
    /// Every endpoint tried refused the connection: hosts that are up with no peer listening.
    public var refusedEverywhere: Bool

    public init(failure: ControlFailure, refusedEverywhere: Bool) {
        self.failure = failure
        self.refusedEverywhere = refusedEverywhere
    }
}
