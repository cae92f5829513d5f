import TuttiTesting
import TuttiWire
import XCTest

/// Tutti's own RTP header writer against its decoder.
final class RTPHeaderRoundTripTests: XCTestCase {
    func testHeaderWithoutCaptureTimeIsTwelveKnownBytes() throws {
        let header = RTPHeader(marker: true, payloadType: 97, sequenceNumber: 0xABCD, timestamp: 0x0102_0304, ssrc: 0xCAFE_F00D)
        XCTAssertEqual(header.encodedSize, 12)
        let bytes = encodeRTP(header, payload: [9, 8, 7])
        XCTAssertEqual(
            Array(bytes.prefix(12)),
            [0x80, 0x80 | 97, 0xAB, 0xCD, 0x01, 0x02, 0x03, 0x04, 0xCA, 0xFE, 0xF0, 0x0D])
        let view = try XCTUnwrap(assertDecodes(bytes))
        XCTAssertEqual(view.header, header)
        XCTAssertNil(view.header.captureTime)
        XCTAssertEqual(view.payloadOffset, 12)
        XCTAssertEqual(view.payloadCount, 3)
        XCTAssertEqual(Array(bytes[view.payloadOffset...]), [9, 8, 7])
    }

    func testHeaderWithCaptureTimeCarriesOneByteExtension() throws {
        let header = RTPHeader(
            payloadType: 96, sequenceNumber: 1, timestamp: 2, ssrc: 3, captureTime: 0x0102_0304_0506_0708)
        XCTAssertEqual(header.encodedSize, 28)
        let bytes = encodeRTP(header, payload: [0xAA, 0xBB])
        XCTAssertEqual(
            bytes,
            [
                0x90, 96, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3,  // fixed header, X bit set
                0xBE, 0xDE, 0x00, 0x03,  // one-byte profile, 3 words
                0x17, 1, 2, 3, 4, 5, 6, 7, 8,  // ID 1, length 8
                0, 0, 0,  // padding
                0xAA, 0xBB,
            ])
        let view = try XCTUnwrap(assertDecodes(bytes))
        XCTAssertEqual(view.header, header)
        XCTAssertEqual(view.payloadOffset, 28)
        XCTAssertEqual(view.payloadCount, 2)
    }

    func testNegativeCaptureTimeRoundTrips() throws {
        for captureTime in [Int64.min, -1, 0, 1, Int64.max] {
            let header = RTPHeader(payloadType: 127, sequenceNumber: 0, timestamp: 0, ssrc: 0, captureTime: captureTime)
            let view = try XCTUnwrap(assertDecodes(encodeRTP(header)))
            XCTAssertEqual(view.header.captureTime, captureTime)
            XCTAssertEqual(view.payloadCount, 0)
        }
    }

    func testSeededRandomHeadersRoundTrip() {
        var generator = SeededGenerator(seed: 0x5EED_0001)
        let sequenceExtremes: [UInt16] = [0, 1, 0x7FFF, 0x8000, 0xFFFE, 0xFFFF]
        let timestampExtremes: [UInt32] = [0, 1, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFE, 0xFFFF_FFFF]
        let ssrcExtremes: [UInt32] = [0, 0xFFFF_FFFF]
        var checked = 0
        for iteration in 0..<5_000 {
            // The first iterations walk every combination of extremes; the rest are random.
            let sequence = iteration < 72 ? sequenceExtremes[iteration % 6] : UInt16.random(in: .min ... .max, using: &generator)
            let timestamp = iteration < 72 ? timestampExtremes[(iteration / 6) % 6] : UInt32.random(in: .min ... .max, using: &generator)
            let ssrc = iteration < 72 ? ssrcExtremes[(iteration / 36) % 2] : UInt32.random(in: .min ... .max, using: &generator)
            let captureTime: Int64? = Bool.random(using: &generator) ? Int64.random(in: .min ... .max, using: &generator) : nil
            let header = RTPHeader(
                marker: Bool.random(using: &generator), payloadType: UInt8.random(in: 0...127, using: &generator),
                sequenceNumber: sequence, timestamp: timestamp, ssrc: ssrc, captureTime: captureTime)
            let payload = (0..<Int.random(in: 0...64, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let bytes = encodeRTP(header, payload: payload)
            guard let view = assertDecodes(bytes) else { return }
            XCTAssertEqual(view.header, header, "iteration \(iteration)")
            XCTAssertEqual(view.payloadOffset, header.encodedSize)
            XCTAssertEqual(Array(bytes[view.payloadOffset..<(view.payloadOffset + view.payloadCount)]), payload)
            checked += 1
        }
        XCTAssertEqual(checked, 5_000)
    }

    func testWriteRefusesShortBufferAndNonSevenBitPayloadType() {
        var small = [UInt8](repeating: 0, count: 27)
        let withExtension = RTPHeader(payloadType: 96, sequenceNumber: 0, timestamp: 0, ssrc: 0, captureTime: 5)
        XCTAssertNil(small.withUnsafeMutableBytes { withExtension.write(to: $0) })
        var exact = [UInt8](repeating: 0, count: 28)
        XCTAssertEqual(exact.withUnsafeMutableBytes { withExtension.write(to: $0) }, 28)

        var eleven = [UInt8](repeating: 0, count: 11)
        let plain = RTPHeader(payloadType: 96, sequenceNumber: 0, timestamp: 0, ssrc: 0)
        XCTAssertNil(eleven.withUnsafeMutableBytes { plain.write(to: $0) })

        var buffer = [UInt8](repeating: 0, count: 64)
        let badType = RTPHeader(payloadType: 128, sequenceNumber: 0, timestamp: 0, ssrc: 0)
        XCTAssertNil(buffer.withUnsafeMutableBytes { badType.write(to: $0) })
    }
}
