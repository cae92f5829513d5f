import TuttiTesting
import TuttiWire
import XCTest

/// Every malformed datagram is rejected with its typed error, never a trap.
final class RTPMalformedInputTests: XCTestCase {
    func testEveryPrefixOfATuttiPacketIsRejectedOrShortensThePayload() {
        let header = RTPHeader(payloadType: 96, sequenceNumber: 7, timestamp: 9, ssrc: 11, captureTime: 1_000)
        let full = encodeRTP(header, payload: Array(0..<40))
        for length in 0..<full.count {
            let prefix = Array(full.prefix(length))
            switch length {
            case 0..<12:
                assertRejects(prefix, with: .truncated(needed: 12, got: length), "length \(length)")
            case 12..<16:
                assertRejects(prefix, with: .truncated(needed: 16, got: length), "length \(length)")
            case 16..<28:
                assertRejects(prefix, with: .extensionLengthExceedsPacket(declaredBytes: 12), "length \(length)")
            default:
                // A complete header with part of the payload is a valid (shorter) packet.
                guard let view = assertDecodes(prefix) else { continue }
                XCTAssertEqual(view.header, header)
                XCTAssertEqual(view.payloadOffset, 28)
                XCTAssertEqual(view.payloadCount, length - 28)
            }
        }
    }

    func testEveryPrefixOfAPacketWithCSRCsAndExtensionIsRejectedOrShortensThePayload() {
        var packet = RawRTPPacket()
        packet.csrcs = [1, 2, 3]
        packet.extensionBlock = (0x1000, [UInt8](repeating: 0xAB, count: 8))
        let full = packet.bytes
        XCTAssertEqual(packet.headerSize, 36)
        for length in 0..<full.count {
            let prefix = Array(full.prefix(length))
            switch length {
            case 0..<12: assertRejects(prefix, with: .truncated(needed: 12, got: length), "length \(length)")
            case 12..<24: assertRejects(prefix, with: .truncated(needed: 24, got: length), "length \(length)")
            case 24..<28: assertRejects(prefix, with: .truncated(needed: 28, got: length), "length \(length)")
            case 28..<36: assertRejects(prefix, with: .extensionLengthExceedsPacket(declaredBytes: 8), "length \(length)")
            default:
                guard let view = assertDecodes(prefix) else { continue }
                XCTAssertEqual(view.payloadOffset, 36)
                XCTAssertEqual(view.payloadCount, length - 36)
            }
        }
    }

    func testVersionsOtherThanTwoAreRejected() {
        for version: UInt8 in [0, 1, 3] {
            var packet = RawRTPPacket()
            packet.version = version
            assertRejects(packet.bytes, with: .unsupportedVersion(version))
        }
    }

    func testZeroPaddingCountIsRejected() {
        var packet = RawRTPPacket()
        packet.padding = 1
        packet.paddingCountOverride = 0
        assertRejects(packet.bytes, with: .invalidPadding(0))
    }

    func testPaddingLargerThanPacketIsRejected() {
        var packet = RawRTPPacket()
        packet.padding = 3
        packet.paddingCountOverride = 200
        assertRejects(packet.bytes, with: .invalidPadding(200))

        // One byte more than everything after the fixed header.
        var tight = RawRTPPacket()
        tight.payload = []
        tight.padding = 4
        tight.paddingCountOverride = 5
        assertRejects(tight.bytes, with: .invalidPadding(5))
    }

    func testPaddingEatingIntoCSRCsIsTruncation() {
        var packet = RawRTPPacket()
        packet.csrcs = [1, 2]
        packet.payload = []
        packet.padding = 2
        packet.paddingCountOverride = 8  // 22 bytes less 8 of padding leaves 14, the CSRCs need 20
        assertRejects(packet.bytes, with: .truncated(needed: 20, got: 14))
    }

    func testExtensionLengthBeyondPacketIsRejected() {
        var packet = RawRTPPacket()
        packet.extensionBlock = (0xBEDE, [0x17, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
        packet.extensionWordsOverride = 0xFFFF
        assertRejects(packet.bytes, with: .extensionLengthExceedsPacket(declaredBytes: 4 * 0xFFFF))

        // One word too many: the declared block would swallow the 5-byte payload and need 3 bytes more.
        packet.extensionWordsOverride = 5
        assertRejects(packet.bytes, with: .extensionLengthExceedsPacket(declaredBytes: 20))
    }

    func testExtensionHiddenByPaddingIsRejected() {
        var packet = RawRTPPacket()
        packet.extensionBlock = (0xBEDE, [0x17, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
        packet.payload = []
        packet.padding = 4
        packet.paddingCountOverride = 8  // padding would overlap the extension block
        assertRejects(packet.bytes, with: .extensionLengthExceedsPacket(declaredBytes: 12))
    }

    func testElementOverrunningTheBlockIsRejected() {
        var packet = RawRTPPacket()
        packet.extensionBlock = (0xBEDE, [0x23, 0xAA, 0xBB, 0xCC])  // ID 2 says 4 bytes, 3 remain
        assertRejects(packet.bytes, with: .extensionElementOverruns(id: 2))

        // The capture-time element itself cut short by the block end (the payload follows, but does not count).
        var cut = RawRTPPacket()
        cut.extensionBlock = (0xBEDE, [0x00, 0x00, 0x00, 0x17, 1, 2, 3, 4])
        assertRejects(cut.bytes, with: .extensionElementOverruns(id: 1))
    }

    func testCaptureTimeElementOfWrongLengthIsRejected() {
        for (byte, length) in [(UInt8(0x10), 1), (0x13, 4), (0x16, 7), (0x18, 9), (0x1F, 16)] {
            var packet = RawRTPPacket()
            packet.extensionBlock = (0xBEDE, [byte] + [UInt8](repeating: 0x55, count: 19))
            assertRejects(packet.bytes, with: .badCaptureTimeLength(length), "element byte \(byte)")
        }
    }

    /// Random datagrams (half of them biased to version 2) never trap, and the decoder agrees with a plain
    /// reading of RFC 3550 on every one: the same accept or reject, and for an accepted one the same header
    /// fields and the same payload position and length. (A packet with Tutti's one-byte extension profile
    /// can also be rejected for its elements, which the plain reading does not parse: those are only
    /// required not to trap.)
    func testSeededRandomBytesNeverTrapAndDecodeAsRFC3550Says() {
        var generator = SeededGenerator(seed: 0xF0F0_1234)
        var accepted = 0
        var rejected = 0
        for iteration in 0..<10_000 {
            let length = Int.random(in: 0...96, using: &generator)
            var bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            // Bias half of the inputs to version 2 so the decoder gets past the first check.
            if iteration % 2 == 0, !bytes.isEmpty { bytes[0] = 0x80 | (bytes[0] & 0x3F) }
            let reference = Self.referenceLayout(bytes)
            switch decodeRTP(bytes) {
            case .success(let view):
                accepted += 1
                guard let reference else {
                    XCTFail("input \(iteration) (\(bytes)): accepted, but RFC 3550 says malformed")
                    continue
                }
                XCTAssertEqual(view.payloadOffset, reference.offset, "input \(iteration)")
                XCTAssertEqual(view.payloadCount, reference.count, "input \(iteration)")
                XCTAssertEqual(view.header.sequenceNumber, UInt16(bytes[2]) << 8 | UInt16(bytes[3]), "input \(iteration)")
                XCTAssertEqual(view.header.ssrc, bytes[8..<12].reduce(0) { $0 << 8 | UInt32($1) }, "input \(iteration)")
            case .failure:
                rejected += 1
                if let reference, !reference.tuttiExtension {
                    XCTFail("input \(iteration) (\(bytes)): rejected, but RFC 3550 says well formed")
                }
            }
        }
        // The corpus must exercise both outcomes, or the loop proves nothing.
        XCTAssertGreaterThan(accepted, 100)
        XCTAssertGreaterThan(rejected, 100)
    }

    /// RFC 3550's layout of `bytes`, read the plain way: nil when malformed (too short, not version 2,
    /// padding longer than the packet, CSRCs or an extension past the end); else where the payload lies,
    /// and whether the extension is Tutti's one-byte profile (0xBEDE), whose elements are checked too.
    private static func referenceLayout(_ bytes: [UInt8]) -> (offset: Int, count: Int, tuttiExtension: Bool)? {
        guard bytes.count >= 12, bytes[0] >> 6 == 2 else { return nil }
        var end = bytes.count
        if bytes[0] & 0x20 != 0 {
            let padding = Int(bytes[end - 1])
            guard padding > 0, padding <= end - 12 else { return nil }
            end -= padding
        }
        var offset = 12 + 4 * Int(bytes[0] & 0x0F)
        guard offset <= end else { return nil }
        var tuttiExtension = false
        if bytes[0] & 0x10 != 0 {
            guard offset + 4 <= end else { return nil }
            tuttiExtension = bytes[offset] == 0xBE && bytes[offset + 1] == 0xDE
            offset += 4 + 4 * (Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3]))
            guard offset <= end else { return nil }
        }
        return (offset, end - offset, tuttiExtension)
    }

    func testSeededMutationsOfValidPacketsNeverTrap() {
        var generator = SeededGenerator(seed: 77)
        let base = encodeRTP(
            RTPHeader(payloadType: 96, sequenceNumber: 1, timestamp: 2, ssrc: 3, captureTime: 4), payload: Array(0..<32))
        var outcomes = Set<String>()
        for _ in 0..<10_000 {
            var bytes = base
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
            bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &generator)))
            switch decodeRTP(bytes) {
            case .success(let view):
                XCTAssertLessThanOrEqual(view.payloadOffset + view.payloadCount, bytes.count)
                outcomes.insert("ok")
            case .failure(let error):
                outcomes.insert(caseName(error))
            }
        }
        XCTAssertTrue(outcomes.isSuperset(of: ["ok", "truncated", "unsupportedVersion", "invalidPadding"]), "\(outcomes)")
    }

    private func caseName(_ error: RTPDecodingError) -> String {
        switch error {
        case .truncated: "truncated"
        case .unsupportedVersion: "unsupportedVersion"
        case .invalidPadding: "invalidPadding"
        case .extensionLengthExceedsPacket: "extensionLengthExceedsPacket"
        case .extensionElementOverruns: "extensionElementOverruns"
        case .badCaptureTimeLength: "badCaptureTimeLength"
        }
    }

    func testErrorDescriptionsNameTheProblem() {
        XCTAssertEqual(RTPDecodingError.truncated(needed: 12, got: 3).description, "truncated RTP packet: needs 12 bytes, has 3")
        XCTAssertEqual(RTPDecodingError.unsupportedVersion(1).description, "unsupported RTP version 1 (expected 2)")
        XCTAssertEqual(RTPDecodingError.badCaptureTimeLength(4).description, "capture-time extension has 4 bytes (expected 8)")
    }
}
