import TuttiCore
import TuttiWire

/// Why a receiver refuses a stream offer; `message` is the one line the user sees.
package struct NegotiationRefusal: Error, Hashable, Sendable, CustomStringConvertible {
    package var code: ControlFailure.Code
    package var message: String

    package init(_ code: ControlFailure.Code, _ message: String) {
        self.code = code
        self.message = message
    }

    package var description: String { message }
    package var failure: ControlFailure { ControlFailure(code, message) }
}

/// What a receiver port can accept right now.
package struct ReceiverCapabilities: Hashable, Sendable {
    package var port: PortDescriptor
    /// The rate the port already runs at (it has live connections), which every new stream must use.
    package var activeSampleRate: Int?

    package init(port: PortDescriptor, activeSampleRate: Int? = nil) {
        self.port = port
        self.activeSampleRate = activeSampleRate
    }
}

/// Defaults chosen when the user leaves a field open.
package struct NegotiationDefaults: Hashable, Sendable {
    /// Frames per packet: 64 (1.3 ms at 48 kHz), low latency with modest packet rates.
    package var packetFrames = 64
    /// Target latency: 4 ms (one 64-frame packet and 2.67 ms of jitter slack at 48 kHz), and never less than
    /// one packet plus 2 ms. The slack is twice the 1.33 ms that still let a packet come late every 30 s in the
    /// lab's clean runs, so a LAN plays without a glitch; the adaptive buffer (`--latency auto`) goes lower
    /// where the network allows.
    package var latencyMilliseconds: Double = 4

    package init() {}
}

/// The receiver's side of negotiation: chooses a stream format from the sender's offer, the receiver
/// port's capabilities and the user's options, or refuses with a clear reason.
///
/// Rules: the rate is the user's choice if the sender can produce it, else the first rate in the receiver's
/// preference order that the sender offers (a port already streaming prefers its current rate), else the
/// sender's first rate; the receiver converts to its device rate (`deviceRate`) when they differ; the
/// channel count is the user's choice if both ends have that many, else the smaller of the two ends; the
/// sample format is the user's choice if both support it, else the receiver's first supported one; the
/// packet size and latency come from the options or the defaults, and must fit `StreamLimits`.
/// Pure: no I/O. Thread-safe: yes.
package enum Negotiation {
    package static func chooseFormat(
        offer: StreamOffer, receiver: ReceiverCapabilities, defaults: NegotiationDefaults = NegotiationDefaults()
    ) -> Result<StreamFormat, NegotiationRefusal> {
        chooseFormat(
            proposal: Proposal(
                source: offer.source, destination: offer.destination, channels: offer.channels,
                sampleRates: offer.sampleRates, sampleFormats: offer.sampleFormats, options: offer.options),
            receiver: receiver, defaults: defaults)
    }

    /// What the sending side proposes: an offer's fields that negotiation reads.
    struct Proposal {
        var source: PortReference
        var destination: PortReference
        var channels: Int
        var sampleRates: [Int]
        var sampleFormats: [SampleFormat]
        var options: ConnectOptions
    }

    static func chooseFormat(
        proposal offer: Proposal, receiver: ReceiverCapabilities, defaults: NegotiationDefaults
    ) -> Result<StreamFormat, NegotiationRefusal> {
        let port = receiver.port
        let destination = offer.destination
        guard port.kind == .receiver || port.kind == .filter else {
            return .failure(
                NegotiationRefusal(
                    .wrongDirection, "\(destination) is a \(port.kind) port and cannot receive audio; choose a receiver port"))
        }
        let options = offer.options

        // Sample rate: the stream runs at a rate the sender produces; the receiver converts it to its device
        // rate (the rate it already runs at, else its first) when the two differ.
        let receiverRates = receiver.activeSampleRate.map { [$0] } ?? port.sampleRates
        let commonRates = receiverRates.filter(offer.sampleRates.contains)
        var sampleRate: Int
        if let requested = options.sampleRate {
            guard offer.sampleRates.contains(requested) else {
                return .failure(
                    NegotiationRefusal(
                        .noCommonFormat, "\(offer.source) cannot send at \(requested) Hz (it offers \(list(offer.sampleRates)) Hz)"))
            }
            sampleRate = requested
        } else if let first = commonRates.first {
            sampleRate = first
        } else if let first = offer.sampleRates.first {
            sampleRate = first  // no common rate: the receiver converts
        } else {
            return .failure(NegotiationRefusal(.noCommonFormat, "\(offer.source) offers no sample rate"))
        }

        // Channels.
        let channels: Int
        if let requested = options.channels {
            guard requested <= offer.channels, requested <= port.channels else {
                return .failure(
                    NegotiationRefusal(
                        .invalidOption,
                        "cannot stream \(requested) channels: \(offer.source) has \(offer.channels), \(destination) has \(port.channels)"))
            }
            channels = requested
        } else {
            channels = min(offer.channels, port.channels)
        }

        // Sample format.
        let sampleFormat: SampleFormat
        if let requested = options.sampleFormat {
            guard offer.sampleFormats.contains(requested), port.sampleFormats.contains(requested) else {
                return .failure(
                    NegotiationRefusal(
                        .noCommonFormat,
                        "\(requested) is not supported by both ends (\(offer.source): \(list(offer.sampleFormats)); \(destination): \(list(port.sampleFormats)))"
                    ))
            }
            sampleFormat = requested
        } else {
            guard let first = port.sampleFormats.first(where: offer.sampleFormats.contains) else {
                return .failure(
                    NegotiationRefusal(
                        .noCommonFormat,
                        "no common sample format: \(offer.source) sends \(list(offer.sampleFormats)), \(destination) accepts \(list(port.sampleFormats))"
                    ))
            }
            sampleFormat = first
        }

        // Opus: 48 kHz, mono or stereo, one Opus frame per packet.
        var opus: OpusSettings?
        if sampleFormat == .opus {
            // Opus runs at 48 kHz: prefer it when the sender can (the receiver converts), unless the user chose a rate.
            if options.sampleRate == nil, offer.sampleRates.contains(OpusSettings.sampleRate) { sampleRate = OpusSettings.sampleRate }
            let settings = options.opus ?? .lan
            do throws(OpusSettingsError) { try settings.validate() } catch {
                return .failure(NegotiationRefusal(.invalidOption, "\(error)"))
            }
            guard sampleRate == OpusSettings.sampleRate else {
                return .failure(
                    NegotiationRefusal(
                        .noCommonFormat,
                        "Opus streams run at 48000 Hz, and \(offer.source) sends at \(sampleRate) Hz; use --rate 48000 or PCM"))
            }
            guard OpusSettings.supportedChannels.contains(channels) else {
                return .failure(
                    NegotiationRefusal(
                        .invalidOption, "Opus streams carry 1 or 2 channels, not \(channels); use --channels 2 or PCM"))
            }
            if let requested = options.packetFrames, requested != settings.frameDuration.framesPerChannel {
                return .failure(
                    NegotiationRefusal(
                        .invalidOption,
                        "an Opus packet is one \(settings.frameDuration) frame (\(settings.frameDuration.framesPerChannel) frames), not \(requested); use --frame instead of --frames"
                    ))
            }
            opus = settings
        }

        // Packet size.
        let packetFrames = opus?.frameDuration.framesPerChannel ?? options.packetFrames ?? defaults.packetFrames
        guard StreamLimits.packetFrames.contains(packetFrames) else {
            return .failure(
                NegotiationRefusal(
                    .invalidOption,
                    "packet size \(packetFrames) frames is outside \(StreamLimits.packetFrames.lowerBound)–\(StreamLimits.packetFrames.upperBound)"
                ))
        }
        let payloadBytes = packetFrames * channels * sampleFormat.bytesPerSample
        guard !sampleFormat.isPCM || payloadBytes <= StreamLimits.maxPayloadBytes else {
            let largest = StreamLimits.maxPayloadBytes / (channels * sampleFormat.bytesPerSample)
            return .failure(
                NegotiationRefusal(
                    .invalidOption,
                    "packets of \(packetFrames) frames × \(channels) channels of \(sampleFormat) exceed \(StreamLimits.maxPayloadBytes) bytes; use at most \(largest) frames"
                ))
        }

        // Latency.
        // The lowest target is one packet (no jitter slack); the default leaves 2 ms of slack at least.
        let packetMilliseconds = Double(packetFrames) * 1000 / Double(sampleRate)
        var latencyMilliseconds = options.latencyMilliseconds ?? max(defaults.latencyMilliseconds, packetMilliseconds + 2)
        if options.latencyMilliseconds == nil, let floor = options.latencyFloorMilliseconds,
            let ceiling = options.latencyCeilingMilliseconds
        {
            // Adaptive without a start: start at the default, inside the range.
            latencyMilliseconds = min(max(latencyMilliseconds, floor, packetMilliseconds), max(ceiling, packetMilliseconds))
        }
        var synchronizedMilliseconds = options.synchronizedLatencyMilliseconds
        if let trackLatency = port.trackLatencyMilliseconds {
            // A separate-mode receiver plays every track the same time after capture on the shared clock, so
            // tracks from different hosts line up: its latency is synchronized playout's, for every stream.
            guard options.latencyFloorMilliseconds == nil else {
                return .failure(
                    NegotiationRefusal(
                        .invalidOption,
                        "\(destination) plays its separate tracks at a fixed \(formatted(trackLatency)) ms after capture; leave out the latency range"
                    ))
            }
            if let requested = synchronizedMilliseconds, abs(requested - trackLatency) > 1e-6 {
                return .failure(
                    NegotiationRefusal(
                        .invalidOption,
                        "\(destination) plays every track \(formatted(trackLatency)) ms after capture so that they line up; --sync \(formatted(requested)) would put this one off the others: leave --sync out"
                    ))
            }
            guard trackLatency >= packetMilliseconds - 1e-9 else {
                return .failure(
                    NegotiationRefusal(
                        .invalidOption,
                        "\(destination) plays its tracks \(formatted(trackLatency)) ms after capture, less than one packet (\(formatted(packetMilliseconds)) ms at \(packetFrames) frames, \(kilohertz(sampleRate)) kHz); lower --frames or raise the port's latency="
                    ))
            }
            synchronizedMilliseconds = trackLatency
            if options.latencyMilliseconds == nil { latencyMilliseconds = min(latencyMilliseconds, trackLatency) }
        }
        guard latencyMilliseconds.isFinite else {
            return .failure(NegotiationRefusal(.invalidOption, "latency must be a finite number of milliseconds"))
        }
        guard latencyMilliseconds >= packetMilliseconds - 1e-9 else {
            return .failure(
                NegotiationRefusal(
                    .invalidOption,
                    "latency \(formatted(latencyMilliseconds)) ms is below one packet (\(formatted(packetMilliseconds)) ms at \(packetFrames) frames, \(kilohertz(sampleRate)) kHz): the lowest is \(formatted(packetMilliseconds)) ms; raise --latency or lower --frames"
                ))
        }
        guard latencyMilliseconds <= Double(StreamLimits.maxTargetLatencyMilliseconds) else {
            return .failure(
                NegotiationRefusal(
                    .invalidOption, "latency \(formatted(latencyMilliseconds)) ms exceeds \(StreamLimits.maxTargetLatencyMilliseconds) ms"))
        }
        var targetFrames = Int((latencyMilliseconds * Double(sampleRate) / 1000).rounded())
        var adaptive: ClosedRange<Int>?
        if let floor = options.latencyFloorMilliseconds, let ceiling = options.latencyCeilingMilliseconds {
            guard synchronizedMilliseconds == nil else {
                return .failure(
                    NegotiationRefusal(
                        .invalidOption, "synchronized playout needs a fixed latency: use --latency MS with --sync, not a range"))
            }
            // The floor is at least one packet, as a fixed latency is.
            let floorFrames = max(Int((floor * Double(sampleRate) / 1000).rounded()), packetFrames)
            let ceilingFrames = Int((ceiling * Double(sampleRate) / 1000).rounded())
            guard floorFrames <= ceilingFrames else {
                return .failure(
                    NegotiationRefusal(
                        .invalidOption,
                        "latency range \(formatted(floor))–\(formatted(ceiling)) ms is below one packet (\(formatted(packetMilliseconds)) ms at \(packetFrames) frames, \(kilohertz(sampleRate)) kHz): the lowest is \(formatted(packetMilliseconds)) ms; raise the ceiling or lower --frames"
                    ))
            }
            adaptive = floorFrames...ceilingFrames
            targetFrames = min(ceilingFrames, max(floorFrames, targetFrames))
        }
        var synchronized: Int64?
        if let milliseconds = synchronizedMilliseconds {
            guard milliseconds.isFinite, milliseconds >= latencyMilliseconds - 1e-9,
                milliseconds <= Double(StreamLimits.maxTargetLatencyMilliseconds)
            else {
                return .failure(
                    NegotiationRefusal(
                        .invalidOption,
                        "synchronized latency \(formatted(milliseconds)) ms must be between the buffer latency (\(formatted(latencyMilliseconds)) ms) and \(StreamLimits.maxTargetLatencyMilliseconds) ms"
                    ))
            }
            synchronized = Int64((milliseconds * 1e6).rounded())
            // The buffer must hold everything that waits for its playout time.
            targetFrames = max(targetFrames, Int((milliseconds * Double(sampleRate) / 1000).rounded()))
        }
        return .success(
            StreamFormat(
                sampleRate: sampleRate, channels: channels, sampleFormat: sampleFormat, packetFrames: packetFrames,
                targetLatencyFrames: targetFrames, synchronizedLatencyNanoseconds: synchronized, adaptiveLatencyFrames: adaptive,
                opus: opus))
    }

    /// The receiver's device rate for a stream negotiated with `chooseFormat`: the rate its port already runs
    /// at, else the stream's if the port supports it, else the port's first (the receiver converts).
    package static func deviceRate(for format: StreamFormat, receiver: ReceiverCapabilities) -> Int {
        if let active = receiver.activeSampleRate { return active }
        return receiver.port.sampleRates.contains(format.sampleRate)
            ? format.sampleRate : receiver.port.sampleRates.first ?? format.sampleRate
    }

    private static func list<T: CustomStringConvertible>(_ values: [T]) -> String {
        values.map(\.description).joined(separator: ", ")
    }

    /// A rate in kHz as people write it: 48, 44.1, 96.
    private static func kilohertz(_ rate: Int) -> String { formatted(Double(rate) / 1000) }

    private static func formatted(_ value: Double) -> String {
        guard value.isFinite, abs(value) < 1e12 else { return "\(value)" }
        let hundredths = Int((value * 100).rounded())
        return hundredths % 100 == 0 ? "\(hundredths / 100)" : "\(Double(hundredths) / 100)"
    }
}
