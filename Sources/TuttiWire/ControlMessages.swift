import TuttiCore

/// Asks the sender's peer to connect one of its sender ports to a receiver port on another (or the same) peer.
/// Sent by the CLI (or any application) to the peer that owns `source`.
///
/// To a standard RTP receiver instead (`rtpDestination` set): no offer and no answer; the sender's peer
/// chooses the format itself from its port and `options`, and streams to that address. `destination` is
/// then `rtpDestination.portReference` and `destinationEndpoints` is empty.
public struct ConnectRequest: Hashable, Sendable, Codable {
    public var source: PortReference
    public var destination: PortReference
    /// Where the destination peer's control channel can be reached, in order of preference.
    public var destinationEndpoints: [ControlEndpoint]
    public var options: ConnectOptions
    /// A standard RTP receiver to stream to (`rtp://HOST:PORT`), instead of a Tutti peer.
    public var rtpDestination: RTPDestination?
    /// With `rtpDestination`: stream SRTP (`AES_CM_128_HMAC_SHA1_80`) with this key, which the client drew and
    /// writes into the receiver's SDP (`a=crypto`). Only a members-only session's client sends one, as the
    /// request then travels encrypted.
    public var rtpKey: MediaKeying?

    public init(
        source: PortReference, destination: PortReference, destinationEndpoints: [ControlEndpoint],
        options: ConnectOptions
    ) {
        self.source = source
        self.destination = destination
        self.destinationEndpoints = destinationEndpoints
        self.options = options
    }

    /// A request to stream `source` to a standard RTP receiver at `rtpDestination`.
    public init(source: PortReference, rtpDestination: RTPDestination, options: ConnectOptions) {
        self.init(source: source, destination: rtpDestination.portReference, destinationEndpoints: [], options: options)
        self.rtpDestination = rtpDestination
    }
}

/// The sender's peer proposes a stream to the receiver's peer: what the source can produce and what the
/// user asked for. The receiver chooses the format (or refuses) and answers with `StreamAnswer`.
public struct StreamOffer: Hashable, Sendable, Codable {
    public var connectionID: ConnectionID
    public var senderPeerID: PeerID
    public var source: PortReference
    public var destination: PortReference
    /// Channels the source produces.
    public var channels: Int
    /// Rates the source can run at now (only its current rate while it already streams).
    public var sampleRates: [Int]
    public var sampleFormats: [SampleFormat]
    public var options: ConnectOptions
    public var captureClock: CaptureClock
    /// The sender peer's control port; with the address the offer came from, where to send a teardown.
    public var senderControlPort: UInt16
    /// The sender's device clock that paces the stream: "system" (its paced ports: the host's clock) or "jack"
    /// (its JACK server's, a sound card's). Streams of one sender peer and one device clock drift alike, so a
    /// receiver estimates their drift once (`DriftGroup`). Nil from older peers; other values are ignored.
    public var senderClock: String?
    /// The chains that reach the source port (a sender port's: itself alone; a filter port's: every chain into
    /// it, extended by it). The receiver refuses an offer that would close a loop and keeps them for
    /// `describe`. Nil from older peers (read as the source alone).
    public var upstream: [Pipeline]?
    /// The stream's SRTP master key, drawn by the sender for this stream (members-only sessions, where the
    /// offer travels encrypted): the receiver verifies and decrypts every packet with it. Nil: plain RTP (an
    /// open session).
    public var mediaKey: MediaKeying?

    /// The remote device clock this stream comes from, as a key (`<sender peer ID>/system` or `/jack`), or
    /// nil when the sender did not say (or said something unknown).
    public var remoteClockKey: String? {
        guard let senderClock, senderClock == "system" || senderClock == "jack" else { return nil }
        return "\(senderPeerID.rawValue)/\(senderClock)"
    }

    public init(
        connectionID: ConnectionID, senderPeerID: PeerID, source: PortReference, destination: PortReference,
        channels: Int, sampleRates: [Int], sampleFormats: [SampleFormat], options: ConnectOptions,
        captureClock: CaptureClock, senderControlPort: UInt16, senderClock: String? = nil
    ) {
        self.senderClock = senderClock
        self.senderControlPort = senderControlPort
        self.connectionID = connectionID
        self.senderPeerID = senderPeerID
        self.source = source
        self.destination = destination
        self.channels = channels
        self.sampleRates = sampleRates
        self.sampleFormats = sampleFormats
        self.options = options
        self.captureClock = captureClock
    }
}

/// The receiver's choice: the stream format and the UDP port it listens on for this connection.
public struct StreamAnswer: Hashable, Sendable, Codable {
    public var connectionID: ConnectionID
    public var format: StreamFormat
    /// UDP port on the receiver's host (the host the sender reached the control channel on).
    public var mediaPort: UInt16
    /// The SSRC the receiver expects; packets with another SSRC are rejected.
    public var ssrc: UInt32
    public var payloadType: UInt8
    /// Something the user should know about the new connection (a feedback loop), in one line; nil when none.
    public var warning: String?

    public init(connectionID: ConnectionID, format: StreamFormat, mediaPort: UInt16, ssrc: UInt32, payloadType: UInt8) {
        self.connectionID = connectionID
        self.format = format
        self.mediaPort = mediaPort
        self.ssrc = ssrc
        self.payloadType = payloadType
    }
}

/// Undo connections matching every given field (at least one must be given).
public struct DisconnectRequest: Hashable, Sendable, Codable {
    public var source: PortReference?
    public var destination: PortReference?
    public var connectionID: ConnectionID?

    public init(source: PortReference? = nil, destination: PortReference? = nil, connectionID: ConnectionID? = nil) {
        self.source = source
        self.destination = destination
        self.connectionID = connectionID
    }
}

/// One end tells the other that a connection is gone (its peer stops, or a disconnect, or a failed setup).
public struct TeardownNotice: Hashable, Sendable, Codable {
    public var connectionID: ConnectionID
    public var reason: String

    public init(connectionID: ConnectionID, reason: String) {
        self.connectionID = connectionID
        self.reason = reason
    }
}

/// A peer tells the peers it knows that it is here (`hello`, as soon as it finds them, and again when it
/// is renamed) or that it leaves (`bye`, when it stops cleanly). Avahi needs about a second to probe a new
/// name and keeps a withdrawn one for a second (RFC 6762 §10.1); these messages let running peers see a
/// peer arrive or leave at once, as Link peers do with their alive and bye-bye messages. The endpoint is the
/// address the message came from with `controlPort`.
public struct PeerPresence: Hashable, Sendable, Codable {
    public var id: PeerID
    public var name: String
    public var controlPort: UInt16

    public init(id: PeerID, name: String, controlPort: UInt16) {
        self.id = id
        self.name = name
        self.controlPort = controlPort
    }
}

/// Why a request failed; `message` is one line meant for the user.
public struct ControlFailure: Error, Hashable, Sendable, Codable, CustomStringConvertible {
    public enum Code: String, Hashable, Sendable, Codable {
        case malformed
        case unsupportedVersion = "unsupported-version"
        case unknownPeer = "unknown-peer"
        case unknownPort = "unknown-port"
        case wrongDirection = "wrong-direction"
        case noCommonFormat = "no-common-format"
        /// The connection would close a loop (its destination already feeds its source).
        case cycle
        /// A connection from a peer to itself, to a port that does not allow it (`allows-self`).
        case selfConnection = "self-connection"
        case invalidOption = "invalid-option"
        case busy
        /// The peer's configuration does not allow it (an `rtp://` destination outside `--allow-rtp`).
        case forbidden
        /// The peer's session is members-only and the client is not a member: it holds no session key, or
        /// another one (the handshake failed).
        case notMember = "not-member"
        case unreachable
        case notFound = "not-found"
        case internalError = "internal"
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}

/// Everything a client may ask of a peer.
public enum ControlRequest: Hashable, Sendable {
    /// → `.description`
    case describe
    /// → `.connected`, `.alreadyConnected` (the same pair is connected; nothing changed) or `.failure`
    case connect(ConnectRequest)
    /// peer → peer: → `.answer` or `.failure`
    case offer(StreamOffer)
    /// → `.disconnected(count)`
    case disconnect(DisconnectRequest)
    /// peer → peer: → `.done`
    case teardown(TeardownNotice)
    /// → `.statistics`
    case statistics
    /// peer → peer: → `.done`
    case hello(PeerPresence)
    /// peer → peer: → `.done`
    case bye(PeerPresence)
    /// → `.filter` (the filter port's processor after the change) or `.failure`
    case setParameters(SetParametersRequest)
    /// peer → peer: the chains reaching a connection's source changed → `.done`
    case upstream(UpstreamNotice)
    /// → `.muted` (the state now) or `.failure`
    case mute(MuteRequest)
    /// peer → peer: a live stream's next SRTP key → `.done` (staged) or `.failure`
    case rekey(RekeyNotice)

    /// The wire name in the envelope's `type` field.
    public var typeName: String {
        switch self {
        case .describe: "describe"
        case .connect: "connect"
        case .offer: "offer"
        case .disconnect: "disconnect"
        case .teardown: "teardown"
        case .statistics: "statistics"
        case .hello: "hello"
        case .bye: "bye"
        case .setParameters: "set"
        case .upstream: "upstream"
        case .mute: "mute"
        case .rekey: "rekey"
        }
    }
}

/// Everything a peer may answer.
public enum ControlResponse: Hashable, Sendable {
    case description(PeerDescription)
    case connected(ConnectionSummary)
    /// `connect` of a pair that is already connected: the existing connection; nothing changed.
    case alreadyConnected(ConnectionSummary)
    case answer(StreamAnswer)
    case disconnected(count: Int)
    case done
    case statistics([ConnectionStatistics])
    /// A filter port's processor (the answer to `setParameters`).
    case filter(FilterState)
    /// What a `mute` applied to.
    case muted(MuteState)
    case failure(ControlFailure)

    public var typeName: String {
        switch self {
        case .description: "description"
        case .connected: "connected"
        case .alreadyConnected: "already-connected"
        case .answer: "answer"
        case .disconnected: "disconnected"
        case .done: "done"
        case .statistics: "statistics"
        case .filter: "filter"
        case .muted: "muted"
        case .failure: "error"
        }
    }
}
