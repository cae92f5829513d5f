import ArgumentParser
import Foundation
import TuttiCore
import TuttiIO
import TuttiPeer
import TuttiWire

struct ConnectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "connect",
        abstract: "Stream a sender port to a receiver port, or to any standard RTP receiver.",
        discussion: """
            Both peers negotiate the stream: sample rate, channels, sample format, packet size and latency, \
            from what the ports support and the options given here. If they cannot agree, nothing is \
            connected and the reason is printed.
            Example: tutti connect stage:out foh:in --latency 8

            A pipeline through filter ports, in one command: every port after the first is connected to the one
            before it, with the same options; if one hop cannot be connected, the hops made before it are undone.
            Example: tutti connect stage:out fx:vox foh:in

            To a standard RTP receiver (ffmpeg, GStreamer, PipeWire's RTP source), give rtp://HOST:PORT with \
            a numeric IPv4 or [IPv6] address (never a DNS name) that the sender's peer allows (its allow-rtp \
            setting, see tutti peer's help). The sender's peer chooses the format: \
            --format, else L16; --rate, else 48000 Hz if the port can; --channels, else the port's (at most 2 \
            for Opus). It streams at once, and the SDP the receiver needs is printed after the 'connected' \
            line, or written to --sdp FILE. --latency and --sync do not apply: the receiver buffers on its own. \
            With --srtp (members-only sessions) the stream is SRTP (AES_CM_128_HMAC_SHA1_80) and its key is in \
            the SDP (a=crypto), written only to the --sdp FILE, readable by you alone; the SDP is the key.
            Example: tutti connect stage:out rtp://127.0.0.1:5004 --sdp stream.sdp
                     ffmpeg -protocol_whitelist file,udp,rtp -i stream.sdp out.wav
            """)

    @Argument(help: ArgumentHelp("The sender port.", valueName: "PEER:PORT"))
    var sourceText: String

    @Argument(help: ArgumentHelp("The receiver port, or a standard RTP receiver's address.", valueName: "PEER:PORT|rtp://HOST:PORT"))
    var destinationText: String

    @Argument(help: ArgumentHelp("Further ports of a pipeline: each is connected to the one before it.", valueName: "PEER:PORT"))
    var pipelineTexts: [String] = []

    @Option(
        help: ArgumentHelp(
            "Write the stream's SDP description to FILE instead of printing it (rtp:// destinations print it by default).",
            valueName: "FILE"))
    var sdp: String?

    @Flag(help: "Encrypt an rtp:// stream (SRTP, its key in the --sdp file; members-only sessions).")
    var srtp = false

    @Option(
        help: ArgumentHelp(
            "Sample rate in Hz, \(StreamLimits.sampleRates.lowerBound)–\(StreamLimits.sampleRates.upperBound) (default: the receiver port's preferred rate that the sender has).",
            valueName: "HZ"))
    var rate: Int?

    @Option(
        help: ArgumentHelp(
            "Channels to stream, \(StreamLimits.channels.lowerBound)–\(StreamLimits.channels.upperBound) (default: as many as both ports have).",
            valueName: "N"))
    var channels: Int?

    @Option(help: ArgumentHelp("Sample format: L16 or L24 (PCM), or OPUS.", valueName: "FORMAT"))
    var format: String?

    @Option(help: ArgumentHelp("pcm or opus (opus: the same as --format OPUS).", valueName: "CODEC"))
    var codec: String?

    @Option(help: ArgumentHelp("Opus bitrate, e.g. 96k or 128000 (default 128k).", valueName: "BITS/S"))
    var bitrate: String?

    @Option(help: ArgumentHelp("Opus frame: 2.5ms, 5ms, 10ms or 20ms (default 5ms).", valueName: "DURATION"))
    var frame: String?

    @Option(help: ArgumentHelp("Opus encoder complexity, 0–10 (default 9).", valueName: "N"))
    var complexity: Int?

    @Option(help: ArgumentHelp("Opus application: lowdelay (default), audio or voip.", valueName: "MODE"))
    var application: String?

    @Flag(help: "Opus in-band forward error correction (needs 10 or 20 ms frames and --application audio or voip).")
    var fec = false

    @Option(
        name: .customLong("expected-loss"),
        help: ArgumentHelp("Opus: the packet loss to prepare FEC for, in percent.", valueName: "PERCENT"))
    var expectedLoss: String?

    @Option(
        help: ArgumentHelp(
            "Frames per packet, \(StreamLimits.packetFrames.lowerBound)–\(StreamLimits.packetFrames.upperBound) (default 64).",
            valueName: "FRAMES"))
    var frames: Int?

    // `.unconditional`: a negative value (`--latency -3`) is this option's value, refused by `validate()` in
    // words, not taken for an unknown flag.
    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Latency of the receiver's jitter buffer: MS (fixed, default 4), MIN..MAX (adaptive: it follows the network's jitter within that range, in ms), or auto (adaptive, one packet..40); at least one packet (1.33 ms at 64 frames, 48 kHz), at most \(StreamLimits.maxTargetLatencyMilliseconds) ms.",
            valueName: "MS|MIN..MAX|auto"))
    var latency: String?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Synchronized playout: play every sample this many ms after its capture on the shared beat clock, so receivers on different machines play it at the same moment (at most \(StreamLimits.maxTargetLatencyMilliseconds) ms).",
            valueName: "MS"))
    var sync: String?

    @Flag(
        help:
            "Print the result as one JSON object: {\"status\": \"connected\"|\"already-connected\"|\"error\", \"connection\": …, \"sdp\": …, \"notes\": […], \"error\": …}."
    )
    var json = false

    @OptionGroup var session: SessionOptions

    /// The parsed source and destination (`validate()` has checked them).
    var source: PortArgument { get throws { try PortArgument(parsing: sourceText) } }
    var destination: ConnectTarget { get throws { try ConnectTarget(parsing: destinationText) } }

    /// Every hop of the command: (source, destination) pairs, the pipeline's ports in order.
    var hops: [(source: PortArgument, destination: ConnectTarget)] {
        get throws {
            var hops = [(source: try source, destination: try destination)]
            for text in pipelineTexts {
                guard case .port(let previous) = hops[hops.count - 1].destination else {
                    throw ValidationError("an rtp:// destination ends a pipeline; give it last")
                }
                hops.append((source: previous, destination: try ConnectTarget(parsing: text)))
            }
            return hops
        }
    }

    func validate() throws {
        _ = try source
        _ = try destination
        _ = try hops
        try Self.check(rate, "--rate", StreamLimits.sampleRates, unit: " Hz")
        try Self.check(channels, "--channels", StreamLimits.channels)
        try Self.check(frames, "--frames", StreamLimits.packetFrames)
        if let format, SampleFormat(loosely: format) == nil { throw ValidationError("--format must be L16, L24 or OPUS (got '\(format)')") }
        if let codec, !["pcm", "opus"].contains(codec.lowercased()) {
            throw ValidationError("--codec must be pcm or opus (got '\(codec)')")
        }
        _ = try opusSettings()
        let most = StreamLimits.maxTargetLatencyMilliseconds
        if let latency, LatencyChoice(latency).map({ $0.upperBound <= Double(most) }) != true {
            throw ValidationError(
                "--latency must be a number of milliseconds above 0 and at most \(most), a range MIN..MAX, or auto (got '\(latency)')")
        }
        if let sync, Double(sync).map({ $0.isFinite && $0 > 0 && $0 <= Double(most) }) != true {
            throw ValidationError("--sync must be a number of milliseconds above 0 and at most \(most) (got '\(sync)')")
        }
        if srtp {
            guard case .rtp = try destination else {
                throw ValidationError(
                    "--srtp is for rtp:// destinations (streams between peers of a members-only session are SRTP already)")
            }
            guard sdp != nil else {
                throw ValidationError("--srtp needs --sdp FILE: the SDP holds the stream's key, so it is written, not printed")
            }
        }
    }

    /// Refuses a value outside `range`, naming the range.
    static func check(_ value: Int?, _ option: String, _ range: ClosedRange<Int>, unit: String = "") throws {
        guard let value, !range.contains(value) else { return }
        throw ValidationError("\(option) must be \(range.lowerBound)–\(range.upperBound)\(unit) (got \(value))")
    }

    /// What `--json` prints: one object, whatever the outcome.
    struct Result: Encodable {
        var status: String
        var connection: ConnectionSummary?
        var sdp: String?
        var notes: [String] = []
        var error: String?
    }

    func run() async throws {
        try await reportingErrors(json: json, as: { Result(status: "error", error: $0) }) {
            let hops = try self.hops
            var wanted = [hops[0].source.peer]
            for hop in hops { if case .port(let argument) = hop.destination { wanted.append(argument.peer) } }
            let peers = try await session.findPeers(wanted: wanted)
            let credentials = try session.credentials()
            if srtp, credentials == nil {
                throw CLIError(
                    "--srtp needs a members-only session: without a session key the request, and the stream's key in it, would travel in the clear"
                )
            }
            // The hops this command connected (not those that were connected already), to undo if a later one fails.
            var made: [(summary: ConnectionSummary, sender: SessionPeer)] = []
            for (index, hop) in hops.enumerated() {
                do {
                    let (summary, sender, isNew) = try await connectHop(
                        hop.source, to: hop.destination, in: peers, credentials: credentials)
                    if isNew { made.append((summary, sender)) }
                } catch {
                    // Nothing half-connected: undo what this command made before the hop that failed.
                    for (summary, sender) in made.reversed() {
                        _ = try? await ControlClient.send(
                            .disconnect(DisconnectRequest(connectionID: summary.id)), toAnyOf: sender.endpoints, credentials: credentials)
                    }
                    guard index > 0 else { throw error }
                    let undone =
                        made.isEmpty
                        ? "nothing to undo"
                        : "undone: " + made.map { "\($0.summary.source) → \($0.summary.destination)" }.joined(separator: ", ")
                    throw CLIError("\(error) (hop \(index + 1) of \(hops.count); \(undone))")
                }
            }
        }
    }

    /// Connects one hop and prints it; returns the connection, the peer that sends it, and whether this command
    /// made it (not already connected).
    private func connectHop(
        _ source: PortArgument, to destination: ConnectTarget, in peers: [SessionPeer], credentials: ControlCredentials?
    ) async throws -> (ConnectionSummary, SessionPeer, isNew: Bool) {
        do {
            let (sender, sourcePort) = try session.resolve(source, as: .sender, in: peers)
            let choice = latency.flatMap(LatencyChoice.init)
            let opus = try opusSettings()
            let options = ConnectOptions(
                sampleRate: rate, channels: channels, sampleFormat: opus != nil ? .opus : format.flatMap(SampleFormat.init(loosely:)),
                packetFrames: frames, latencyMilliseconds: choice?.fixed, synchronizedLatencyMilliseconds: sync.flatMap { Double($0) },
                latencyFloorMilliseconds: choice?.range?.lowerBound, latencyCeilingMilliseconds: choice?.range?.upperBound,
                opus: opus)
            let sourceReference = PortReference(peer: sender.name, port: sourcePort.name)
            var notes = [String]()
            let request: ConnectRequest
            var destinationPort: PortDescriptor?
            /// The SRTP key of an rtp:// stream with --srtp: drawn here, sent in the (encrypted) request, written
            /// into the SDP.
            var rtpKey: [UInt8]?
            switch destination {
            case .port(let argument):
                let (receiver, port) = try session.resolve(argument, as: .receiver, in: peers)
                destinationPort = port
                request = ConnectRequest(
                    source: sourceReference, destination: PortReference(peer: receiver.name, port: port.name),
                    destinationEndpoints: receiver.endpoints, options: options)
            case .rtp(let address):
                if address.port % 2 == 1 {
                    notes.append(
                        "\(address) is an odd port: RTP receivers listen on an even port and take RTCP on the next one (RFC 3550 §11); most will not play it"
                    )
                }
                var rtpRequest = ConnectRequest(source: sourceReference, rtpDestination: address, options: options)
                if srtp {
                    var generator = SystemRandomNumberGenerator()
                    rtpKey = (0..<30).map { _ in generator.next() }
                    rtpRequest.rtpKey = MediaKeying(suite: "AES_CM_128_HMAC_SHA1_80", key: rtpKey!)
                }
                request = rtpRequest
            }
            let response: ControlResponse
            let reached: ControlEndpoint
            do {
                (response, reached) = try await ControlClient.send(
                    .connect(request), toAnyOf: sender.endpoints, timeout: .seconds(8), credentials: credentials)
            } catch {
                throw CLIError("cannot connect \(sourceReference) to \(request.destination): \(error.message)")
            }
            let summary: ConnectionSummary
            let status: String
            switch response {
            case .connected(let body): (summary, status) = (body, "connected")
            case .alreadyConnected(let body): (summary, status) = (body, "already-connected")
            case .failure(let failure):
                throw CLIError("cannot connect \(sourceReference) to \(request.destination): \(failure.message)")
            default:
                throw CLIError("unexpected answer from \(sender.name): \(response.typeName)")
            }
            notes += Self.channelNotes(summary: summary, source: sourcePort, destination: destinationPort)
            let isRTP = request.rtpDestination != nil
            let formatText = isRTP ? summary.format.wireDescription : summary.format.description
            let sdpText = try sdpDescription(of: summary, origin: reached.host, wanted: isRTP, srtpKey: rtpKey)
            if json {
                // The JSON carries no key: the SDP with it goes to the --sdp file only.
                printJSON(Result(status: status, connection: summary, sdp: rtpKey == nil ? sdpText : nil, notes: notes))
            } else {
                if status == "connected" {
                    print("connected \(summary.source) → \(summary.destination): \(formatText) [\(summary.id)]")
                } else {
                    // The receiving end's state, when it is not simply playing (still buffering, or its sender lost).
                    let state = summary.state == .playing ? "" : " (\(summary.state.rawValue))"
                    print(
                        "already connected \(summary.source) → \(summary.destination)\(state): \(formatText) [\(summary.id)]; nothing changed"
                    )
                }
                if let sdpText, sdp == nil, rtpKey == nil { print(sdpText, terminator: "") }
            }
            for note in notes { printError("note: \(note)") }
            if let warning = summary.warning { printError("warning: \(warning)") }
            if let sdp, let sdpText {
                if rtpKey != nil {
                    // The SDP holds the stream's key: its reader's alone.
                    do throws(SecretFile.Failure) { try SecretFile.write(sdpText, to: sdp) } catch {
                        throw CLIError("connected, but cannot write \(sdp): \(error)")
                    }
                } else {
                    do {
                        try sdpText.write(toFile: sdp, atomically: true, encoding: .utf8)
                    } catch {
                        throw CLIError("connected, but cannot write \(sdp): \(error.localizedDescription)")
                    }
                }
                if !json { print("SDP written to \(sdp)\(rtpKey == nil ? "" : " (mode 0600: it holds the stream's key)")") }
            }
            return (summary, sender, status == "connected")
        }
    }

    /// What the user should know about how channels map: a sender with more channels than the stream
    /// carries (the rest are not sent), a receiver port with more channels than the stream (a mono stream
    /// plays on all of them; otherwise the extra ones stay silent).
    static func channelNotes(summary: ConnectionSummary, source: PortDescriptor, destination: PortDescriptor?) -> [String] {
        let streamed = summary.format.channels
        var notes = [String]()
        if source.channels > streamed {
            let dropped =
                streamed + 1 == source.channels ? "channel \(source.channels) is" : "channels \(streamed + 1)–\(source.channels) are"
            notes.append(
                "\(summary.source) has \(source.channels) channels and the stream carries \(streamed) (channels 1–\(streamed)); \(dropped) not sent"
            )
        }
        if let destination, destination.channels > streamed, streamed > 1 {
            notes.append(
                "\(summary.destination) has \(destination.channels) channels; the stream fills \(streamed) of them, the rest stay silent")
        }
        return notes
    }

    /// The stream's SDP, when `--sdp FILE` asks for it or `wanted` (an rtp:// destination); nil otherwise.
    private func sdpDescription(of summary: ConnectionSummary, origin: String, wanted: Bool, srtpKey: [UInt8]?) throws -> String? {
        guard sdp != nil || wanted else { return nil }
        guard let description = SessionDescription(connection: summary, originHost: origin, srtpKey: srtpKey) else {
            throw CLIError("connected, but \(summary.source.peer) did not report where its packets go, so there is no SDP (an older peer?)")
        }
        return description.text
    }
}

struct DisconnectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "disconnect",
        abstract: "Undo connections: every connection from SOURCE (to DESTINATION, if given).",
        discussion: "Example: tutti disconnect stage:out foh:in")

    @Argument(help: ArgumentHelp("The sender port.", valueName: "PEER:PORT"))
    var sourceText: String

    @Argument(
        help: ArgumentHelp(
            "The receiver port or rtp:// address (default: all of the sender's connections).", valueName: "PEER:PORT|rtp://HOST:PORT"))
    var destinationText: String?

    @Flag(help: "Print the result as one JSON object: {\"status\": \"disconnected\"|\"error\", \"count\": N, \"error\": …}.")
    var json = false

    @OptionGroup var session: SessionOptions

    /// The parsed arguments (`validate()` has checked them).
    var source: PortArgument { get throws { try PortArgument(parsing: sourceText) } }
    var target: ConnectTarget? { get throws { try destinationText.map { try ConnectTarget(parsing: $0) } } }

    func validate() throws {
        guard try source.port != nil else {
            throw ValidationError("name the sender port as PEER:PORT ('\(sourceText)' has no port; 'tutti ls' lists them)")
        }
        if case .port(let argument)? = try target, argument.port == nil {
            throw ValidationError("name the receiver port as PEER:PORT ('\(destinationText ?? "")' has no port; 'tutti ls' lists them)")
        }
    }

    /// What `--json` prints: one object, whatever the outcome.
    struct Result: Encodable {
        var status: String
        var count: Int?
        var error: String?
    }

    func run() async throws {
        try await reportingErrors(json: json, as: { Result(status: "error", error: $0) }) {
            let source = try self.source.reference
            let target = try self.target
            // Connections name an rtp:// destination by its canonical URL; it is no peer to ask.
            let destination: PortReference? =
                switch target {
                case .port(let argument)?: argument.reference
                case .rtp(let address)?: address.portReference
                case nil: nil
                }
            let receiverPeer: String? = if case .port(let argument)? = target { argument.peer } else { nil }
            let wanted = [source.peer] + (receiverPeer.map { [$0] } ?? [])
            let peers = try await session.findPeers(wanted: wanted)
            let credentials = try session.credentials()
            // Ask the sender's peer; if it is gone, the receiver's peer can still drop its end.
            var targets = [SessionPeer]()
            if let sender = try? session.peer(named: source.peer, in: peers) { targets.append(sender) }
            if let receiverPeer, let receiver = try? session.peer(named: receiverPeer, in: peers) { targets.append(receiver) }
            guard !targets.isEmpty else {
                _ = try session.peer(named: source.peer, in: peers)
                return
            }
            func canonical(_ reference: PortReference) -> PortReference {
                PortReference(
                    peer: peers.first { $0.name.lowercased() == reference.peer.lowercased() }?.name ?? reference.peer, port: reference.port)
            }
            var lastFailure = "not found"
            for target in targets {
                let named = (source: canonical(source), destination: destination.map(canonical))
                let request = DisconnectRequest(source: named.source, destination: named.destination)
                do {
                    let (response, _) = try await ControlClient.send(
                        .disconnect(request), toAnyOf: target.endpoints, credentials: credentials)
                    switch response {
                    case .disconnected(let count):
                        if json {
                            printJSON(Result(status: "disconnected", count: count))
                        } else {
                            print(
                                "disconnected \(count) connection\(count == 1 ? "" : "s") from \(named.source)\(named.destination.map { " to \($0)" } ?? "")"
                            )
                        }
                        return
                    case .failure(let failure): lastFailure = failure.message
                    default: lastFailure = "unexpected answer \(response.typeName)"
                    }
                } catch let failure as ControlFailure {
                    lastFailure = failure.message
                }
            }
            throw CLIError("cannot disconnect: \(lastFailure)")
        }
    }
}

extension ConnectCommand {
    /// The Opus settings from the flags, or nil for a PCM stream. Throws a one-line error for a bad value,
    /// for Opus flags on a PCM stream, and for combinations libopus cannot do (FEC on short frames).
    func opusSettings() throws -> OpusSettings? {
        let wantsOpus = codec?.lowercased() == "opus" || format.flatMap(SampleFormat.init(loosely:)) == .opus
        let opusFlags = [bitrate != nil, frame != nil, complexity != nil, application != nil, fec, expectedLoss != nil]
        guard wantsOpus else {
            if opusFlags.contains(true) {
                throw ValidationError("--bitrate, --frame, --complexity, --application, --fec and --expected-loss need --codec opus")
            }
            return nil
        }
        if codec?.lowercased() == "opus", let format, SampleFormat(loosely: format) != .opus {
            throw ValidationError("--codec opus and --format \(format) disagree")
        }
        var settings = OpusSettings.lan
        do throws(OpusSettingsError) {
            if let bitrate { settings.bitrate = try OpusSettings.parseBitrate(bitrate) }
            if let frame { settings.frameDuration = try OpusSettings.FrameDuration(parsing: frame) }
            if let application { settings.application = try OpusSettings.Application(parsing: application) }
            if let expectedLoss { settings.expectedPacketLossPercent = try OpusSettings.parsePacketLossPercent(expectedLoss) }
            if let complexity { settings.complexity = complexity }
            settings.inBandFEC = fec
            try settings.validate()
        } catch {
            throw ValidationError(error.description)
        }
        return settings
    }
}

/// `--latency`: a fixed target (`4`), an adaptive range (`2..20`), or `auto` (adaptive, one packet to 40 ms:
/// negotiation raises the range's floor to one packet).
struct LatencyChoice {
    var fixed: Double?
    var range: ClosedRange<Double>?

    /// The largest latency the choice allows, in ms.
    var upperBound: Double { range?.upperBound ?? fixed ?? 0 }

    init?(_ text: String) {
        if text.lowercased() == "auto" {
            range = 0.001...40
            return
        }
        let bounds = text.split(separator: "..", omittingEmptySubsequences: false).map { Double($0.trimmingCharacters(in: .whitespaces)) }
        switch bounds.count {
        case 1:
            guard let value = bounds[0], value.isFinite, value > 0 else { return nil }
            fixed = value
        case 2:
            guard let low = bounds[0], let high = bounds[1], low.isFinite, high.isFinite, low > 0, low <= high else { return nil }
            range = low...high
        default:
            return nil
        }
    }
}
