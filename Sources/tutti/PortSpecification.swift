import TuttiCore
import TuttiEngine
import TuttiIO
import TuttiPeer
import TuttiLV2
import TuttiProcess

/// Builds port configurations from `--sender`/`--receiver`/`--filter` flags (`NAME=KIND[,key=value…]`; a
/// filter's KIND is its processor, its keys the processor's parameters) and from the `[[sender]]`,
/// `[[receiver]]` and `[[filter]]` tables of a config file, through one set of rules and messages.
enum PortSpecification {
    static let senderKinds = ["tone", "click", "wav", "stdin", "jack"]
    static let receiverKinds = ["wav", "stdout", "null", "jack"]
    /// Keys that may stand alone as flags (`in=null,allows-self` is `allows-self=yes`).
    static let flagKeys: Set<String> = ["allows-self", "live"]

    /// Parses `NAME=KIND[,key=value…]`, e.g. `out=tone,frequency=440,channels=1`.
    static func parse(_ text: String, kind: PortKind) throws -> PortConfiguration {
        var parts = text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        guard let head = parts.first, let equals = head.firstIndex(of: "=") else {
            throw CLIError(
                "port '\(text)': expected NAME=KIND[,key=value…], e.g. "
                    + (kind == .sender ? "out=tone,frequency=1000" : kind == .filter ? "fx=gain,db=-6" : "in=wav,path=in.wav"))
        }
        parts.removeFirst()
        var values = ["name": String(head[..<equals]), "kind": String(head[head.index(after: equals)...])]
        for part in parts {
            if flagKeys.contains(part.lowercased()) {
                values[part.lowercased()] = "yes"
                continue
            }
            guard let split = part.firstIndex(of: "="), split != part.startIndex else {
                throw CLIError("port '\(text)': '\(part)' is not key=value")
            }
            values[String(part[..<split]).lowercased()] = String(part[part.index(after: split)...])
        }
        return try make(values, kind: kind)
    }

    /// Builds a port from key/value pairs (`name`, `kind` and the kind's keys). Lists use `/`: `rates=48000/44100`.
    static func make(_ values: [String: String], kind: PortKind) throws -> PortConfiguration {
        guard let name = values["name"], PortDescriptor.isValidName(name) else {
            throw CLIError("port name '\(values["name"] ?? "")' is invalid: use 1–32 of A–Z a–z 0–9 _ . -")
        }
        let portKind = values["kind"] ?? ""
        var known: Set<String> = ["name", "kind", "title", "channels", "rates", "formats", "allows-self", "live"]
        if kind == .receiver { known.formUnion(["mode", "tracks", "latency", "monitor"]) }
        func number(_ key: String, default fallback: Double) throws -> Double {
            guard let text = values[key] else { return fallback }
            guard let value = Double(text), value.isFinite else { throw CLIError("port \(name): \(key)=\(text) is not a number") }
            return value
        }
        var channels = Int(try number("channels", default: 2))
        var rates = [48_000, 44_100, 96_000]
        if let text = values["rates"] {
            rates = try text.split(separator: "/").map {
                guard let rate = Int($0), StreamLimits.sampleRates.contains(rate) else {
                    throw CLIError(
                        "port \(name): sample rate '\($0)' is not between \(StreamLimits.sampleRates.lowerBound) and \(StreamLimits.sampleRates.upperBound)"
                    )
                }
                return rate
            }
        }
        var formats: [SampleFormat] = [.l24, .l16, .opus]
        if let text = values["formats"] {
            formats = try text.split(separator: "/").map {
                guard let format = SampleFormat(loosely: String($0)) else {
                    throw CLIError("port \(name): unknown sample format '\($0)' (L16, L24 or OPUS)")
                }
                return format
            }
        }
        let role: PortConfiguration.Role
        var title = values["title"]
        switch (kind, portKind) {
        case (.sender, "tone"):
            known.formUnion(["frequency", "amplitude"])
            let frequency = try number("frequency", default: 1000)
            let amplitude = try number("amplitude", default: 0.5)
            guard frequency > 0, frequency < 96_000 else { throw CLIError("port \(name): frequency must be between 0 and 96000 Hz") }
            guard amplitude >= 0, amplitude <= 1 else { throw CLIError("port \(name): amplitude must be between 0 and 1") }
            role = .sender(.tone(frequency: frequency, amplitude: Float(amplitude)))
            title = title ?? "Tone \(fixed(frequency, 0)) Hz"
        case (.sender, "click"):
            known.formUnion(["every", "amplitude"])
            let every = try number("every", default: 500)
            let amplitude = try number("amplitude", default: 0.5)
            guard every >= 1, every <= 60_000 else { throw CLIError("port \(name): every must be between 1 and 60000 ms") }
            guard amplitude >= 0, amplitude <= 1 else { throw CLIError("port \(name): amplitude must be between 0 and 1") }
            role = .sender(.click(intervalMilliseconds: every, amplitude: Float(amplitude)))
            title = title ?? "Click every \(fixed(every, 0)) ms"
        case (.sender, "wav"):
            known.formUnion(["path", "loop"])
            guard let path = values["path"] else { throw CLIError("port \(name): a wav source needs path=FILE") }
            let audio: WAVAudio
            do { audio = try WAVAudio.read(path: path) } catch { throw CLIError("port \(name): cannot read \(error)") }
            if values["channels"] == nil { channels = audio.channels }
            rates = [audio.sampleRate]
            role = .sender(.wavFile(path: path, loop: values["loop"].map { $0 == "true" || $0 == "yes" || $0 == "1" } ?? false))
            title = title ?? path.split(separator: "/").last.map(String.init)
        case (.sender, "stdin"):
            known.formUnion(["encoding", "rate"])
            let encoding = try rawEncoding(values["encoding"], port: name)
            if let rate = values["rate"] {
                guard let value = Int(rate), StreamLimits.sampleRates.contains(value) else {
                    throw CLIError("port \(name): rate=\(rate) is not a sample rate")
                }
                rates = [value]
            } else if values["rates"] == nil {
                rates = [48_000]
            }
            role = .sender(.standardInput(encoding: encoding))
            title = title ?? "stdin"
        case (.receiver, "wav"):
            known.formUnion(["path", "files"])
            guard let path = values["path"] else { throw CLIError("port \(name): a wav sink needs path=FILE") }
            switch values["files"]?.lowercased() {
            case nil, "one": role = .receiver(.wavFile(path: path))
            case "per-track":
                guard values["mode"]?.lowercased() == "separate" else {
                    throw CLIError("port \(name): files=per-track is for separate tracks (mode=separate)")
                }
                role = .receiver(.wavFilePerTrack(path: path))
            case let other?: throw CLIError("port \(name): files=\(other) is not one or per-track")
            }
            title = title ?? path.split(separator: "/").last.map(String.init)
        case (.receiver, "stdout"):
            known.insert("encoding")
            role = .receiver(.standardOutput(encoding: try rawEncoding(values["encoding"], port: name)))
            title = title ?? "stdout"
        case (.receiver, "null"):
            role = .receiver(.null)
        case (.filter, "lv2"):
            known.insert("uri")
            guard let uri = values["uri"] else {
                throw CLIError(
                    "port \(name): an lv2 filter needs uri=PLUGIN_URI (see 'lv2ls'), e.g. uri=http://plugin.org.uk/swh-plugins/amp")
            }
            do throws(ProcessorError) {
                var specification = try LV2Catalog.shared.plugin(uri: uri).specification
                known.formUnion(specification.parameters.map(\.name))
                for parameter in specification.parameters {
                    if let text = values[parameter.name] { try specification.set(parameter.name, to: text) }
                }
                role = .filter(specification)
                title = title ?? specification.description
            } catch {
                throw CLIError("port \(name): \(error.message)")
            }
        case (.filter, _):
            let processor = portKind.lowercased()
            guard let parameters = BuiltInProcessor.parameters(of: processor) else {
                throw CLIError(
                    "port \(name): unknown processor '\(portKind)' (one of: \((BuiltInProcessor.names + ["lv2"]).joined(separator: ", ")))")
            }
            known.formUnion(parameters.map(\.name))
            let given = parameters.compactMap { parameter in values[parameter.name].map { "\(parameter.name)=\($0)" } }
            do {
                let specification = try ProcessorSpecification(parsing: ([processor] + given).joined(separator: ","))
                role = .filter(specification)
                title = title ?? specification.description
            } catch {
                throw CLIError("port \(name): \(error.message)")
            }
        case (.sender, "jack"), (.receiver, "jack"):
            known.insert("connect")
            // The JACK server's rate is the port's only one; the peer sets it when it opens its JACK client.
            guard values["rates"] == nil else { throw CLIError("port \(name): a jack port runs at the JACK server's rate (no rates=)") }
            rates = [48_000]
            let connect = values["connect"]
            if let connect, !connect.contains(":") || connect.hasPrefix(":") {
                throw CLIError("port \(name): connect=\(connect) is not CLIENT:PORT_PREFIX, e.g. connect=system:playback_")
            }
            role = kind == .sender ? .sender(.jack(connect: connect)) : .receiver(.jack(connect: connect))
            title = title ?? "JACK \(name)"
        default:
            let kinds = kind == .sender ? senderKinds : receiverKinds
            throw CLIError("port \(name): unknown \(kind) kind '\(portKind)' (one of: \(kinds.joined(separator: ", ")))")
        }
        if let unknown = values.keys.sorted().first(where: { !known.contains($0) }) {
            throw CLIError("port \(name): unknown key '\(unknown)' for a \(portKind) \(kind)")
        }
        guard StreamLimits.channels.contains(channels) else {
            throw CLIError(
                "port \(name): channels must be between \(StreamLimits.channels.lowerBound) and \(StreamLimits.channels.upperBound)")
        }
        func flag(_ key: String) throws -> Bool {
            guard let text = values[key] else { return false }
            switch text.lowercased() {
            case "yes", "true", "1": return true
            case "no", "false", "0": return false
            default: throw CLIError("port \(name): \(key)=\(text) is not yes or no")
            }
        }
        let allowsSelf = try flag("allows-self")
        let live = try flag("live")
        if allowsSelf, kind == .sender {
            throw CLIError("port \(name): allows-self is for receivers and filters (where a connection ends)")
        }
        if live, kind != .sender { throw CLIError("port \(name): live is for senders (whose audio comes from a live input)") }
        var descriptor = PortDescriptor(
            name: name, title: title ?? name, kind: kind, channels: channels, sampleRates: rates, sampleFormats: formats,
            allowsSelf: allowsSelf, live: live)
        if let separate = try separateTracks(values, port: name, kind: kind, channels: channels) {
            descriptor = descriptor.separate(tracks: separate.tracks, latencyMilliseconds: separate.latency)
        }
        let monitor = try values["monitor"].map { text in
            try self.monitor(text, port: name, sinkKind: portKind, separate: descriptor.isSeparate)
        }
        return PortConfiguration(descriptor: descriptor, role: role, monitor: monitor)
    }

    /// A receiver's `mode=separate[,tracks=N][,latency=MS]`: its tracks and their playout latency; nil for
    /// `mode=mixed` (the default). The other keys go with `mode=separate` only.
    private static func separateTracks(_ values: [String: String], port name: String, kind: PortKind, channels: Int) throws -> (
        tracks: Int, latency: Double
    )? {
        let mode = values["mode"]?.lowercased() ?? "mixed"
        guard mode == "separate" else {
            guard mode == "mixed" else { throw CLIError("port \(name): mode=\(values["mode"]!) is not mixed or separate") }
            if let key = ["tracks", "latency"].first(where: { values[$0] != nil }) {
                throw CLIError("port \(name): \(key)= goes with mode=separate")
            }
            return nil
        }
        guard kind == .receiver else { throw CLIError("port \(name): mode=separate is for receivers") }
        let tracksText = values["tracks"] ?? "2"
        guard let tracks = Int(tracksText), PortDescriptor.trackCounts.contains(tracks) else {
            throw CLIError(
                "port \(name): tracks=\(tracksText) is not between \(PortDescriptor.trackCounts.lowerBound) and \(PortDescriptor.trackCounts.upperBound)"
            )
        }
        guard tracks * channels <= PortDescriptor.maxOutputChannels else {
            throw CLIError(
                "port \(name): \(tracks) tracks of \(channels) channels are \(tracks * channels) channels, more than \(PortDescriptor.maxOutputChannels)"
            )
        }
        let latencyText = values["latency"] ?? String(PortDescriptor.defaultTrackLatencyMilliseconds)
        guard let latency = Double(latencyText), latency.isFinite, latency >= 1,
            latency <= Double(StreamLimits.maxTargetLatencyMilliseconds)
        else {
            throw CLIError(
                "port \(name): latency=\(latencyText) is not between 1 and \(StreamLimits.maxTargetLatencyMilliseconds) ms")
        }
        return (tracks, latency)
    }

    /// A separate-mode receiver's `monitor=stdout[:ENCODING]` (a `wav` or `null` port) or `monitor=jack` (a `jack`
    /// port): where it also plays the mix of its tracks.
    private static func monitor(_ text: String, port name: String, sinkKind: String, separate: Bool) throws -> PortConfiguration.Monitor {
        guard separate else {
            throw CLIError("port \(name): monitor= is for separate tracks (mode=separate); a receiver that mixes plays its mix already")
        }
        let parts = text.split(separator: ":", maxSplits: 1).map(String.init)
        switch parts.first?.lowercased() {
        case "stdout":
            guard sinkKind == "wav" || sinkKind == "null" else {
                throw CLIError("port \(name): monitor=stdout is for wav and null receivers (a jack receiver takes monitor=jack)")
            }
            return .standardOutput(try rawEncoding(parts.count > 1 ? parts[1] : nil, port: name))
        case "jack":
            guard sinkKind == "jack", parts.count == 1 else {
                throw CLIError("port \(name): monitor=jack is for jack receivers (a wav or null receiver takes monitor=stdout)")
            }
            return .jack
        default:
            throw CLIError("port \(name): monitor=\(text) is not stdout[:ENCODING] or jack")
        }
    }

    private static func rawEncoding(_ text: String?, port: String) throws -> RawPCMEncoding {
        guard let text else { return .s16le }
        guard let encoding = RawPCMEncoding(rawValue: text.lowercased()) else {
            throw CLIError("port \(port): encoding '\(text)' is not one of s16le, s24le, f32le")
        }
        return encoding
    }
}
