/// The on-the-wire format of a stream's audio: PCM (RFC 3551 L16, RFC 3190 L24: signed, big-endian,
/// interleaved) or Opus (RFC 7587: one Opus packet per RTP packet, 48 kHz RTP clock).
public enum SampleFormat: String, Sendable, Codable, CaseIterable, CustomStringConvertible {
    case l16 = "L16"
    case l24 = "L24"
    case opus = "OPUS"

    /// Bytes per sample of one channel (PCM); 0 for Opus, whose packets vary in size.
    @inlinable public var bytesPerSample: Int {
        switch self {
        case .l16: 2
        case .l24: 3
        case .opus: 0
        }
    }

    /// Whether the payload is PCM samples (fixed size) rather than a compressed packet.
    @inlinable public var isPCM: Bool { self != .opus }

    /// Accepts "L16", "l16", "16", "s16" and the 24-bit equivalents.
    public init?(loosely text: String) {
        switch text.lowercased() {
        case "l16", "16", "s16", "s16be": self = .l16
        case "l24", "24", "s24", "s24be": self = .l24
        case "opus": self = .opus
        default: return nil
        }
    }

    public var description: String { rawValue }
}
