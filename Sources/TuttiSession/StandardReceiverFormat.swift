import TuttiCore
import TuttiWire

/// The format of a stream to a standard RTP receiver (`rtp://HOST:PORT`: ffmpeg, GStreamer, PipeWire's RTP
/// source), which takes part in no negotiation: the sender's peer chooses alone, from its port and the
/// user's options, and the stream is then described to the receiver in SDP (`SessionDescription`).
///
/// Rules:
/// - sample format: the option, else **L16**, which every RTP receiver plays (RFC 3551); L24 and Opus only
///   when asked for. The port must support it.
/// - rate: the option (the port must run at it now), else 48000 Hz if the port can, else its first rate.
/// - channels: the option (at most the port's), else the port's, at most 2 for Opus.
/// - packet size, Opus settings and their limits: exactly as `Negotiation` checks them, with the same
///   refusals (an Opus stream at 48 kHz only, of 1 or 2 channels, one Opus frame per packet; packets within
///   the MTU budget).
/// - latency options (`--latency`, a range, `--sync`) are refused: they set a Tutti receiver's jitter
///   buffer, and a standard receiver has its own. The format keeps negotiation's default target, unused.
///
/// Pure: no I/O. Thread-safe: yes.
package enum StandardReceiverFormat {
    /// The sample format a standard receiver gets unless the user asks for another.
    package static let defaultSampleFormat = SampleFormat.l16

    /// Chooses the stream's format, or refuses in one line.
    ///
    /// - Parameters:
    ///   - port: the sender port (its channels and formats).
    ///   - currentRates: the rates the port can stream at now (only its running rate while it streams).
    package static func chooseFormat(
        source: PortReference, destination: RTPDestination, port: PortDescriptor, currentRates: [Int],
        options: ConnectOptions, defaults: NegotiationDefaults = NegotiationDefaults()
    ) -> Result<StreamFormat, NegotiationRefusal> {
        let receiverName = destination.portReference
        if options.latencyMilliseconds != nil || options.latencyFloorMilliseconds != nil
            || options.synchronizedLatencyMilliseconds != nil
        {
            return .failure(
                NegotiationRefusal(
                    .invalidOption,
                    "--latency and --sync set a Tutti receiver's buffer; \(receiverName) is a standard RTP receiver with its own, so leave them out"
                ))
        }
        let sampleFormat = options.sampleFormat ?? defaultSampleFormat
        guard port.sampleFormats.contains(sampleFormat) else {
            return .failure(
                NegotiationRefusal(
                    .noCommonFormat,
                    "\(source) does not send \(sampleFormat) (it sends \(port.sampleFormats.map(\.description).joined(separator: ", "))); choose one with --format"
                ))
        }
        let sampleRate =
            options.sampleRate
            ?? (currentRates.contains(OpusSettings.sampleRate) ? OpusSettings.sampleRate : currentRates.first ?? OpusSettings.sampleRate)
        let channels: Int
        if let requested = options.channels {
            guard requested <= port.channels else {
                return .failure(NegotiationRefusal(.invalidOption, "cannot stream \(requested) channels: \(source) has \(port.channels)"))
            }
            channels = requested
        } else {
            channels = sampleFormat == .opus ? min(port.channels, OpusSettings.supportedChannels.upperBound) : port.channels
        }
        // The receiver takes exactly this; negotiation's rules check the rest and word the refusals.
        let receiver = PortDescriptor(
            name: "rtp", title: "", kind: .receiver, channels: channels, sampleRates: [sampleRate], sampleFormats: [sampleFormat])
        var chosen = options
        chosen.sampleRate = sampleRate
        chosen.channels = channels
        chosen.sampleFormat = sampleFormat
        let proposal = Negotiation.Proposal(
            source: source, destination: receiverName, channels: port.channels, sampleRates: currentRates,
            sampleFormats: port.sampleFormats, options: chosen)
        return Negotiation.chooseFormat(proposal: proposal, receiver: ReceiverCapabilities(port: receiver), defaults: defaults)
    }
}
