import TuttiCore

/// The RFC 8285 one-byte-header extension element that carries a packet's capture time.
///
/// Element ID 1, 8 data bytes: a signed 64-bit big-endian count of nanoseconds on the stream's capture
/// clock, which negotiation names (`CaptureClock`). The block written is 16 bytes: the 0xBEDE profile and
/// length word, the element (1 + 8 bytes) and 3 bytes of zero padding.
public enum CaptureTimeExtension {
    /// RFC 8285 profile marker for one-byte element headers.
    public static let oneByteProfile: UInt16 = 0xBEDE
    /// Element ID used for the capture time (IDs are local to a session; Tutti fixes it to 1).
    public static let elementID: UInt8 = 1
    /// Profile word + length word + 12 bytes of elements (9 used, 3 padding).
    public static let blockSize = 16

    @inlinable
    static func write(_ captureTime: Int64, to buffer: UnsafeMutableRawBufferPointer, at offset: Int) {
        buffer.storeBigEndian(oneByteProfile, at: offset)
        buffer.storeBigEndian(UInt16(3), at: offset + 2)
        buffer[offset + 4] = (elementID << 4) | 7  // L field is length - 1
        buffer.storeBigEndian(UInt64(bitPattern: captureTime), at: offset + 5)
        buffer[offset + 13] = 0
        buffer[offset + 14] = 0
        buffer[offset + 15] = 0
    }

    /// Walks one-byte elements in `start..<end`, returning the capture time if present.
    @inlinable
    static func find(in bytes: UnsafeRawBufferPointer, from start: Int, to end: Int) throws(RTPDecodingError) -> Int64? {
        var cursor = start
        var found: Int64?
        while cursor < end {
            let byte = bytes[cursor]
            if byte == 0 {  // padding between elements
                cursor += 1
                continue
            }
            let id = byte >> 4
            if id == 15 { break }  // reserved: stop parsing (RFC 8285 §4.2)
            let length = Int(byte & 0x0F) + 1
            guard cursor + 1 + length <= end else { throw .extensionElementOverruns(id: id) }
            if id == elementID {
                guard length == 8 else { throw .badCaptureTimeLength(length) }
                found = Int64(bitPattern: bytes.loadBigEndian(UInt64.self, at: cursor + 1))
            }
            cursor += 1 + length
        }
        return found
    }
}
