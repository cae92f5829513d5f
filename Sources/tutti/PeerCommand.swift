#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import Dispatch
import Logging
import TuttiCore
import TuttiEngine
import TuttiPeer
import TuttiWire

struct PeerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "peer",
        abstract: "Run a peer: publish its ports on the network and stream what others connect.",
        discussion: """
            Ports are given as NAME=KIND[,key=value…]:
              senders:   tone   (frequency=1000, amplitude=0.5)
                         click  (every=500, amplitude=0.5) a click every
                                N ms of the shared clock: peers click together
                         wav    (path=FILE, loop=false)
                         stdin  (encoding=s16le|s24le|f32le, rate=48000)
                         jack   (connect=CLIENT:PORT_PREFIX) JACK input ports NAME_1…NAME_N
              receivers: wav    (path=FILE) one file per take: FILE, FILE-2, FILE-3…
                         (each with FILE.timing.json: when its first frame played)
                         stdout (encoding=s16le|s24le|f32le)
                         null
                         jack   (connect=CLIENT:PORT_PREFIX) JACK output ports NAME_1…NAME_N
              filters:   gain    (db=0)
                         delay   (ms=0)
                         eq      (freq=1000, db=0, q=0.707) one band
                         limiter (ceiling=-1, release=50) 1.5 ms ahead
                         lv2     (uri=URI, and its control ports) a hosted
                                 LV2 plug-in, e.g. uri=http://plugin.org.uk/swh-plugins/amp
                         in, processed and out in one period;
                         'tutti set PEER:PORT NAME=VALUE' changes one live
            jack ports belong to the JACK client tutti-<peer name> on the server $JACK_DEFAULT_SERVER (else
            "default"), run at the server's rate, and are clocked by its process cycle.
              any port:  channels=2, rates=48000/44100, formats=L24/L16, title=TEXT
              senders:   live        its audio is a live input: warn of feedback
              receivers and filters:
                         allows-self take connections from this same peer
                                     (refused otherwise)
              receivers: mode=separate  one track per pipeline instead of
                                     a mix, aligned on the shared clock:
                         tracks=2    tracks side by side (track 1's channels
                                     first); a pipeline keeps its track
                         latency=10  ms after capture every track plays
                         files=per-track  wav: FILE-track1, FILE-track2…
                         monitor=stdout[:ENCODING]|jack  also play the mix
                                     (jack: on the ports after the tracks')
            Example: tutti peer --name stage --sender out=tone,frequency=440 --receiver in=wav,path=in.wav
                     tutti peer --name fx --filter vox=eq,freq=250,db=-3
            A config file (--config, TOML; see configs/) gives the same settings; flags override it.
            Stop with Ctrl-C (or SIGTERM): connections are closed and files finalised.
            """)

    @Option(help: ArgumentHelp("Peer name, published through DNS-SD (default: the host name).", valueName: "NAME"))
    var name: String?

    @Option(help: ArgumentHelp("TOML configuration file.", valueName: "FILE"))
    var config: String?

    @Option(name: .customLong("sender"), help: ArgumentHelp("Add a sender port (repeatable).", valueName: "SPEC"))
    var senders: [String] = []

    @Option(name: .customLong("receiver"), help: ArgumentHelp("Add a receiver port (repeatable).", valueName: "SPEC"))
    var receivers: [String] = []

    @Option(name: .customLong("filter"), help: ArgumentHelp("Add a filter port (repeatable).", valueName: "SPEC"))
    var filters: [String] = []

    @Option(
        name: .customLong("control-port"), help: ArgumentHelp("TCP port for the control channel (0: any free port).", valueName: "PORT"))
    var controlPort: UInt16?

    @Option(
        name: .customLong("control-address"),
        help: ArgumentHelp(
            "Listen for control on this address only (repeatable; default: every interface), e.g. the band's own network.",
            valueName: "IP"))
    var controlAddresses: [String] = []

    @Option(
        name: .customLong("allow-rtp"),
        help: ArgumentHelp(
            "Allow rtp:// destinations (standard RTP receivers) in this prefix (repeatable; default: none), e.g. 192.168.1.0/24 or 127.0.0.1.",
            valueName: "PREFIX"))
    var allowRTP: [String] = []

    @Option(name: .customLong("peer"), help: ArgumentHelp("A peer to know without DNS-SD (repeatable).", valueName: "HOST:PORT"))
    var peers: [ControlEndpoint] = []

    @OptionGroup var keys: KeyOptions

    @Flag(name: .customLong("public-reads"), help: "In a members-only session, answer ls and stats to anyone (the rest stays for members).")
    var publicReads = false

    @Flag(name: .customLong("no-discovery"), help: "Do not publish or browse through Avahi.")
    var noDiscovery = false

    @Flag(name: .customLong("no-link"), help: "Do not join the shared beat clock (Ableton Link); time media on the wall clock.")
    var noLink = false

    @Option(
        name: .customLong("link-interface"),
        help: ArgumentHelp("Run the beat clock on this interface only (repeatable; default: all).", valueName: "NAME"))
    var linkInterfaces: [String] = []

    @Option(help: ArgumentHelp("Frames per device period for ports without a sound card.", valueName: "FRAMES"))
    var period: Int?

    @Option(
        help: ArgumentHelp("Fill late or lost audio by repeating the last period (repeat) or with silence (silence).", valueName: "MODE"))
    var conceal: String?

    @Flag(name: .customLong("no-drift-compensation"), help: "Do not resample received streams to follow the sender's sample clock.")
    var noDriftCompensation = false

    @Option(
        name: .customLong("realtime-priority"),
        help: ArgumentHelp("SCHED_FIFO priority of the audio threads (1–99, default 70; 0: normal scheduling).", valueName: "N"))
    var realtimePriority: Int?

    @Option(name: .customLong("state-dir"), help: ArgumentHelp("Where the peer keeps its ID.", valueName: "DIR"))
    var stateDirectory: String?

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: String = "info"

    @Flag(name: .customLong("dry-run"), help: "Check the configuration, print the peer and its ports, and exit.")
    var dryRun = false

    func run() async throws {
        try await reportingErrors {
            guard let level = Logger.Level(rawValue: logLevel) else { throw CLIError("unknown log level '\(logLevel)'") }
            let file = try config.map(ConfigFile.load(path:)) ?? ConfigFile()
            var ports = file.ports
            ports += try senders.map { try PortSpecification.parse($0, kind: .sender) }
            ports += try receivers.map { try PortSpecification.parse($0, kind: .receiver) }
            ports += try filters.map { try PortSpecification.parse($0, kind: .filter) }
            guard !ports.isEmpty else {
                throw CLIError(
                    "a peer needs at least one port: add --sender NAME=KIND…, --receiver NAME=KIND… or --filter NAME=PROCESSOR… (see --help)"
                )
            }
            let peerName = name ?? file.name ?? Self.hostName
            guard !peerName.isEmpty, peerName.utf8.count <= 63, !peerName.contains(":") else {
                throw CLIError("peer name '\(peerName)' must be 1–63 bytes without ':'")
            }
            var configuration = PeerConfiguration(
                name: peerName, stateDirectory: stateDirectory ?? file.stateDirectory ?? PeerConfiguration.defaultStateDirectory,
                ports: ports)
            configuration.controlPort = controlPort ?? file.controlPort ?? 0
            configuration.controlAddresses = try Self.controlAddresses(controlAddresses.isEmpty ? file.controlAddresses : controlAddresses)
            configuration.rtpAllowed = try Self.rtpPrefixes(allowRTP.isEmpty ? file.allowRTP : allowRTP)
            configuration.explicitPeers = file.peers + peers
            switch try keys.choice(configKeyFile: file.keyFile, configOpen: file.open) {
            case .open: configuration.access = .open
            case .members(let ring, let path):
                configuration.access = .members(ring)
                configuration.keyFile = path
            case .none:
                throw CLIError(
                    "choose who may join this peer's session: make a session key with 'tutti key new' and copy its file to the other hosts (members only), or run an open session that anyone on the network can join with --open"
                )
            }
            configuration.publicReads = publicReads || file.publicReads == true
            if configuration.publicReads, configuration.access == .open {
                throw CLIError("--public-reads is for a members-only session; in an open session anyone reads anyway")
            }
            configuration.discovery = !noDiscovery && (file.discovery ?? true)
            if noLink || file.link == false {
                configuration.link = nil
            } else if !linkInterfaces.isEmpty {
                configuration.link?.interfaces = linkInterfaces
            }
            let periodFrames = period ?? file.period ?? 64
            guard (16...4096).contains(periodFrames) else { throw CLIError("--period must be between 16 and 4096 frames") }
            configuration.periodFrames = periodFrames
            configuration.driftCompensation = !noDriftCompensation
            let priority = realtimePriority ?? file.realtimePriority ?? Int(PeerConfiguration.defaultRealtimePriority)
            guard (0...99).contains(priority) else { throw CLIError("--realtime-priority must be 0 (off) or 1–99") }
            configuration.realtimePriority = Int32(priority)
            switch (conceal ?? file.conceal ?? "repeat").lowercased() {
            case "repeat", "repetition": configuration.concealment = .repetition
            case "silence": configuration.concealment = .silence
            case let other: throw CLIError("--conceal must be repeat or silence, not '\(other)'")
            }
            // Refused here, for --dry-run as for a real start, before anything starts.
            for port in configuration.ports {
                do throws(EngineError) { try port.checkOutput() } catch { throw CLIError(error.message) }
            }
            if dryRun {
                print(Self.summary(of: configuration))
                return
            }

            LoggingSystem.bootstrap { label in
                var handler = PeerLogHandler(label: label)
                handler.logLevel = level
                return handler
            }
            let logger = Logger(label: "tutti.peer")
            let peer: Peer
            do throws(PeerError) { peer = try await Peer.start(configuration, logger: logger) } catch { throw CLIError(error.message) }
            switch configuration.access {
            case .open:
                logger.warning(
                    "open session: anyone who can reach this peer may list, connect and disconnect; 'tutti key new' makes a key for a session only its members can join"
                )
            case .members(let ring):
                logger.info(
                    "members-only session: session key \(ring.current.fingerprint)\(configuration.keyFile.map { " from \($0)" } ?? " from $TUTTI_KEY")"
                )
            }

            // Stop cleanly on SIGINT/SIGTERM: tear connections down, withdraw the service, finalise files.
            SignalHandling.setHandler { _ in Task { await peer.stop() } }
            do throws(PeerError) { try await peer.run() } catch {
                // The peer has logged why at error level; say it here only if the log level hides that line.
                if level > .error { throw CLIError(error.message) }
                throw ExitCode.failure
            }
        }
    }

    /// What the peer would run, one line per port.
    static func summary(of configuration: PeerConfiguration) -> String {
        var lines = [
            "peer \(configuration.name): control port \(configuration.controlPort == 0 ? "any" : String(configuration.controlPort))\(configuration.controlAddresses.isEmpty ? "" : " on " + configuration.controlAddresses.joined(separator: ", ")), period \(configuration.periodFrames) frames, discovery \(configuration.discovery ? "on" : "off"), beat clock \(configuration.link == nil ? "off" : "on"), realtime priority \(configuration.realtimePriority == 0 ? "off" : String(configuration.realtimePriority))"
                + (configuration.rtpAllowed.isEmpty
                    ? "" : ", rtp:// to \(configuration.rtpAllowed.map(\.description).joined(separator: " "))")
                + (configuration.explicitPeers.isEmpty
                    ? "" : ", peers \(configuration.explicitPeers.map(\.description).joined(separator: " "))")
                + (configuration.access.keys.map { ", members only (session key \($0.current.fingerprint))" } ?? ", open session")
        ]
        for port in configuration.ports {
            let descriptor = port.descriptor
            var role: String
            switch port.role {
            case .sender(.tone(let frequency, let amplitude)): role = "tone \(frequency) Hz at \(amplitude)"
            case .sender(.click(let interval, let amplitude)): role = "click every \(interval) ms of the shared clock at \(amplitude)"
            case .sender(.wavFile(let path, let loop)): role = "wav \(path)\(loop ? " (loop)" : "")"
            case .sender(.standardInput(let encoding)): role = "stdin \(encoding.rawValue)"
            case .receiver(.wavFile(let path)): role = "wav \(path)"
            case .receiver(.wavFilePerTrack(let path)): role = "wav \(path), a file per track"
            case .receiver(.standardOutput(let encoding)): role = "stdout \(encoding.rawValue)"
            case .receiver(.null): role = "null"
            case .filter(let processor): role = "\(processor) (latency \(processor.latencyFrames(sampleRate: 48_000)) frames at 48 kHz)"
            case .sender(.block(let block)), .receiver(.block(let block)), .filterBlock(let block): role = "\(block)"
            case .sender(.jack(let connect)), .receiver(.jack(let connect)):
                let ports =
                    descriptor.outputChannels == 1
                    ? "\(descriptor.name)_1" : "\(descriptor.name)_1…\(descriptor.name)_\(descriptor.outputChannels)"
                role = "jack tutti-\(configuration.name):\(ports)" + (connect.map { ", connect \($0)" } ?? "")
            }
            if let tracks = descriptor.tracks, let latency = descriptor.trackLatencyMilliseconds {
                role +=
                    ", separate: \(tracks) track\(tracks == 1 ? "" : "s") of \(descriptor.channels)ch played \(latency) ms after capture"
            }
            switch port.monitor {
            case .standardOutput(let encoding)?: role += ", monitor on stdout \(encoding.rawValue)"
            case .jack?:
                role += ", monitor on \(descriptor.name)_\(descriptor.outputChannels + 1)…\(descriptor.name)_\(port.jackOutputChannels)"
            case nil: break
            }
            let rates = port.isJACK ? "the JACK server's rate" : "\(descriptor.sampleRates.map(String.init).joined(separator: "/")) Hz"
            lines.append(
                "  \(descriptor.kind) \(descriptor.name) \"\(descriptor.title)\": \(descriptor.channels)ch, \(rates), \(descriptor.sampleFormats.map(\.rawValue).joined(separator: "/")), \(role)"
            )
        }
        return lines.joined(separator: "\n")
    }

    /// The control addresses as given (IPv4 or IPv6 literals; at most 8), or a one-line error.
    static func controlAddresses(_ given: [String]) throws -> [String] {
        guard given.count <= 8 else { throw CLIError("at most 8 control addresses (got \(given.count))") }
        for address in given where IPAddress(parsing: address) == nil {
            throw CLIError("--control-address '\(address)' is not an IP address; give one of this host's, e.g. 192.168.1.20 or ::1")
        }
        return given
    }

    /// The `--allow-rtp` prefixes, or a one-line error naming the first that is not one.
    static func rtpPrefixes(_ given: [String]) throws -> [IPPrefix] {
        try given.map { text in
            guard let prefix = IPPrefix(parsing: text) else {
                throw CLIError(
                    "--allow-rtp '\(text)' is not an address prefix; give one like 192.168.1.0/24, 127.0.0.1 or 2001:db8::/32 (host bits zero)"
                )
            }
            return prefix
        }
    }

    static var hostName: String {
        var buffer = [CChar](repeating: 0, count: 256)
        gethostname(&buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
