// Why a capture file could not be read.

/// Why a capture file could not be read.
///
/// Thread-safe: a value.
package enum PacketCaptureError: Error, Equatable, Sendable {
    case notACaptureFile(magic: UInt32)
    case truncatedFile(offset: Int)
    case badBlockLength(offset: Int, length: UInt32)
    case unknownInterface(Int)
    case unreadableFile(String)
}
