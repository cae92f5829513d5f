/// Why Opus settings text could not be parsed, or why assembled settings are unusable. Control plane only;
/// `description` is one line meant for the user.
public enum OpusSettingsError: Error, Hashable, Sendable, CustomStringConvertible {
    case unparsableBitrate(String)
    case unparsableFrameDuration(String)
    /// A well-formed duration that is not 2.5, 5, 10 or 20 ms.
    case unsupportedFrameDuration(String)
    case unparsablePacketLoss(String)
    case unparsableApplication(String)
    case bitrateOutOfRange(Int)
    case complexityOutOfRange(Int)
    case packetLossOutOfRange(Int)
    /// Opus over RTP is mono or stereo.
    case unsupportedChannelCount(Int)
    /// In-band FEC needs the SILK layer: the `audio` or `voip` application with 10 or 20 ms frames.
    case inBandFECUnavailable(OpusSettings.FrameDuration, OpusSettings.Application)

    public var description: String {
        switch self {
        case .unparsableBitrate(let text):
            "bitrate '\(text)' is not a number of bits per second (try 96k or 128000)"
        case .unparsableFrameDuration(let text):
            "Opus frame duration '\(text)' is not a duration in milliseconds (try 2.5ms, 5ms, 10ms or 20ms)"
        case .unsupportedFrameDuration(let text):
            "Opus frame duration '\(text)' is not one of 2.5, 5, 10 or 20 ms"
        case .unparsablePacketLoss(let text):
            "expected packet loss '\(text)' is not a whole percentage (try 10 or 10%)"
        case .unparsableApplication(let text):
            "Opus application '\(text)' is not one of lowdelay, audio or voip"
        case .bitrateOutOfRange(let bitrate):
            "Opus bitrate \(bitrate) b/s is outside 6000…510000 b/s"
                + (OpusSettings.bitrateRange.contains(bitrate * 1_000) ? " (did you mean \(bitrate)k?)" : "")
        case .complexityOutOfRange(let complexity):
            "Opus complexity \(complexity) is outside 0…10"
        case .packetLossOutOfRange(let percent):
            "expected packet loss \(percent) % is outside 0…100 %"
        case .unsupportedChannelCount(let channels):
            "Opus streams have 1 or 2 channels, not \(channels)"
        case .inBandFECUnavailable(let duration, let application):
            "Opus in-band FEC needs the SILK layer: application audio or voip with 10 or 20 ms frames, not "
                + "\(application) with \(duration) frames"
        }
    }
}
