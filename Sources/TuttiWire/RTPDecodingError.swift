/// Why a datagram is not a valid RTP packet. Every case is counted by the receiver and the datagram dropped.
public enum RTPDecodingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Fewer bytes than the header (or a part it announces) needs.
    case truncated(needed: Int, got: Int)
    /// RTP version other than 2.
    case unsupportedVersion(UInt8)
    /// The padding count is zero or larger than the packet.
    case invalidPadding(Int)
    /// The extension header declares more bytes than the packet holds.
    case extensionLengthExceedsPacket(declaredBytes: Int)
    /// An RFC 8285 element runs past the end of the extension block.
    case extensionElementOverruns(id: UInt8)
    /// The capture-time element is not 8 bytes long.
    case badCaptureTimeLength(Int)

    public var description: String {
        switch self {
        case .truncated(let needed, let got): "truncated RTP packet: needs \(needed) bytes, has \(got)"
        case .unsupportedVersion(let version): "unsupported RTP version \(version) (expected 2)"
        case .invalidPadding(let count): "invalid RTP padding count \(count)"
        case .extensionLengthExceedsPacket(let bytes): "RTP header extension declares \(bytes) bytes past the packet end"
        case .extensionElementOverruns(let id): "RTP extension element \(id) overruns the extension block"
        case .badCaptureTimeLength(let length): "capture-time extension has \(length) bytes (expected 8)"
        }
    }
}
