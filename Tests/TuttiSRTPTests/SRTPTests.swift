import TuttiSRTP
import XCTest

/// SRTP through libsrtp2: a packet protected by one end opens at the other, once; anything altered, replayed,
/// keyed otherwise or cut short is refused and counted.
final class SRTPTests: XCTestCase {
    private let ssrc: UInt32 = 0x1234_5678

    /// An RTP packet: version 2, payload type 96, `sequence`, a timestamp, the SSRC and `payload`.
    private func packet(_ sequence: UInt16, payload: [UInt8] = Array(0..<192)) -> [UInt8] {
        let timestamp = UInt32(sequence) * 64
        return [0x80, 96, UInt8(sequence >> 8), UInt8(sequence & 0xFF)]
            + [UInt8(timestamp >> 24), UInt8(timestamp >> 16 & 0xFF), UInt8(timestamp >> 8 & 0xFF), UInt8(timestamp & 0xFF)]
            + [UInt8(ssrc >> 24), UInt8(ssrc >> 16 & 0xFF), UInt8(ssrc >> 8 & 0xFF), UInt8(ssrc & 0xFF)] + payload
    }

    private func protect(_ packet: [UInt8], with protector: SRTPProtector) throws -> [UInt8] {
        try packet.withUnsafeBytes { Array(try XCTUnwrap(protector.protect($0))) }
    }

    private func unprotect(_ datagram: [UInt8], with verifier: SRTPVerifier) -> [UInt8]? {
        datagram.withUnsafeBytes { verifier.unprotect($0).map { Array($0) } }
    }

    func testEverySuiteProtectsAndOpensOnceWithItsTag() throws {
        for suite in SRTPSuite.allCases {
            let key = SRTPMasterKey.random(suite)
            let protector = try SRTPProtector(key: key, ssrc: ssrc)
            let verifier = try SRTPVerifier(key: key, ssrc: ssrc)
            let plain = packet(1)
            let sealed = try protect(plain, with: protector)
            XCTAssertEqual(sealed.count, plain.count + suite.tagLength, suite.rawValue)
            XCTAssertEqual(Array(sealed.prefix(12)), Array(plain.prefix(12)), "the header stays in the clear")
            XCTAssertNotEqual(Array(sealed[12..<plain.count]), Array(plain[12...]), "the payload is encrypted")
            XCTAssertEqual(unprotect(sealed, with: verifier), plain, suite.rawValue)
            XCTAssertNil(unprotect(sealed, with: verifier), "the same packet again is a replay")
            XCTAssertEqual(verifier.replayed.load(ordering: .relaxed), 1)
            XCTAssertEqual(verifier.forged.load(ordering: .relaxed), 0)
        }
    }

    func testAlteredCutOrOtherwiseKeyedPacketsAreForged() throws {
        let key = SRTPMasterKey.random(.aeadAES128GCM)
        let protector = try SRTPProtector(key: key, ssrc: ssrc)
        let verifier = try SRTPVerifier(key: key, ssrc: ssrc)
        var altered = try protect(packet(1), with: protector)
        altered[40] ^= 1
        XCTAssertNil(unprotect(altered, with: verifier))
        var header = try protect(packet(2), with: protector)
        header[1] ^= 1  // the payload type: authenticated, though not encrypted
        XCTAssertNil(unprotect(header, with: verifier))
        XCTAssertNil(unprotect(Array(try protect(packet(3), with: protector).prefix(20)), with: verifier))
        let stranger = try SRTPProtector(key: SRTPMasterKey.random(.aeadAES128GCM), ssrc: ssrc)
        XCTAssertNil(unprotect(try protect(packet(4), with: stranger), with: verifier))
        XCTAssertNil(unprotect(packet(5), with: verifier), "plain RTP is not SRTP")
        XCTAssertEqual(verifier.forged.load(ordering: .relaxed), 5)
        // The real stream goes on: the next genuine packet opens.
        XCTAssertEqual(unprotect(try protect(packet(6), with: protector), with: verifier), packet(6))
    }

    func testLateAndReorderedPacketsInsideTheWindowOpenAndOlderOnesAreReplays() throws {
        let key = SRTPMasterKey.random(.aeadAES128GCM)
        let protector = try SRTPProtector(key: key, ssrc: ssrc)
        let verifier = try SRTPVerifier(key: key, ssrc: ssrc, replayWindow: 1_024)
        let sealed = try (0..<1_500).map { try protect(packet(UInt16($0)), with: protector) }
        XCTAssertNotNil(unprotect(sealed[0], with: verifier))
        XCTAssertNotNil(unprotect(sealed[1_400], with: verifier), "a packet far ahead opens")
        XCTAssertNotNil(unprotect(sealed[1_399], with: verifier), "and one just before it, late")
        XCTAssertNotNil(unprotect(sealed[500], with: verifier), "900 packets late, inside the window")
        XCTAssertNil(unprotect(sealed[300], with: verifier), "1100 packets late, outside it")
        XCTAssertEqual(verifier.replayed.load(ordering: .relaxed), 1)
    }

    func testAKeyOfTheWrongLengthIsNoKey() {
        XCTAssertNil(SRTPMasterKey(suite: .aeadAES128GCM, bytes: Array(repeating: 1, count: 30)))
        XCTAssertNotNil(SRTPMasterKey(suite: .aesCM128HMACSHA1Tag80, bytes: Array(repeating: 1, count: 30)))
        XCTAssertEqual("\(SRTPMasterKey.random(.aeadAES128GCM))", "SRTP AEAD_AES_128_GCM key")
    }
}
