import TuttiCore
import TuttiWire
import XCTest

/// Sample control messages: one of every request and response type, with every optional field both set
/// and unset somewhere.
enum ControlFixtures {
    static let peerID = PeerID("0123456789abcdef0123456789abcdef")!
    static let connectionID = ConnectionID("00112233aabbccdd")!
    static let source = PortReference(peer: "stage", port: "out")
    static let destination = PortReference(peer: "foh-mixer", port: "in.main_1")
    static let format = StreamFormat(sampleRate: 48_000, channels: 2, sampleFormat: .l24, packetFrames: 64, targetLatencyFrames: 240)
    static let fullOptions = ConnectOptions(
        sampleRate: 44_100, channels: 1, sampleFormat: .l16, packetFrames: 128, latencyMilliseconds: 7.5)

    static var offer: StreamOffer {
        StreamOffer(
            connectionID: connectionID, senderPeerID: peerID, source: source, destination: destination, channels: 2,
            sampleRates: [48_000, 44_100], sampleFormats: [.l24, .l16], options: fullOptions, captureClock: .realtime,
            senderControlPort: 7_400, senderClock: "jack")
    }

    static var connect: ConnectRequest {
        ConnectRequest(
            source: source, destination: destination,
            destinationEndpoints: [ControlEndpoint(host: "192.168.1.20", port: 7_400), ControlEndpoint(host: "fe80::1%eth0", port: 7_401)],
            options: ConnectOptions())
    }

    /// To a standard RTP receiver: no endpoints, the destination is the URL.
    static var rtpConnect: ConnectRequest {
        ConnectRequest(
            source: source, rtpDestination: RTPDestination(address: .ipv6(high: 0x2001_0002_0000_0000, low: 2), port: 5_004),
            options: ConnectOptions(sampleFormat: .opus, opus: OpusSettings(frameDuration: .tenMilliseconds, bitrate: 64_000)))
    }

    static var answer: StreamAnswer {
        StreamAnswer(connectionID: connectionID, format: format, mediaPort: 50_000, ssrc: 0xFFFF_FFFF, payloadType: 96)
    }

    static var requests: [ControlRequest] {
        var offerWithLinkClock = offer
        offerWithLinkClock.captureClock = .linkGhost
        offerWithLinkClock.options = ConnectOptions()
        var connectWithOptions = connect
        connectWithOptions.options = fullOptions
        var offerWithPipelines = offer
        offerWithPipelines.upstream = pipelines
        return [
            .describe,
            .statistics,
            .connect(connect),
            .connect(connectWithOptions),
            .connect(rtpConnect),
            .offer(offer),
            .offer(offerWithLinkClock),
            .disconnect(DisconnectRequest(source: source)),
            .disconnect(DisconnectRequest(destination: destination)),
            .disconnect(DisconnectRequest(connectionID: connectionID)),
            .disconnect(DisconnectRequest(source: source, destination: destination, connectionID: connectionID)),
            .teardown(TeardownNotice(connectionID: connectionID, reason: "")),
            .teardown(TeardownNotice(connectionID: connectionID, reason: "peer “stage” stopped — ünïcode ok")),
            .hello(PeerPresence(id: peerID, name: "stage #2", controlPort: 7_400)),
            .bye(PeerPresence(id: peerID, name: "stage", controlPort: 65_535)),
            .offer(offerWithPipelines),
            .upstream(UpstreamNotice(connectionID: connectionID, upstream: pipelines)),
            .upstream(UpstreamNotice(connectionID: connectionID, upstream: [])),
            .mute(MuteRequest(port: "out", muted: true)),
            .mute(MuteRequest(port: "out", destination: destination, muted: false)),
        ]
    }

    /// Two chains into `source`: a live one from another host through a filter, and a sender's own.
    static var pipelines: [Pipeline] {
        [
            Pipeline(
                ports: [PortReference(peer: "mic-host", port: "mic"), PortReference(peer: "fx", port: "vox"), source], live: true,
                originHost: "mic-host.local"),
            Pipeline(origin: source, live: false, originHost: nil),
        ]
    }

    static var responses: [ControlResponse] {
        let ports = [
            PortDescriptor(name: "out", title: "Tone 1 kHz", kind: .sender, channels: 2, sampleRates: [48_000, 44_100]),
            PortDescriptor(name: "in", title: "", kind: .receiver, channels: 8, sampleRates: [96_000], sampleFormats: [.l16]),
            PortDescriptor(name: "fx", title: "Filter", kind: .filter, channels: 1, sampleRates: [48_000], sampleFormats: []),
        ]
        let summary = ConnectionSummary(
            id: connectionID, role: .sending, source: source, destination: destination, format: format, state: .playing)
        let description = PeerDescription(
            id: peerID, name: "stage", host: "stage.local", protocolVersion: 1, ports: ports,
            connections: [summary],
            knownPeers: [
                KnownPeer(name: "foh", id: peerID, endpoints: [ControlEndpoint(host: "10.0.0.2", port: 7_400)]),
                KnownPeer(name: "unknown", id: nil, endpoints: []),
            ])
        let quiet = ConnectionStatistics(
            id: connectionID, role: .sending, source: source, destination: destination, state: .buffering, format: format)
        let busy = ConnectionStatistics(
            id: connectionID, role: .receiving, source: source, destination: destination, state: .lost, format: format,
            packetsSent: 0, packetsReceived: 123_456_789_012, packetsLost: 3, packetsLate: 4, packetsDuplicated: 5,
            packetsReordered: 6, packetsInvalid: 7, jitterMilliseconds: 0.125, bufferMilliseconds: 4.987654321,
            targetMilliseconds: 5, underruns: 1, concealedFrames: UInt64.max, latencyMilliseconds: 6.25)
        var rtpSummary = summary
        rtpSummary.destination = rtpConnect.destination
        rtpSummary.rtpDestination = rtpConnect.rtpDestination
        rtpSummary.payloadType = 96
        var receivingSummary = summary
        receivingSummary.role = .receiving
        receivingSummary.state = .buffering
        return [
            .description(description),
            .description(describedWithRoutes(description)),
            .muted(MuteState(port: source, connections: [connectionID], muted: true)),
            .muted(MuteState(port: source, connections: [], muted: false)),
            .description(
                PeerDescription(
                    id: peerID, name: "empty", host: "h", protocolVersion: 1, ports: [], connections: [], knownPeers: [])),
            .connected(summary),
            .connected(receivingSummary),
            .connected(rtpSummary),
            .alreadyConnected(summary),
            .answer(answer),
            .answer(answerWithWarning),
            .connected(mutedSummary(summary)),
            .disconnected(count: 0),
            .disconnected(count: 3),
            .done,
            .statistics([]),
            .statistics([quiet, busy]),
            .failure(ControlFailure(.noCommonFormat, "no common sample rate")),
            .failure(ControlFailure(.internalError, "")),
        ]
    }
}

/// Decodes a request body, capturing the typed error.
func decodeRequest(_ json: String) -> Result<ControlEnvelope<ControlRequest>, ControlDecodingError> {
    Result { () throws(ControlDecodingError) in try ControlCodec.decodeRequest(Array(json.utf8)) }
}

/// Decodes a response body, capturing the typed error.
func decodeResponse(_ json: String) -> Result<ControlEnvelope<ControlResponse>, ControlDecodingError> {
    Result { () throws(ControlDecodingError) in try ControlCodec.decodeResponse(Array(json.utf8)) }
}

/// The JSON body of a frame (the frame without its 4-byte length prefix).
func body(of frame: [UInt8]) -> [UInt8] { Array(frame.dropFirst(ControlCodec.lengthPrefixBytes)) }

/// Encodes a request built by a test: an empty frame if it cannot be encoded, which then fails the test's decode.
func encodedRequest(_ envelope: ControlEnvelope<ControlRequest>) -> [UInt8] {
    (try? ControlCodec.encodeRequest(envelope)) ?? []
}

/// Encodes `message` (the encoder does not validate) and decodes it: the rejection, or nil when accepted.
func rejection(of message: ControlResponse) -> ControlDecodingError? {
    let frame = ControlCodec.encodeResponse(ControlEnvelope(id: 1, message: message))
    return Result { () throws(ControlDecodingError) in try ControlCodec.decodeResponse(body(of: frame)) }.failure
}

/// Encodes `message` (the encoder does not validate) and decodes it: the rejection, or nil when accepted.
func rejection(of message: ControlRequest) -> ControlDecodingError? {
    let frame = encodedRequest(ControlEnvelope(id: 1, message: message))
    return Result { () throws(ControlDecodingError) in try ControlCodec.decodeRequest(body(of: frame)) }.failure
}

/// Whether `error` is an `.invalidField` rejection (whatever its wording).
func isInvalidField(_ error: ControlDecodingError?) -> Bool {
    if case .invalidField = error { return true }
    return false
}

extension ControlFixtures {
    static var answerWithWarning: StreamAnswer {
        var answer = answer
        answer.warning = "feedback: mic-host:mic → fx:vox → stage:in plays the live input mic-host:mic out on its own host"
        return answer
    }

    static func mutedSummary(_ summary: ConnectionSummary) -> ConnectionSummary {
        var summary = summary
        summary.muted = true
        summary.warning = answerWithWarning.warning
        return summary
    }

    /// `description` with every port's routes: sources, destinations, pipelines, one muted, one warned.
    static func describedWithRoutes(_ description: PeerDescription) -> PeerDescription {
        var description = description
        var routes = PortRoutes(
            port: "in", sources: [PortReference(peer: "fx", port: "vox")], destinations: [], pipelines: pipelines,
            warnings: ["feedback"])
        routes.downstream = []
        routes.muted = true
        description.routes = [routes, PortRoutes(port: "out", sources: [], destinations: [destination], pipelines: [pipelines[1]])]
        return description
    }
}
