import TuttiCore

/// The fields of an RTP (RFC 3550) header that Tutti reads and writes, plus its capture-time extension.
///
/// Encoding and decoding live together in this type (`encodedSize`, `write(to:)`, `RTPPacketView.decode`).
/// Realtime-safe: yes, all of it (no allocation, no lock). Thread-safe: a value.
public struct RTPHeader: Hashable, Sendable {
    public var marker: Bool
    /// 7-bit payload type (dynamic types 96–127 are negotiated).
    public var payloadType: UInt8
    public var sequenceNumber: UInt16
    /// Media timestamp, counted in sample frames at the stream's rate.
    public var timestamp: UInt32
    public var ssrc: UInt32
    /// When the packet's first frame was captured, in nanoseconds on the stream's capture clock (see
    /// `CaptureTimeExtension`); `nil` when the packet carries no such extension.
    public var captureTime: Int64?

    @inlinable
    public init(
        marker: Bool = false, payloadType: UInt8, sequenceNumber: UInt16, timestamp: UInt32, ssrc: UInt32,
        captureTime: Int64? = nil
    ) {
        self.marker = marker
        self.payloadType = payloadType
        self.sequenceNumber = sequenceNumber
        self.timestamp = timestamp
        self.ssrc = ssrc
        self.captureTime = captureTime
    }

    /// The fixed header: version, flags, sequence, timestamp, SSRC.
    public static let fixedSize = 12

    /// Bytes `write(to:)` produces: the fixed header, plus 16 for the extension when `captureTime` is set.
    @inlinable public var encodedSize: Int {
        captureTime == nil ? Self.fixedSize : Self.fixedSize + CaptureTimeExtension.blockSize
    }

    /// Writes the header (and extension) at the start of `buffer`; the payload follows at `encodedSize`.
    ///
    /// - Returns: the number of bytes written, or `nil` when `buffer` is shorter than `encodedSize`.
    @inlinable
    public func write(to buffer: UnsafeMutableRawBufferPointer) -> Int? {
        let size = encodedSize
        guard buffer.count >= size, payloadType < 128 else { return nil }
        let hasExtension = captureTime != nil
        buffer[0] = 0x80 | (hasExtension ? 0x10 : 0)
        buffer[1] = (marker ? 0x80 : 0) | payloadType
        buffer.storeBigEndian(sequenceNumber, at: 2)
        buffer.storeBigEndian(timestamp, at: 4)
        buffer.storeBigEndian(ssrc, at: 8)
        if let captureTime {
            CaptureTimeExtension.write(captureTime, to: buffer, at: Self.fixedSize)
        }
        return size
    }
}

/// A decoded RTP packet: its header and where its payload lies in the bytes it was decoded from.
public struct RTPPacketView: Sendable {
    public var header: RTPHeader
    /// Offset of the payload from the start of the datagram.
    public var payloadOffset: Int
    /// Length of the payload in bytes (padding removed).
    public var payloadCount: Int

    /// Decodes one datagram.
    ///
    /// Accepts any valid RTP version 2 packet: CSRCs are skipped, padding removed, unknown RFC 8285
    /// extension elements skipped. Realtime-safe: yes.
    ///
    /// - Throws: `RTPDecodingError` for every malformed input (never traps).
    @inlinable
    public static func decode(_ bytes: UnsafeRawBufferPointer) throws(RTPDecodingError) -> RTPPacketView {
        guard bytes.count >= RTPHeader.fixedSize else { throw .truncated(needed: RTPHeader.fixedSize, got: bytes.count) }
        let first = bytes[0]
        let version = first >> 6
        guard version == 2 else { throw .unsupportedVersion(version) }
        let hasPadding = first & 0x20 != 0
        let hasExtension = first & 0x10 != 0
        let csrcCount = Int(first & 0x0F)
        let second = bytes[1]
        var header = RTPHeader(
            marker: second & 0x80 != 0, payloadType: second & 0x7F,
            sequenceNumber: bytes.loadBigEndian(UInt16.self, at: 2),
            timestamp: bytes.loadBigEndian(UInt32.self, at: 4),
            ssrc: bytes.loadBigEndian(UInt32.self, at: 8))

        var end = bytes.count
        if hasPadding {
            let padding = Int(bytes[end - 1])
            guard padding > 0, padding <= end - RTPHeader.fixedSize else { throw .invalidPadding(padding) }
            end -= padding
        }
        var offset = RTPHeader.fixedSize + 4 * csrcCount
        guard offset <= end else { throw .truncated(needed: offset, got: end) }

        if hasExtension {
            guard offset + 4 <= end else { throw .truncated(needed: offset + 4, got: end) }
            let profile = bytes.loadBigEndian(UInt16.self, at: offset)
            let words = Int(bytes.loadBigEndian(UInt16.self, at: offset + 2))
            let dataStart = offset + 4
            let dataEnd = dataStart + 4 * words
            guard dataEnd <= end else { throw .extensionLengthExceedsPacket(declaredBytes: 4 * words) }
            if profile == CaptureTimeExtension.oneByteProfile {
                header.captureTime = try CaptureTimeExtension.find(in: bytes, from: dataStart, to: dataEnd)
            }
            // Other profiles (e.g. RFC 8285 two-byte headers) carry nothing we use: skipped.
            offset = dataEnd
        }
        return RTPPacketView(header: header, payloadOffset: offset, payloadCount: end - offset)
    }

    @inlinable
    init(header: RTPHeader, payloadOffset: Int, payloadCount: Int) {
        self.header = header
        self.payloadOffset = payloadOffset
        self.payloadCount = payloadCount
    }
}
