import TuttiCore
import TuttiIO
import TuttiProcess

/// Raw PCM encodings for stdin sources and stdout sinks (little-endian, interleaved, as `aplay`/`sox` use).
public enum RawPCMEncoding: String, Sendable, Hashable, CaseIterable {
    case s16le
    case s24le
    case f32le

    /// The byte layout.
    package var layout: LittleEndianPCM {
        switch self {
        case .s16le: .int16
        case .s24le: .int24
        case .f32le: .float32
        }
    }
}

/// Where a sender port's audio comes from.
public enum AudioSource: Sendable, Hashable {
    /// A sine tone at `frequency` Hz with peak `amplitude` (0…1).
    case tone(frequency: Double, amplitude: Float)
    /// A click of peak `amplitude` (a one-frame impulse) at every multiple of `intervalMilliseconds` on the
    /// capture clock, the shared session clock under Link (`ClickGenerator`): peers click at the same instants.
    case click(intervalMilliseconds: Double, amplitude: Float)
    /// A WAV file, played from its start when the port starts streaming; `loop` repeats it, else silence follows.
    case wavFile(path: String, loop: Bool)
    /// Raw PCM read from standard input at the port's (single) sample rate.
    case standardInput(encoding: RawPCMEncoding)
    /// JACK input ports `NAME_1 … NAME_N` on the peer's JACK client `tutti-<peer>`: whatever other JACK
    /// clients write into them, at the JACK server's rate (the port's only rate). The JACK process callback
    /// is the port's device clock. `connect`: a `CLIENT:PORT_PREFIX` whose output ports are connected to
    /// these, in order, when the peer starts (nil: leave connecting to `jack_connect`).
    case jack(connect: String?)
    /// The application's own render block (the embedding API), called once per period on the engine clock.
    case block(AudioBlock)
}

/// Where a receiver port's audio goes.
public enum AudioSink: Sendable, Hashable {
    /// A WAV file (16-bit for L16 streams, 24-bit for L24), rewritten in place with valid sizes every second. At a
    /// separate-mode port: one multichannel file, the tracks side by side (track 1's channels first).
    case wavFile(path: String)
    /// A separate-mode port's tracks, each in a WAV file of its own beside `path` (`TakeNaming.path(ofTake:track:)`:
    /// `foh-track1.wav`, `foh-track2.wav`…), each with its timing.
    case wavFilePerTrack(path: String)
    /// Raw PCM written to standard output.
    case standardOutput(encoding: RawPCMEncoding)
    /// Discard (statistics only).
    case null
    /// JACK output ports `NAME_1 … NAME_N` on the peer's JACK client `tutti-<peer>`, filled with the mix
    /// once per JACK process cycle, at the JACK server's rate. `connect`: a `CLIENT:PORT_PREFIX` whose
    /// input ports these are connected to, in order, when the peer starts (nil: leave it to `jack_connect`).
    case jack(connect: String?)
    /// The application's own block (the embedding API), given the port's mix once per period.
    case block(AudioBlock)
}

/// A port as configured: what the peer advertises, plus its source or sink.
public struct PortConfiguration: Sendable, Hashable {
    public enum Role: Sendable, Hashable {
        case sender(AudioSource)
        case receiver(AudioSink)
        /// Audio in, through the processor, out again (a filter port of a pipeline).
        case filter(ProcessorSpecification)
        /// Audio in, through the application's own block (the embedding API), out again.
        case filterBlock(AudioBlock)
    }

    /// Where a separate-mode receiver also plays the mix of its tracks, so the engineer hears what is recorded.
    public enum Monitor: Sendable, Hashable {
        /// Raw PCM on standard output (a paced port: `wav` or `null`), e.g. into `aplay`.
        case standardOutput(RawPCMEncoding)
        /// JACK output ports after the tracks' (a `jack` port): `NAME_k` for k = tracks × channels + 1 …
        case jack
    }

    public var descriptor: PortDescriptor
    public var role: Role
    /// A separate-mode receiver's monitor (nil: none).
    public var monitor: Monitor?

    public init(descriptor: PortDescriptor, role: Role, monitor: Monitor? = nil) {
        self.descriptor = descriptor
        self.role = role
        self.monitor = monitor
    }

    /// The JACK ports a `jack` receiver registers: its tracks' channels, then the monitor's (the mix).
    public var jackOutputChannels: Int { descriptor.outputChannels + (monitor == .jack ? descriptor.channels : 0) }

    /// Whether the port is a receiver whose audio is heard: it plays into JACK (a sound card) or into a pipe
    /// (`stdout`, typically to a player), not into a file or nowhere. Where a live input from the same host
    /// would feed back.
    public var playsOut: Bool {
        if monitor != nil { return true }
        return switch role {
        case .receiver(.jack), .receiver(.standardOutput): true
        default: false
        }
    }

    /// Whether the port is a JACK port (its rate is the JACK server's; it needs the peer's JACK client).
    public var isJACK: Bool {
        switch role {
        case .sender(.jack), .receiver(.jack): true
        default: false
        }
    }

    /// The `connect=` target of a JACK port (nil for other ports, or when not given).
    public var jackConnectTarget: String? {
        switch role {
        case .sender(.jack(let connect)), .receiver(.jack(let connect)): connect
        default: nil
        }
    }

    /// A sender port with a tone source.
    public static func toneSender(
        name: String, title: String? = nil, frequency: Double = 1000, amplitude: Float = 0.5, channels: Int = 2,
        sampleRates: [Int] = [48_000, 44_100, 96_000]
    ) -> PortConfiguration {
        PortConfiguration(
            descriptor: PortDescriptor(
                name: name, title: title ?? "Tone \(Int(frequency)) Hz", kind: .sender, channels: channels,
                sampleRates: sampleRates),
            role: .sender(.tone(frequency: frequency, amplitude: amplitude)))
    }

    /// A filter port running `processor`.
    public static func filter(
        name: String, processor: ProcessorSpecification, channels: Int = 2, sampleRates: [Int] = [48_000, 44_100, 96_000]
    ) -> PortConfiguration {
        PortConfiguration(
            descriptor: PortDescriptor(
                name: name, title: processor.description, kind: .filter, channels: channels, sampleRates: sampleRates),
            role: .filter(processor))
    }

    /// The embedding API: a port of `kind` whose audio is the application's own `block` (see `AudioBlock` for
    /// its realtime contract), called once per period on the engine clock: a sender's block renders what it
    /// sends, a filter's processes the port's mix in place, a receiver's is given the port's mix.
    public static func application(
        _ kind: PortKind, name: String, block: AudioBlock, channels: Int = 2, sampleRates: [Int] = [48_000, 44_100, 96_000]
    ) -> PortConfiguration {
        let role: Role =
            switch kind {
            case .sender: .sender(.block(block))
            case .filter: .filterBlock(block)
            case .receiver: .receiver(.block(block))
            }
        return PortConfiguration(
            descriptor: PortDescriptor(name: name, title: block.description, kind: kind, channels: channels, sampleRates: sampleRates),
            role: role)
    }

    /// A receiver port with the given sink.
    public static func receiver(
        name: String, title: String? = nil, sink: AudioSink, channels: Int = 2, sampleRates: [Int] = [48_000, 44_100, 96_000]
    ) -> PortConfiguration {
        PortConfiguration(
            descriptor: PortDescriptor(
                name: name, title: title ?? name, kind: .receiver, channels: channels, sampleRates: sampleRates),
            role: .receiver(sink))
    }
}
