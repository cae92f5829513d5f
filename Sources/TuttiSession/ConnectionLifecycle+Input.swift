import TuttiCore
import TuttiWire

extension ConnectionLifecycle {
    /// Everything that advances the lifecycle: control requests (each answered exactly once, under its
    /// `RequestID`, by a `.reply` action now or when the connections it waits for are gone), presence news,
    /// and the outcomes of actions the edge performed. Randomness (connection IDs, SSRCs) comes in with the
    /// inputs. A value; thread-safe: yes (any thread).
    package enum Input: Hashable, Sendable {
        // MARK: Control requests
        /// `connect` from a client: `id` and `ssrc` (used only to a standard RTP receiver) are freshly drawn;
        /// `ports` is what the peer's ports can do now, by name; `requester` decides whether the request's own
        /// endpoints may be dialled (when the receiving peer is not known here).
        case connect(
            ConnectRequest, id: ConnectionID, ssrc: UInt32, ports: [String: PortNow], request: RequestID,
            requester: ConnectRequester = .member)
        /// `offer` from a sender peer that reached the control channel from `fromHost`; `ssrc` is freshly drawn.
        case offer(StreamOffer, fromHost: String?, ssrc: UInt32, ports: [String: PortNow], request: RequestID)
        case disconnect(DisconnectRequest, request: RequestID)
        case teardown(TeardownNotice, request: RequestID)
        /// The peer stops: everything is torn down, and the reply comes when nothing is left.
        case shutdown(request: RequestID)
        /// The chains reaching a receiving connection's source changed (the edge answers `.done` itself).
        case upstream(UpstreamNotice)

        // MARK: Presence (the edge answers hello and bye with `.done` itself)
        case hello(PeerPresence, from: ControlEndpoint)
        case bye(PeerPresence)
        /// Avahi found (or updated) a peer.
        case discovered(KnownPeer)
        /// Avahi withdrew a peer's name (never closes a connection: an avahi-daemon restart loses nothing).
        case vanished(name: String)
        /// This peer is published under another name (after a collision).
        case renamed(to: String)
        /// The session key this peer speaks with changed (`tutti key change`): every live stream it sends to a
        /// peer gets a new SRTP key.
        case sessionKeyChanged

        // MARK: Outcomes of actions
        /// The receiver answered `sendOffer` from `reached`; `remoteAddress` is the numeric address the control
        /// connection went to, when the edge knows it; `receiver` the peer ID the receiver proved in a members-only
        /// session's handshake.
        case answered(ConnectionID, StreamAnswer, reached: ControlEndpoint, remoteAddress: String?, receiver: PeerID? = nil)
        /// The receiver refused the offer; or answered something unusable (`unusableAnswerFrom` set: it is told
        /// to drop the connection).
        case refused(ConnectionID, ControlFailure, unusableAnswerFrom: ControlEndpoint?)
        /// No endpoint answered the offer.
        case unreachable(ConnectionID, ControlFailure)
        /// The engine objects of `startSending`/`startReceiving` exist (a receiver's media port with them).
        case started(ConnectionID, ConnectionRole, mediaPort: UInt16?)
        case startFailed(ConnectionID, ConnectionRole, message: String)
        /// What a receiving connection's stream does now (the edge's poll, on change).
        case observed(ConnectionID, MediaObservation)
        /// The result of `probe(to:)` with the same endpoints.
        case probed(to: [ControlEndpoint], ProbeResult)
        /// `stop` finished: the engine objects are gone.
        case stopped(ConnectionID, ConnectionRole)
        /// `notify` finished: the teardown notice was delivered, or given up.
        case notified(ConnectionID, ConnectionRole)
    }

    /// A receiving stream's state as the edge polls it. A value; thread-safe: yes (any thread).
    package enum MediaObservation: Hashable, Sendable {
        /// Waiting to fill the buffer (no packets yet, or refilling).
        case buffering
        case playing
        /// No packets for the jitter buffer's loss timeout: playing silence.
        case lost
        /// The port's output cannot be written; fed once per failure of the port.
        case outputFailed(reason: String)
    }

    /// What a `describe` probe of another peer found. A value; thread-safe: yes (any thread).
    package enum ProbeResult: Hashable, Sendable {
        /// It answered, listing its connections.
        case listed([ConnectionSummary])
        /// Its host refused the control connection: no peer runs there.
        case refused
        /// No answer in time, or an unusable one.
        case unanswered
    }
}
