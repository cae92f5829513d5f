import ArgumentParser
import Foundation
import TuttiCore
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

            To a standard RTP receiver (ffmpeg, GStreamer, PipeWire's RTP source), give rtp://HOST:PORT with \
            a numeric IPv4 or [IPv6] address (never a DNS name). The sender's peer chooses the format: \
            --format, else L16; --rate, else 48000 Hz if the port can; --channels, else the port's (at most 2 \
            for Opus). It streams at once, and the SDP the receiver needs is printed after the 'connected' \
            line, or written to --sdp FILE. --latency and --sync do not apply: the receiver buffers on its own.
            Example: tutti connect stage:out rtp://127.0.0.1:5004 --sdp stream.sdp
                     ffmpeg -protocol_whitelist file,udp,rtp -i stream.sdp out.wav
            """)

    @Argument(help: ArgumentHelp("The sender port.", valueName: "PEER:PORT"))
    var source: PortReference

    @Argument(help: ArgumentHelp("The receiver port, or a standard RTP receiver's address.", valueName: "PEER:PORT|rtp://HOST:PORT"))
    var destinationText: String

    @Option(help: ArgumentHelp("Write the stream's SDP description to FILE instead of printing it (rtp:// destinations print it by default).", valueName: "FILE"))
    var sdp: String?

    @Option(help: ArgumentHelp("Sample rate in Hz.", valueName: "HZ"))
    var rate: Int?

    @Option(help: "Channels to stream.")
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

    @Option(name: .customLong("expected-loss"), help: ArgumentHelp("Opus: the packet loss to prepare FEC for, in percent.", valueName: "PERCENT"))
    var expectedLoss: String?

    @Option(help: ArgumentHelp("Frames per packet (default 64).", valueName: "FRAMES"))
    var frames: Int?

    @Option(help: ArgumentHelp(
        "Latency of the receiver's jitter buffer: MS (fixed, default 5), MIN..MAX (adaptive: it follows the network's jitter within that range, in ms), or auto (adaptive, 2..40).",
        valueName: "MS|MIN..MAX|auto"))
    var latency: String?

    @Option(help: ArgumentHelp("Synchronized playout: play every sample this many ms after its capture on the shared beat clock, so receivers on different machines play it at the same moment.", valueName: "MS"))
    var sync: Double?

    @OptionGroup var session: SessionOptions

    /// The parsed destination (`validate()` has checked it).
    var destination: ConnectTarget { get throws { try ConnectTarget(parsing: destinationText) } }

    func validate() throws {
        _ = try destination
        if let format, SampleFormat(loosely: format) == nil { throw ValidationError("--format must be L16, L24 or OPUS") }
        if let codec, !["pcm", "opus"].contains(codec.lowercased()) { throw ValidationError("--codec must be pcm or opus") }
        _ = try opusSettings()
        if let latency, LatencyChoice(latency) == nil {
            throw ValidationError("--latency must be a positive number of milliseconds, a range MIN..MAX, or auto")
        }
        if let sync, !(sync.isFinite && sync > 0) { throw ValidationError("--sync must be a positive number of milliseconds") }
    }

    func run() async throws {
        try await reportingErrors {
            let destination = try self.destination
            var wanted = [source.peer]
            if case .port(let reference) = destination { wanted.append(reference.peer) }
            let peers = await session.findPeers(wanted: wanted)
            let sender = try session.peer(named: source.peer, in: peers)
            let choice = latency.flatMap(LatencyChoice.init)
            let opus = try opusSettings()
            let options = ConnectOptions(
                sampleRate: rate, channels: channels, sampleFormat: opus != nil ? .opus : format.flatMap(SampleFormat.init(loosely:)),
                packetFrames: frames, latencyMilliseconds: choice?.fixed, synchronizedLatencyMilliseconds: sync,
                latencyFloorMilliseconds: choice?.range?.lowerBound, latencyCeilingMilliseconds: choice?.range?.upperBound,
                opus: opus)
            let sourceReference = PortReference(peer: sender.name, port: source.port)
            let request: ConnectRequest
            switch destination {
            case .port(let reference):
                let receiver = try session.peer(named: reference.peer, in: peers)
                request = ConnectRequest(
                    source: sourceReference, destination: PortReference(peer: receiver.name, port: reference.port),
                    destinationEndpoints: receiver.endpoints, options: options)
            case .rtp(let address):
                request = ConnectRequest(source: sourceReference, rtpDestination: address, options: options)
            }
            let response: ControlResponse
            let reached: ControlEndpoint
            do {
                (response, reached) = try await ControlClient.send(.connect(request), toAnyOf: sender.endpoints, timeout: .seconds(8))
            } catch let failure as ControlFailure {
                throw CLIError("cannot connect \(source) to \(destination): \(failure.message)")
            }
            switch response {
            case .connected(let summary):
                let isRTP = request.rtpDestination != nil
                print("connected \(summary.source) → \(summary.destination): \(isRTP ? summary.format.wireDescription : summary.format.description) [\(summary.id)]")
                try deliverSDP(of: summary, origin: reached.host, printByDefault: isRTP)
            case .failure(let failure):
                throw CLIError("cannot connect \(source) to \(destination): \(failure.message)")
            default:
                throw CLIError("unexpected answer from \(sender.name): \(response.typeName)")
            }
        }
    }

    /// Writes the stream's SDP to `--sdp FILE`, or prints it when `printByDefault` (rtp:// destinations).
    private func deliverSDP(of summary: ConnectionSummary, origin: String, printByDefault: Bool) throws {
        guard sdp != nil || printByDefault else { return }
        guard let description = SessionDescription(connection: summary, originHost: origin) else {
            throw CLIError("connected, but \(summary.source.peer) did not report where its packets go, so there is no SDP (an older peer?)")
        }
        guard let sdp else {
            print(description.text, terminator: "")
            return
        }
        do {
            try description.text.write(toFile: sdp, atomically: true, encoding: .utf8)
        } catch {
            throw CLIError("connected, but cannot write \(sdp): \(error.localizedDescription)")
        }
        print("SDP written to \(sdp)")
    }
}

struct DisconnectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "disconnect",
        abstract: "Undo connections: every connection from SOURCE (to DESTINATION, if given).",
        discussion: "Example: tutti disconnect stage:out foh:in")

    @Argument(help: ArgumentHelp("The sender port.", valueName: "PEER:PORT"))
    var source: PortReference

    @Argument(
        help: ArgumentHelp("The receiver port or rtp:// address (default: all of the sender's connections).", valueName: "PEER:PORT|rtp://HOST:PORT"))
    var destinationText: String?

    @OptionGroup var session: SessionOptions

    /// The parsed destination, if given (`validate()` has checked it).
    var target: ConnectTarget? { get throws { try destinationText.map { try ConnectTarget(parsing: $0) } } }

    func validate() throws { _ = try target }

    func run() async throws {
        try await reportingErrors {
            let target = try self.target
            // Connections name an rtp:// destination by its canonical URL; it is no peer to ask.
            let destination = target?.reference
            let receiverPeer: String? = if case .port(let reference)? = target { reference.peer } else { nil }
            let wanted = [source.peer] + (receiverPeer.map { [$0] } ?? [])
            let peers = await session.findPeers(wanted: wanted)
            // Ask the sender's peer; if it is gone, the receiver's peer can still drop its end.
            var targets = [SessionPeer]()
            if let sender = try? session.peer(named: source.peer, in: peers) { targets.append(sender) }
            if let receiverPeer, let receiver = try? session.peer(named: receiverPeer, in: peers) { targets.append(receiver) }
            guard !targets.isEmpty else { _ = try session.peer(named: source.peer, in: peers); return }
            var lastFailure = "not found"
            for target in targets {
                let request = DisconnectRequest(
                    source: PortReference(peer: peers.first { $0.name.lowercased() == source.peer.lowercased() }?.name ?? source.peer, port: source.port),
                    destination: destination.map { reference in
                        PortReference(peer: peers.first { $0.name.lowercased() == reference.peer.lowercased() }?.name ?? reference.peer, port: reference.port)
                    })
                do {
                    let (response, _) = try await ControlClient.send(.disconnect(request), toAnyOf: target.endpoints)
                    switch response {
                    case .disconnected(let count):
                        print("disconnected \(count) connection\(count == 1 ? "" : "s") from \(source)\(destination.map { " to \($0)" } ?? "")")
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
            if opusFlags.contains(true) { throw ValidationError("--bitrate, --frame, --complexity, --application, --fec and --expected-loss need --codec opus") }
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

/// `--latency`: a fixed target (`5`), an adaptive range (`2..20`), or `auto` (adaptive, 2..40 ms).
struct LatencyChoice {
    var fixed: Double?
    var range: ClosedRange<Double>?

    init?(_ text: String) {
        if text.lowercased() == "auto" {
            range = 2...40
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
