/// The on-the-wire sample format of a PCM stream (RFC 3551 L16, RFC 3190 L24): signed, big-endian, interleaved.
public enum SampleFormat: String, Sendable, Codable, CaseIterable, CustomStringConvertible {
    case l16 = "L16"
    case l24 = "L24"

    /// Bytes per sample of one channel.
    @inlinable public var bytesPerSample: Int {
        switch self {
        case .l16: 2
        case .l24: 3
        }
    }

    /// Accepts "L16", "l16", "16", "s16" and the 24-bit equivalents.
    public init?(loosely text: String) {
        switch text.lowercased() {
        case "l16", "16", "s16", "s16be": self = .l16
        case "l24", "24", "s24", "s24be": self = .l24
        default: return nil
        }
    }

    public var description: String { rawValue }
}
