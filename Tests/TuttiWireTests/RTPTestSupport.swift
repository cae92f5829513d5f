import TuttiWire
import XCTest

/// Decodes `bytes` as one datagram, capturing the typed error.
func decodeRTP(_ bytes: [UInt8]) -> Result<RTPPacketView, RTPDecodingError> {
    bytes.withUnsafeBytes { raw in
        Result { () throws(RTPDecodingError) -> RTPPacketView in try RTPPacketView.decode(raw) }
    }
}

/// Writes `header` followed by `payload` the way Tutti does, returning the datagram.
func encodeRTP(_ header: RTPHeader, payload: [UInt8] = []) -> [UInt8] {
    var bytes = [UInt8](repeating: 0xEE, count: header.encodedSize + payload.count)
    let written = bytes.withUnsafeMutableBytes { header.write(to: $0) }
    XCTAssertEqual(written, header.encodedSize)
    bytes.replaceSubrange(header.encodedSize..., with: payload)
    return bytes
}

/// Asserts that decoding `bytes` fails with exactly `expected`.
func assertRejects(
    _ bytes: [UInt8], with expected: RTPDecodingError, _ message: @autoclosure () -> String = "",
    file: StaticString = #filePath, line: UInt = #line
) {
    switch decodeRTP(bytes) {
    case .success(let view):
        XCTFail("decoded \(view.header) from a malformed packet, expected \(expected). \(message())", file: file, line: line)
    case .failure(let error):
        XCTAssertEqual(error, expected, message(), file: file, line: line)
    }
}

/// Decodes `bytes`, failing the test (and returning nil) on an error.
func assertDecodes(_ bytes: [UInt8], file: StaticString = #filePath, line: UInt = #line) -> RTPPacketView? {
    switch decodeRTP(bytes) {
    case .success(let view): return view
    case .failure(let error):
        XCTFail("unexpected decoding error \(error)", file: file, line: line)
        return nil
    }
}

/// Builds RTP datagrams field by field, including the parts Tutti never writes (CSRCs, padding, foreign
/// extensions), to feed the decoder packets from other implementations.
struct RawRTPPacket {
    var version: UInt8 = 2
    var marker = false
    var payloadType: UInt8 = 96
    var sequenceNumber: UInt16 = 0x1234
    var timestamp: UInt32 = 0x5678_9ABC
    var ssrc: UInt32 = 0xDEAD_BEEF
    var csrcs: [UInt32] = []
    /// Extension profile and its data (a whole number of 32-bit words unless a test wants otherwise).
    var extensionBlock: (profile: UInt16, data: [UInt8])?
    /// Overrides the extension length field (in words); by default `data.count / 4`.
    var extensionWordsOverride: UInt16?
    var payload: [UInt8] = [1, 2, 3, 4, 5]
    /// Padding bytes appended (the last one holds the count); 0 means no padding bit.
    var padding = 0
    /// Overrides the final padding-count byte.
    var paddingCountOverride: UInt8?

    var bytes: [UInt8] {
        var out: [UInt8] = []
        let first = version << 6 | (padding > 0 ? 0x20 : 0) | (extensionBlock != nil ? 0x10 : 0) | UInt8(csrcs.count)
        out.append(first)
        out.append((marker ? 0x80 : 0) | payloadType)
        out += bigEndian(sequenceNumber)
        out += bigEndian(timestamp)
        out += bigEndian(ssrc)
        for csrc in csrcs { out += bigEndian(csrc) }
        if let (profile, data) = extensionBlock {
            out += bigEndian(profile)
            out += bigEndian(extensionWordsOverride ?? UInt16(data.count / 4))
            out += data
        }
        out += payload
        if padding > 0 {
            out += [UInt8](repeating: 0, count: padding - 1)
            out.append(paddingCountOverride ?? UInt8(padding))
        }
        return out
    }

    /// Bytes before the payload.
    var headerSize: Int { 12 + 4 * csrcs.count + (extensionBlock.map { 4 + $0.data.count } ?? 0) }
}

func bigEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
    (0..<(T.bitWidth / 8)).reversed().map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) }
}
