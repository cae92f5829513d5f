import TuttiCore

/// Version of the control protocol. A peer refuses messages of another major version with a clear error.
public enum ControlProtocol {
    public static let version = 1
    /// Largest control frame accepted, in bytes. Larger length prefixes close the connection.
    public static let maxFrameBytes = 256 * 1024
    /// Longest free-text field (names, titles, messages) accepted from the network.
    public static let maxTextBytes = 256
    /// Most list entries (ports, connections, addresses) accepted in one message.
    public static let maxListCount = 256
}

/// A port on a named peer, as written on the command line: `PEER:PORT`.
public struct PortReference: Hashable, Sendable, Codable, CustomStringConvertible {
    public var peer: String
    public var port: String

    public init(peer: String, port: String) {
        self.peer = peer
        self.port = port
    }

    /// Parses `PEER:PORT`: the last colon splits (port names never contain one); the port must be a valid name.
    public init?(parsing text: String) {
        guard let colon = text.lastIndex(of: ":") else { return nil }
        let peer = String(text[..<colon])
        let port = String(text[text.index(after: colon)...])
        guard !peer.isEmpty, PortDescriptor.isValidName(port) else { return nil }
        self.init(peer: peer, port: port)
    }

    public var description: String { "\(peer):\(port)" }
}

/// Where a peer's control channel listens.
public struct ControlEndpoint: Hashable, Sendable, Codable, CustomStringConvertible {
    /// An IPv4 or IPv6 address literal, or a host name.
    public var host: String
    public var port: UInt16

    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// Parses `HOST:PORT` or `[V6]:PORT`.
    public init?(parsing text: String) {
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            let host = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":"), let port = UInt16(rest.dropFirst()), !host.isEmpty else { return nil }
            self.init(host: host, port: port)
            return
        }
        guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]) else { return nil }
        let host = String(text[..<colon])
        guard !host.isEmpty, !host.contains(":") else { return nil }
        self.init(host: host, port: port)
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

/// What the user may ask of a connection; anything left `nil` is chosen by negotiation.
public struct ConnectOptions: Hashable, Sendable, Codable {
    public var sampleRate: Int?
    public var channels: Int?
    public var sampleFormat: SampleFormat?
    public var packetFrames: Int?
    /// Target playout latency in milliseconds.
    public var latencyMilliseconds: Double?
    /// Synchronized playout: play every frame this many milliseconds after its capture, on the shared clock.
    public var synchronizedLatencyMilliseconds: Double?
    /// Adaptive latency: the receiver's target follows the network's jitter within these bounds (ms);
    /// `latencyMilliseconds` is then where it starts. Both or neither.
    public var latencyFloorMilliseconds: Double?
    public var latencyCeilingMilliseconds: Double?
    /// Opus streams (`sampleFormat` OPUS): the encoder's settings; nil: `OpusSettings.lan`.
    public var opus: OpusSettings?

    public init(
        sampleRate: Int? = nil, channels: Int? = nil, sampleFormat: SampleFormat? = nil, packetFrames: Int? = nil,
        latencyMilliseconds: Double? = nil, synchronizedLatencyMilliseconds: Double? = nil,
        latencyFloorMilliseconds: Double? = nil, latencyCeilingMilliseconds: Double? = nil, opus: OpusSettings? = nil
    ) {
        self.opus = opus
        self.latencyFloorMilliseconds = latencyFloorMilliseconds
        self.latencyCeilingMilliseconds = latencyCeilingMilliseconds
        self.synchronizedLatencyMilliseconds = synchronizedLatencyMilliseconds
        self.sampleRate = sampleRate
        self.channels = channels
        self.sampleFormat = sampleFormat
        self.packetFrames = packetFrames
        self.latencyMilliseconds = latencyMilliseconds
    }
}

/// The clock that capture timestamps are counted on. Receivers relate it to their own clock.
public enum CaptureClock: String, Hashable, Sendable, Codable {
    /// `CLOCK_REALTIME` nanoseconds: shared across hosts to the accuracy of their time synchronisation
    /// (exact between lab hosts on one machine).
    case realtime
    /// Session ("ghost") time of the shared Link-compatible beat clock (a later issue).
    case linkGhost = "link-ghost"
}

/// A connection's identity: 16 lowercase hex digits chosen by the sender's peer.
public struct ConnectionID: Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: String

    public init?(_ rawValue: String) {
        guard rawValue.utf8.count == 16,
            rawValue.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) })
        else { return nil }
        self.rawValue = rawValue
    }

    public static func random<G: RandomNumberGenerator>(using generator: inout G) -> ConnectionID {
        let value = generator.next()
        let hex = String(value, radix: 16)
        return ConnectionID(String(repeating: "0", count: 16 - hex.count) + hex)!
    }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let id = ConnectionID(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "bad connection id"))
        }
        self = id
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    public var description: String { rawValue }
    /// The first 8 digits, for display (as `PeerID.short`).
    public var short: String { String(rawValue.prefix(8)) }
}

/// Which end of a connection a peer is.
public enum ConnectionRole: String, Hashable, Sendable, Codable {
    case sending
    case receiving
}

/// The state of a connection as its peer sees it.
public enum ConnectionState: String, Hashable, Sendable, Codable {
    /// Receiver: waiting for the first packets to fill the buffer to the target latency.
    case buffering
    /// Media flowing.
    case playing
    /// Receiver: no packet for over a second; playing silence, waiting for the stream to come back.
    case lost
    /// Receiver: its port's output cannot be written (the pipe's reader has exited, the disk is full, the
    /// device fails); packets still arrive but their audio is lost. The connection's `failureReason` says
    /// what failed. (A peer older than this state cannot decode it.)
    case failed
}

/// One live connection, as listed by `tutti ls`.
public struct ConnectionSummary: Hashable, Sendable, Codable {
    public var id: ConnectionID
    public var role: ConnectionRole
    public var source: PortReference
    /// The receiver port; for a standard RTP receiver, its URL as a reference (`RTPDestination.portReference`:
    /// peer `rtp://HOST`, port the UDP port), which prints as `rtp://HOST:PORT`.
    public var destination: PortReference
    public var format: StreamFormat
    public var state: ConnectionState
    /// Sending end: where the packets go (numeric address and UDP port) and their RTP payload type, what
    /// an SDP description of the stream needs (`SessionDescription`). Both or neither; nil on the receiving
    /// end, from older peers, and when the destination has no plain numeric address (a zoned link-local one).
    public var rtpDestination: RTPDestination?
    public var payloadType: UInt8?
    /// Why the connection is `failed`, in one line (nil otherwise, and from older peers).
    public var failureReason: String?
    /// A warning the receiver gave when it took the connection (a feedback loop: a live input on its host that
    /// it plays out); nil when none.
    public var warning: String?
    /// Sending end: whether this connection is muted (`tutti mute SOURCE DESTINATION`); nil when not.
    public var muted: Bool?
    /// Receiving end at a separate-mode port: the track (0-based) the connection's audio plays on, kept for
    /// its pipelines across reconnects; nil at a port that mixes.
    public var track: Int?
    /// The SRTP suite the stream is protected with (a members-only session's streams, and `rtp://` streams
    /// connected with `--srtp`); nil for plain RTP. Never the key.
    public var srtp: String?

    public init(
        id: ConnectionID, role: ConnectionRole, source: PortReference, destination: PortReference,
        format: StreamFormat, state: ConnectionState, rtpDestination: RTPDestination? = nil, payloadType: UInt8? = nil
    ) {
        self.id = id
        self.role = role
        self.source = source
        self.destination = destination
        self.format = format
        self.state = state
        self.rtpDestination = rtpDestination
        self.payloadType = payloadType
    }
}

/// Another peer this peer has found (through DNS-SD or `--peer`).
public struct KnownPeer: Hashable, Sendable, Codable {
    public var name: String
    public var id: PeerID?
    public var endpoints: [ControlEndpoint]

    public init(name: String, id: PeerID?, endpoints: [ControlEndpoint]) {
        self.name = name
        self.id = id
        self.endpoints = endpoints
    }
}

/// A peer's answer to `describe`.
public struct PeerDescription: Hashable, Sendable, Codable {
    public var id: PeerID
    public var name: String
    public var host: String
    public var protocolVersion: Int
    public var ports: [PortDescriptor]
    public var connections: [ConnectionSummary]
    public var knownPeers: [KnownPeer]
    /// The rate each port runs at now, by port name (only ports that run: a port's device clock has one rate
    /// for all its connections, so this is the only rate it can take another connection at). Nil from
    /// older peers.
    public var runningSampleRates: [String: Int]?
    /// Each filter port's processor now, with its parameters and latency. Nil from older peers.
    public var filters: [FilterState]?
    /// Each port's sources, destinations and the pipelines that reach it, in the order of `ports`. Nil from
    /// older peers.
    public var routes: [PortRoutes]?
    /// What the peer's control channel and directory turned away since it started. Nil from older peers.
    public var refusals: ControlRefusals?
    /// Who may join the peer's session: members only (with the key's fingerprint) or anyone. Nil from older
    /// peers, which are all open.
    public var access: SessionAccess?

    public init(
        id: PeerID, name: String, host: String, protocolVersion: Int, ports: [PortDescriptor],
        connections: [ConnectionSummary], knownPeers: [KnownPeer], runningSampleRates: [String: Int]? = nil,
        filters: [FilterState]? = nil, routes: [PortRoutes]? = nil, refusals: ControlRefusals? = nil
    ) {
        self.refusals = refusals
        self.routes = routes
        self.runningSampleRates = runningSampleRates
        self.filters = filters
        self.id = id
        self.name = name
        self.host = host
        self.protocolVersion = protocolVersion
        self.ports = ports
        self.connections = connections
        self.knownPeers = knownPeers
    }
}

/// A receiving stream's place in its drift group (`ConnectionStatistics.driftGroupRole`).
public enum DriftGroupRole: String, Codable, Hashable, Sendable {
    /// Estimates the group's drift and steers the shared correction.
    case leads
    /// Applies the leader's correction.
    case follows
    /// Left the group (its buffer strayed under the shared correction) and compensates on its own.
    case left
}

/// Live figures of one connection, as seen by one of its ends (`tutti stats`).
public struct ConnectionStatistics: Hashable, Sendable, Codable {
    public var id: ConnectionID
    public var role: ConnectionRole
    public var source: PortReference
    public var destination: PortReference
    public var state: ConnectionState
    public var format: StreamFormat
    /// Sender: packets sent. Receiver: 0.
    public var packetsSent: UInt64
    /// Sender: packets the kernel refused to send (e.g. no route, or the next hop's address unresolved while
    /// a link is down), lost at this end. nil from receivers and from peers that do not count.
    public var packetsUnsent: UInt64?
    public var packetsReceived: UInt64
    /// Packets that never arrived in time for playout (each concealed).
    public var packetsLost: UInt64
    /// Packets that arrived after their playout time (dropped).
    public var packetsLate: UInt64
    public var packetsDuplicated: UInt64
    public var packetsReordered: UInt64
    /// Datagrams rejected as malformed or not belonging to the stream.
    public var packetsInvalid: UInt64
    /// RFC 3550 interarrival jitter, in milliseconds.
    public var jitterMilliseconds: Double
    /// Audio buffered ahead of the play head, in milliseconds.
    public var bufferMilliseconds: Double
    /// Target buffer latency, in milliseconds.
    public var targetMilliseconds: Double
    /// Times the buffer ran empty while playing.
    public var underruns: UInt64
    /// Frames filled by concealment (silence with fades).
    public var concealedFrames: UInt64
    /// Capture-to-playout latency of the most recent period, in milliseconds (nil before playout starts).
    public var latencyMilliseconds: Double?
    /// Times an adaptive buffer moved its target, and the audio it synthesized or skipped to do so (ms).
    public var latencyChanges: UInt64 = 0
    public var stretchedMilliseconds: Double = 0
    public var skippedMilliseconds: Double = 0
    /// Packets passed missing with nothing newer yet (the stream's end, or losses not yet confirmed).
    public var packetsPending: UInt64 = 0
    /// Opus: frames recovered from the next packet's forward error correction (not concealed).
    public var fecRecoveredFrames: UInt64 = 0
    /// Opus: the encoder's bitrate in bits per second (nil for PCM).
    public var bitrate: Int?
    /// Drift compensation: the estimated clock difference between the sender's and the receiver's
    /// sample clocks in parts per million (positive: the sender runs fast), and the resampling ratio
    /// applied (input frames per output frame); nil when the receiver does not compensate.
    public var driftPartsPerMillion: Double?
    public var resamplingRatio: Double?
    /// Periods the port's device clock skipped because the machine stalled it (more than 100 ms): audio
    /// lost at the device, for every connection of that port.
    public var deviceOverruns: UInt64 = 0
    /// Wake-ups of the port's device clock later than half a period (paced clocks; nil on JACK, which keeps
    /// its own): the machine kept the clock's thread from running in time, so packets went out late or were
    /// played late. Set a late packet or an underrun beside this count to tell the machine from the stream.
    public var deviceLateWakes: UInt64?
    /// The latest wake-up of the port's device clock, in milliseconds after its deadline (nil on JACK).
    public var deviceWorstWakeMilliseconds: Double?
    /// How long the receiver's paced device clock waited, once, when the stream last started, so that its
    /// reads come just as the packets have waited their slack and the stream plays at its target (a port with
    /// no sound card, alone on its clock with this one stream); nil when it did not, since the stream last
    /// (re)started. And how often the clock moved since, a frame each time, to keep that phase while the two
    /// peers' clocks drift apart (not into a `wav` port, nor for a stream at another rate than the port's).
    public var deviceAlignmentMilliseconds: Double?
    public var deviceAlignmentMoves: UInt64?
    /// Why the port's device stopped (e.g. the JACK server shut the peer's client down); nil while it runs.
    public var deviceProblem: String?
    /// The level of the audio at this end over the last completed 0.5 s window, in dBFS (0 is full scale; a
    /// sine of amplitude A peaks at 20·log10 A, −6.02 for 0.5, and its RMS is 3.01 dB lower). Receiver: what
    /// the connection plays (after rate conversion and drift compensation, before mixing with other
    /// connections). Sender: what the connection sends. Silence, and anything below −120 dBFS, reads −120.
    /// nil before the first window completes, and from peers that do not meter.
    public var peakDBFS: Double?
    public var rmsDBFS: Double?
    /// Why the connection is `failed` (its port's output cannot be written), in one line; nil otherwise.
    public var failureReason: String?
    /// Receiver of an SRTP stream (members-only sessions): packets that failed authentication (forged, or
    /// altered on the way) and packets seen before or older than the replay window (replayed), dropped before
    /// the jitter buffer. nil for plain RTP.
    public var packetsForged: UInt64?
    public var packetsReplayed: UInt64?
    /// An SRTP stream: how many times it changed to a new key (sender: keys sent under; receiver: keys
    /// switched to), on schedule, after a session-key change or after a long loss. nil for plain RTP.
    public var rekeys: UInt64?
    /// Receiver with drift compensation in a drift group (the streams from one remote device clock): whether
    /// this stream leads the group's drift estimate, follows it, or left it (its buffer strayed under the
    /// shared correction: it then compensates on its own). nil outside a group.
    public var driftGroupRole: DriftGroupRole?
    /// Receiver: datagrams that came to this connection's media socket and belonged to no stream on it (an
    /// unknown SSRC, a stream already closed, not RTP), dropped and counted. The socket is the peer's, shared
    /// by every receiving connection on the same clock, so they all show the same figure. nil from peers
    /// that do not count.
    public var strayDatagrams: UInt64?

    public init(
        id: ConnectionID, role: ConnectionRole, source: PortReference, destination: PortReference,
        state: ConnectionState, format: StreamFormat, packetsSent: UInt64 = 0, packetsReceived: UInt64 = 0,
        packetsLost: UInt64 = 0, packetsLate: UInt64 = 0, packetsDuplicated: UInt64 = 0,
        packetsReordered: UInt64 = 0, packetsInvalid: UInt64 = 0, jitterMilliseconds: Double = 0,
        bufferMilliseconds: Double = 0, targetMilliseconds: Double = 0, underruns: UInt64 = 0,
        concealedFrames: UInt64 = 0, latencyMilliseconds: Double? = nil
    ) {
        self.id = id
        self.role = role
        self.source = source
        self.destination = destination
        self.state = state
        self.format = format
        self.packetsSent = packetsSent
        self.packetsReceived = packetsReceived
        self.packetsLost = packetsLost
        self.packetsLate = packetsLate
        self.packetsDuplicated = packetsDuplicated
        self.packetsReordered = packetsReordered
        self.packetsInvalid = packetsInvalid
        self.jitterMilliseconds = jitterMilliseconds
        self.bufferMilliseconds = bufferMilliseconds
        self.targetMilliseconds = targetMilliseconds
        self.underruns = underruns
        self.concealedFrames = concealedFrames
        self.latencyMilliseconds = latencyMilliseconds
    }
}
