import TuttiCore
import TuttiWire

extension ConnectionLifecycle {
    /// What the edge must do, in order; each action that has an outcome names the input to feed back. A value;
    /// thread-safe: yes (any thread).
    package enum Action: Hashable, Sendable {
        /// Answer a control request (exactly once per `RequestID`).
        case reply(RequestID, ControlResponse)
        /// Send the offer to the endpoints in turn, within `within` overall when given → `.answered`,
        /// `.refused` or `.unreachable`.
        case sendOffer(ConnectionID, StreamOffer, to: [ControlEndpoint], within: Duration?)
        /// Open a sending connection → `.started` or `.startFailed` (role `.sending`).
        case startSending(SendPlan)
        /// Open a receiving connection → `.started` (with its media port) or `.startFailed` (role `.receiving`).
        case startReceiving(ReceivePlan)
        /// Free the connection's engine objects and log `reason` (a receiver's final figures with it) → `.stopped`.
        case stop(ConnectionID, ConnectionRole, reason: String)
        /// Send a teardown notice to each endpoint, 1 s each, errors ignored → `.notified`.
        case notify(ConnectionID, ConnectionRole, reason: String, to: [ControlEndpoint])
        /// Ask the peer at these endpoints (in turn) to `describe` itself, within `within` → `.probed(to:)`.
        case probe(to: [ControlEndpoint], within: Duration)
        /// Say hello to a peer, fire and forget.
        case introduce([ControlEndpoint])
        /// Tell the receiver's peer of a connection the chains that reach its source now, 1 s, errors ignored
        /// (a receiver that missed it is told again with the next change).
        case announce(UpstreamNotice, to: [ControlEndpoint])
        /// Give the receiving peer at the endpoint the live stream's next SRTP key, then switch to it; on
        /// failure keep the current key (the next occasion tries again). No outcome is fed back. The edge
        /// ignores it for a stream without SRTP.
        case rekey(ConnectionID, to: ControlEndpoint, RekeyReason)
        /// Something the log tells the user.
        case report(LifecycleEvent)
    }

    /// Why a live stream gets a new SRTP key (said in the log). A value; thread-safe: yes (any thread).
    package enum RekeyReason: String, Hashable, Sendable {
        case schedule = "on schedule"
        case sessionKeyChanged = "the session key changed"
        case resumed = "the receiver answers again after a long loss"
    }

    /// Everything the edge needs to start a sending connection. A value; thread-safe: yes (any thread).
    package struct SendPlan: Hashable, Sendable {
        /// The connection as `connected` reports it (with `rtpDestination` when the media host is a plain
        /// numeric address).
        package var summary: ConnectionSummary
        /// The sender port's name.
        package var port: String
        /// Where the packets go: a numeric address (with a `%zone` for link-local IPv6) when the reached
        /// endpoint or the control connection gave one; else the reached endpoint's host as given.
        package var mediaHost: String
        package var mediaPort: UInt16
        package var ssrc: UInt32
        package var payloadType: UInt8
        /// Where teardown notices go; nil for a standard RTP receiver.
        package var peerEndpoint: ControlEndpoint?

        package init(
            summary: ConnectionSummary, port: String, mediaHost: String, mediaPort: UInt16, ssrc: UInt32, payloadType: UInt8,
            peerEndpoint: ControlEndpoint?
        ) {
            self.summary = summary
            self.port = port
            self.mediaHost = mediaHost
            self.mediaPort = mediaPort
            self.ssrc = ssrc
            self.payloadType = payloadType
            self.peerEndpoint = peerEndpoint
        }
    }

    /// Everything the edge needs to start a receiving connection (besides its own configuration: period,
    /// loss timeout, concealment, drift compensation). A value; thread-safe: yes (any thread).
    package struct ReceivePlan: Hashable, Sendable {
        /// The connection, `buffering`, with the negotiated format.
        package var summary: ConnectionSummary
        /// The receiver port's name.
        package var port: String
        package var ssrc: UInt32
        package var payloadType: UInt8
        /// The sender peer's control endpoint (teardown notices), when its host is known.
        package var senderEndpoint: ControlEndpoint?
        package var captureClock: CaptureClock
        /// The rate the port's device runs at for this stream (`Negotiation.deviceRate`).
        package var deviceRate: Int
        /// The sender's device clock as a drift-group key (`StreamOffer.remoteClockKey`).
        package var remoteClock: String?

        package init(
            summary: ConnectionSummary, port: String, ssrc: UInt32, payloadType: UInt8, senderEndpoint: ControlEndpoint?,
            captureClock: CaptureClock, deviceRate: Int, remoteClock: String?
        ) {
            self.summary = summary
            self.port = port
            self.ssrc = ssrc
            self.payloadType = payloadType
            self.senderEndpoint = senderEndpoint
            self.captureClock = captureClock
            self.deviceRate = deviceRate
            self.remoteClock = remoteClock
        }
    }
}

/// Something the peer's log tells the user about its connections and the peers it knows (the edge words the
/// lines). A value; thread-safe: yes (any thread).
package enum LifecycleEvent: Hashable, Sendable {
    /// A connect or an offer was refused here.
    case refused(source: PortReference, destination: PortReference, ControlFailure)
    /// A connect of a pair that is connected: nothing changed.
    case alreadyConnected(ConnectionSummary)
    case sending(ConnectionLifecycle.SendPlan)
    case receiving(ConnectionLifecycle.ReceivePlan, mediaPort: UInt16)
    case playing(ConnectionSummary)
    case lost(ConnectionSummary)
    case resumed(ConnectionSummary)
    /// A receiver port's output failed: the connections that play into it.
    case outputFailed(port: String, reason: String, connections: [ConnectionID])
    /// A receiver port that plays out took a pipeline from a live input on its own host.
    case feedback(port: String, warning: String)
    case peerFound(KnownPeer, saidHello: Bool)
    case peerLeft(name: String)
}
