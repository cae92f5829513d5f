import TuttiCore
import TuttiWire

/// The sender's side of negotiation: what it offers, which rate its port can take now, and which answers it
/// accepts. The receiver's side is `chooseFormat`; a standard RTP receiver's format is the sender's alone
/// (`StandardReceiverFormat.chooseFormat`).
extension Negotiation {
    /// The offer for a stream from `port`: the port's channels and formats, the rates it can run at now, the
    /// user's options, the capture clock and where to send a teardown.
    ///
    /// - Parameters:
    ///   - currentRates: the rates the port can stream at now (only its running rate while it streams).
    ///   - senderClock: the port's device clock, "jack" or "system" (`StreamOffer.senderClock`).
    /// Pure. Thread-safe: yes (any thread).
    package static func offer(
        id: ConnectionID, peerID: PeerID, source: PortReference, destination: PortReference, port: PortDescriptor,
        currentRates: [Int], senderClock: String, options: ConnectOptions, captureClock: CaptureClock, controlPort: UInt16
    ) -> StreamOffer {
        StreamOffer(
            connectionID: id, senderPeerID: peerID, source: source, destination: destination, channels: port.channels,
            sampleRates: currentRates, sampleFormats: port.sampleFormats, options: options, captureClock: captureClock,
            senderControlPort: controlPort, senderClock: senderClock)
    }

    /// Why the sender port `source` cannot stream at `rate` now, in the user's terms, or nil when it can: a rate
    /// it never offers, or another rate it is already running at (a port's device clock runs at one rate for
    /// all its connections).
    ///
    /// - Parameters:
    ///   - currentRates: the rates the port can stream at now.
    ///   - runningFor: a connection the port streams now (named in the refusal); nil when only its JACK
    ///     server fixes the rate.
    /// Pure. Thread-safe: yes (any thread).
    package static func senderRate(
        _ rate: Int, source: PortReference, port: PortDescriptor, currentRates: [Int], runningFor: ConnectionSummary?
    ) -> NegotiationRefusal? {
        guard !currentRates.contains(rate) else { return nil }
        guard port.sampleRates.contains(rate), let running = currentRates.first else {
            let rates = port.sampleRates.map(String.init).joined(separator: "/")
            return NegotiationRefusal(.noCommonFormat, "\(source) cannot send at \(rate) Hz (its rates: \(rates) Hz)")
        }
        let reason = runningFor.map { "for \($0.destination) [\($0.id)]" } ?? "(its JACK server's rate)"
        return NegotiationRefusal(
            .noCommonFormat, "\(source) is running at \(running) Hz \(reason); connect at \(running) Hz, or disconnect that first")
    }

    /// Whether the receiver's answer to `offer` can be sent from `port`: its rate was offered, it has at least
    /// one channel and at most the port's, the port sends its sample format, and an Opus stream runs at
    /// 48 kHz with 1 or 2 channels. The refusal names the receiving peer and the format.
    /// Pure. Thread-safe: yes (any thread).
    package static func acceptAnswer(
        _ answer: StreamAnswer, to offer: StreamOffer, port: PortDescriptor
    ) -> Result<StreamFormat, NegotiationRefusal> {
        let format = answer.format
        let opusFits =
            format.sampleFormat != .opus
            || (format.sampleRate == OpusSettings.sampleRate && OpusSettings.supportedChannels.contains(format.channels))
        guard offer.sampleRates.contains(format.sampleRate), format.channels >= 1, format.channels <= port.channels,
            port.sampleFormats.contains(format.sampleFormat), opusFits
        else {
            return .failure(
                NegotiationRefusal(
                    .noCommonFormat, "\(offer.destination.peer) chose a format outside the offer: \(format)"))
        }
        return .success(format)
    }
}
