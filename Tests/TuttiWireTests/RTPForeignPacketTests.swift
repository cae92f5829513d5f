import TuttiWire
import XCTest

/// Valid RTP packets that another implementation could send: CSRCs, padding, other extensions.
final class RTPForeignPacketTests: XCTestCase {
    func testCSRCsAreSkipped() throws {
        var packet = RawRTPPacket()
        packet.csrcs = [0x1111_1111, 0x2222_2222, 0xFFFF_FFFF]
        packet.marker = true
        let view = try XCTUnwrap(assertDecodes(packet.bytes))
        XCTAssertEqual(
            view.header,
            RTPHeader(marker: true, payloadType: 96, sequenceNumber: 0x1234, timestamp: 0x5678_9ABC, ssrc: 0xDEAD_BEEF))
        XCTAssertEqual(view.payloadOffset, 24)
        XCTAssertEqual(view.payloadCount, 5)
    }

    func testFifteenCSRCsAreSkipped() throws {
        var packet = RawRTPPacket()
        packet.csrcs = Array(1...15)
        let view = try XCTUnwrap(assertDecodes(packet.bytes))
        XCTAssertEqual(view.payloadOffset, 12 + 60)
        XCTAssertEqual(view.payloadCount, 5)
    }

    func testPaddingIsRemovedFromPayload() throws {
        var packet = RawRTPPacket()
        packet.padding = 3
        packet.csrcs = [7]
        let bytes = packet.bytes
        XCTAssertEqual(bytes.count, 12 + 4 + 5 + 3)
        let view = try XCTUnwrap(assertDecodes(bytes))
        XCTAssertEqual(view.payloadOffset, 16)
        XCTAssertEqual(view.payloadCount, 5)
        XCTAssertEqual(Array(bytes[view.payloadOffset..<(view.payloadOffset + view.payloadCount)]), [1, 2, 3, 4, 5])
    }

    func testPaddingMayFillEverythingAfterTheFixedHeader() throws {
        var packet = RawRTPPacket()
        packet.payload = []
        packet.padding = 4
        let view = try XCTUnwrap(assertDecodes(packet.bytes))
        XCTAssertEqual(view.payloadOffset, 12)
        XCTAssertEqual(view.payloadCount, 0)
    }

    func testTwoByteHeaderExtensionIsSkipped() throws {
        var packet = RawRTPPacket()
        // RFC 8285 two-byte header (0x100 in the top 12 bits): ID 1, length 8: would be a capture time if
        // misread as one-byte elements. Must be skipped, not interpreted.
        packet.extensionBlock = (0x1000, [0x01, 0x08, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0])
        let view = try XCTUnwrap(assertDecodes(packet.bytes))
        XCTAssertNil(view.header.captureTime)
        XCTAssertEqual(view.payloadOffset, 12 + 4 + 12)
        XCTAssertEqual(view.payloadCount, 5)
    }

    func testUnknownProfileExtensionIsSkippedEvenWithGarbage() throws {
        var packet = RawRTPPacket()
        packet.extensionBlock = (0x1234, [0x1F, 0xFF, 0xFF, 0xFF])  // would overrun if parsed as one-byte elements
        let view = try XCTUnwrap(assertDecodes(packet.bytes))
        XCTAssertNil(view.header.captureTime)
        XCTAssertEqual(view.payloadOffset, 20)
    }

    func testEmptyOneByteExtensionHasNoCaptureTime() throws {
        var packet = RawRTPPacket()
        packet.extensionBlock = (0xBEDE, [])
        let view = try XCTUnwrap(assertDecodes(packet.bytes))
        XCTAssertNil(view.header.captureTime)
        XCTAssertEqual(view.payloadOffset, 16)
    }

    func testCaptureTimeFoundAfterOtherElementsAndPadding() throws {
        var packet = RawRTPPacket()
        packet.csrcs = [42]
        packet.extensionBlock = (
            0xBEDE,
            [
                0x21, 0xAA, 0xBB,  // ID 2, 2 bytes
                0x00, 0x00,  // padding between elements
                0x50,  // ID 5, 1 byte
                0x77,
                0x17, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x85,  // ID 1, 8 bytes: -123
                0x00, 0x00, 0x00, 0x00,  // trailing padding to 5 words
            ]
        )
        XCTAssertEqual(packet.extensionBlock!.data.count, 20)
        let view = try XCTUnwrap(assertDecodes(packet.bytes))
        XCTAssertEqual(view.header.captureTime, -123)
        XCTAssertEqual(view.payloadOffset, 12 + 4 + 4 + 20)
        XCTAssertEqual(view.payloadCount, 5)
    }

    func testElementIDFifteenStopsParsing() throws {
        var packet = RawRTPPacket()
        packet.extensionBlock = (
            0xBEDE,
            [
                0x30, 0x01,  // ID 3, 1 byte
                0xF0,  // ID 15: stop
                0x17, 1, 2, 3, 4, 5, 6, 7, 8,  // after the stop: not parsed
                0x1F, 0x00, 0x00, 0x00,  // would be a bad capture-time length, never reached
            ]
        )
        XCTAssertEqual(packet.extensionBlock!.data.count % 4, 0)
        let view = try XCTUnwrap(assertDecodes(packet.bytes))
        XCTAssertNil(view.header.captureTime)
        XCTAssertEqual(view.payloadOffset, 12 + 4 + 16)
        XCTAssertEqual(view.payloadCount, 5)
    }

    func testExtensionWithCSRCsAndPaddingTogether() throws {
        var packet = RawRTPPacket()
        packet.csrcs = [1, 2]
        packet.extensionBlock = (0xBEDE, [0x17, 0, 0, 0, 0, 0, 0, 0x01, 0x00, 0, 0, 0])
        packet.payload = [0x10, 0x20, 0x30, 0x40]
        packet.padding = 8
        let view = try XCTUnwrap(assertDecodes(packet.bytes))
        XCTAssertEqual(view.header.captureTime, 256)
        XCTAssertEqual(view.payloadOffset, 12 + 8 + 16)
        XCTAssertEqual(view.payloadCount, 4)
    }
}
