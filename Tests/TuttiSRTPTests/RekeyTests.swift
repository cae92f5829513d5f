import TuttiSRTP
import XCTest

/// A live stream's SRTP key replaced without a lost packet: the receiver holds the next key before the sender
/// switches, opens every packet of either key in any order around the switch, carries the roll-over counter
/// over, and still refuses replays and forgeries.
final class RekeyTests: XCTestCase {
    private let ssrc: UInt32 = 0x0BAD_CAFE

    private func packet(_ sequence: UInt16, timestamp: UInt32 = 0) -> [UInt8] {
        [0x80, 96, UInt8(sequence >> 8), UInt8(sequence & 0xFF)]
            + [UInt8(timestamp >> 24), UInt8(timestamp >> 16 & 0xFF), UInt8(timestamp >> 8 & 0xFF), UInt8(timestamp & 0xFF)]
            + [UInt8(ssrc >> 24), UInt8(ssrc >> 16 & 0xFF), UInt8(ssrc >> 8 & 0xFF), UInt8(ssrc & 0xFF)]
            + (0..<192).map { UInt8(truncatingIfNeeded: Int(sequence) &+ $0) }
    }

    private func protect(_ sequence: UInt16, _ protector: SRTPProtector) throws -> [UInt8] {
        try packet(sequence).withUnsafeBytes { Array(try XCTUnwrap(protector.protect($0))) }
    }

    private func opens(_ datagram: [UInt8], _ verifier: SRTPVerifier, as sequence: UInt16) -> Bool {
        datagram.withUnsafeBytes { verifier.unprotect($0).map { Array($0) } } == packet(sequence)
    }

    /// Sends `count` packets from `sequence` on (moving it on); each must open, once.
    private func streamOpening(_ count: Int, from sequence: inout UInt16, _ protector: SRTPProtector, _ verifier: SRTPVerifier) throws {
        for _ in 0..<count {
            XCTAssertTrue(opens(try protect(sequence, protector), verifier, as: sequence), "\(sequence)")
            sequence &+= 1
        }
    }

    private func counts(_ verifier: SRTPVerifier) -> [UInt64] {
        [
            verifier.forged.load(ordering: .relaxed), verifier.replayed.load(ordering: .relaxed),
            verifier.rekeys.load(ordering: .relaxed),
        ]
    }

    func testEveryPacketAroundASwitchOpensInAnyOrderAndOnlyOnce() throws {
        let first = SRTPMasterKey.random(.aeadAES128GCM)
        let protector = try SRTPProtector(key: first, ssrc: ssrc)
        let verifier = try SRTPVerifier(key: first, ssrc: ssrc)
        for sequence in UInt16(0)..<100 { XCTAssertTrue(opens(try protect(sequence, protector), verifier, as: sequence)) }
        let next = SRTPMasterKey.random(.aeadAES128GCM)
        try verifier.stage(key: next)
        // In flight under the first key while the receiver already holds the next one.
        let late = try (UInt16(100)..<104).map { try protect($0, protector) }
        try protector.stage(key: next)
        let switched = try (UInt16(104)..<110).map { try protect($0, protector) }
        XCTAssertEqual(protector.rekeys.load(ordering: .relaxed), 1)
        XCTAssertTrue(opens(late[0], verifier, as: 100), "the first key still opens before the switch")
        XCTAssertTrue(opens(switched[1], verifier, as: 105), "the first packet under the next key switches")
        XCTAssertTrue(opens(switched[0], verifier, as: 104), "one reordered just before it")
        XCTAssertTrue(opens(late[2], verifier, as: 102), "a late packet under the first key still opens")
        XCTAssertTrue(opens(late[1], verifier, as: 101))
        for (offset, datagram) in switched.enumerated().dropFirst(2) {
            XCTAssertTrue(opens(datagram, verifier, as: 104 + UInt16(offset)))
        }
        XCTAssertTrue(opens(late[3], verifier, as: 103))
        XCTAssertEqual(counts(verifier), [0, 0, 1], "forged, replayed, rekeys")
        XCTAssertFalse(opens(switched[3], verifier, as: 107), "a replay under the next key")
        XCTAssertFalse(opens(late[1], verifier, as: 101), "a replay under the first key")
        XCTAssertEqual(verifier.replayed.load(ordering: .relaxed), 2)
        let stranger = try SRTPProtector(key: SRTPMasterKey.random(.aeadAES128GCM), ssrc: ssrc)
        XCTAssertFalse(opens(try protect(200, stranger), verifier, as: 200), "a third key is forged")
        XCTAssertEqual(verifier.forged.load(ordering: .relaxed), 1)
    }

    func testTheRollOverCounterCarriesOverAcrossASequenceWrap() throws {
        let first = SRTPMasterKey.random(.aeadAES128GCM)
        let protector = try SRTPProtector(key: first, ssrc: ssrc)
        let verifier = try SRTPVerifier(key: first, ssrc: ssrc)
        var sequence: UInt16 = 65_500
        try streamOpening(100, from: &sequence, protector, verifier)
        // Now in the second roll-over: a fresh context would start from counter 0 and open nothing.
        let next = SRTPMasterKey.random(.aeadAES128GCM)
        try verifier.stage(key: next)
        try protector.stage(key: next)
        try streamOpening(100, from: &sequence, protector, verifier)
        XCTAssertEqual(counts(verifier), [0, 0, 1])
    }

    func testAStreamBackFromASilenceLongerThanHalfTheSequenceSpaceOpensUnderAKeyPlacedAtTheSender() throws {
        let first = SRTPMasterKey.random(.aeadAES128GCM)
        let protector = try SRTPProtector(key: first, ssrc: ssrc)
        let verifier = try SRTPVerifier(key: first, ssrc: ssrc)
        var sequence: UInt16 = 65_500
        try streamOpening(100, from: &sequence, protector, verifier)
        // 40,000 packets (53 s of 64-frame packets) that never arrive: the link is down.
        for _ in 0..<40_000 {
            _ = try protect(sequence, protector)
            sequence &+= 1
        }
        // RFC 3711's guess of the roll-over counter is now wrong: what arrives looks like old packets.
        XCTAssertFalse(opens(try protect(sequence, protector), verifier, as: sequence))
        sequence &+= 1
        XCTAssertEqual(counts(verifier), [0, 1, 0])
        XCTAssertEqual(protector.sentIndex.load(ordering: .relaxed), 65_536 + UInt64(sequence) - 1)

        // The re-key after the silence tells the receiver where the sender is.
        let next = SRTPMasterKey.random(.aeadAES128GCM)
        try verifier.stage(key: next, senderIndex: protector.sentIndex.load(ordering: .relaxed))
        XCTAssertFalse(opens(try protect(sequence, protector), verifier, as: sequence), "still under the lost key")
        sequence &+= 1
        try protector.stage(key: next)
        try streamOpening(100, from: &sequence, protector, verifier)
        XCTAssertEqual(counts(verifier), [0, 2, 1])
    }

    func testAStreamBackFromALongSilenceOpensAtOnceWhenTheVerifierKnowsThePacketSize() throws {
        let key = SRTPMasterKey.random(.aeadAES128GCM)
        let protector = try SRTPProtector(key: key, ssrc: ssrc)
        let verifier = try SRTPVerifier(key: key, ssrc: ssrc, packetFrames: 64)
        // Packet n: sequence n mod 2^16, timestamp 64 n (mod 2^32), as a Tutti sender of 64-frame packets.
        func sent(_ n: Int) throws -> (datagram: [UInt8], plain: [UInt8]) {
            let plain = packet(UInt16(truncatingIfNeeded: n), timestamp: UInt32(truncatingIfNeeded: 64 * n))
            return (try plain.withUnsafeBytes { Array(try XCTUnwrap(protector.protect($0))) }, plain)
        }
        func opens(_ n: Int) throws -> Bool {
            let (datagram, plain) = try sent(n)
            return datagram.withUnsafeBytes { verifier.unprotect($0).map { Array($0) } } == plain
        }
        for n in 65_500..<65_600 { XCTAssertTrue(try opens(n), "\(n)") }
        // Silences of 40,000 packets (more than 2^15: RFC 3711's guess is wrong) and of 200,000 (three
        // roll-overs): nothing arrives, then the stream opens again at its first packet.
        var n = 65_600
        var heldBack: [UInt8] = []
        for silence in [40_000, 200_000] {
            heldBack = try sent(n).datagram  // the silence's first packet, delivered only at the end
            n += 1
            for _ in 1..<silence {
                _ = try sent(n)
                n += 1
            }
            for _ in 0..<50 {
                XCTAssertTrue(try opens(n), "\(n) after \(silence)")
                n += 1
            }
        }
        // Older than the replay window now: refused, as a replay. So is the newest packet sent again, and a
        // forgery whose timestamp points far ahead opens nothing.
        XCTAssertNil(heldBack.withUnsafeBytes { verifier.unprotect($0) })
        let newest = try sent(n)
        XCTAssertEqual(newest.datagram.withUnsafeBytes { verifier.unprotect($0).map { Array($0) } }, newest.plain)
        XCTAssertNil(newest.datagram.withUnsafeBytes { verifier.unprotect($0) })
        var forgery = try sent(n + 1).datagram
        forgery[4] ^= 0x02
        XCTAssertNil(forgery.withUnsafeBytes { verifier.unprotect($0) })
        n += 2
        XCTAssertTrue(try opens(n), "the stream goes on after them")
        XCTAssertEqual(counts(verifier), [1, 2, 0])
    }

    func testTheNewestStagedKeyWinsAndAKeyNeverUsedIsDropped() throws {
        let first = SRTPMasterKey.random(.aeadAES128GCM)
        let protector = try SRTPProtector(key: first, ssrc: ssrc)
        let verifier = try SRTPVerifier(key: first, ssrc: ssrc)
        XCTAssertTrue(opens(try protect(1, protector), verifier, as: 1))
        // The sender's first re-key was never confirmed: it staged nothing, and offers another key.
        try verifier.stage(key: SRTPMasterKey.random(.aeadAES128GCM))
        XCTAssertTrue(opens(try protect(2, protector), verifier, as: 2), "the pending key takes up the stream")
        let second = SRTPMasterKey.random(.aeadAES128GCM)
        try verifier.stage(key: second)
        try protector.stage(key: second)
        for sequence in UInt16(3)..<10 { XCTAssertTrue(opens(try protect(sequence, protector), verifier, as: sequence)) }
        XCTAssertEqual(counts(verifier), [0, 0, 1])
        verifier.reclaim()
        protector.reclaim()
    }

    func testManySwitchesInARowLoseNothing() throws {
        var key = SRTPMasterKey.random(.aeadAES128GCM)
        let protector = try SRTPProtector(key: key, ssrc: ssrc)
        let verifier = try SRTPVerifier(key: key, ssrc: ssrc, replayWindow: 64)
        var sequence: UInt16 = 0
        for round in 1...20 {
            for _ in 0..<(round % 3 == 0 ? 70 : 3) {
                XCTAssertTrue(opens(try protect(sequence, protector), verifier, as: sequence), "round \(round)")
                sequence &+= 1
            }
            key = SRTPMasterKey.random(.aeadAES128GCM)
            try verifier.stage(key: key)
            try protector.stage(key: key)
        }
        XCTAssertTrue(opens(try protect(sequence, protector), verifier, as: sequence))
        XCTAssertEqual(counts(verifier), [0, 0, 20])
        XCTAssertEqual(protector.rekeys.load(ordering: .relaxed), 20)
    }

    func testOnlyAGCMStreamTakesANextKeyOfItsOwnSuite() throws {
        let gcm = try SRTPProtector(key: SRTPMasterKey.random(.aeadAES128GCM), ssrc: ssrc)
        XCTAssertThrowsError(try gcm.stage(key: SRTPMasterKey.random(.aesCM128HMACSHA1Tag80)))
        let standard = try SRTPVerifier(key: SRTPMasterKey.random(.aesCM128HMACSHA1Tag80), ssrc: ssrc)
        XCTAssertThrowsError(try standard.stage(key: SRTPMasterKey.random(.aesCM128HMACSHA1Tag80))) {
            XCTAssertEqual("\($0)", "a AES_CM_128_HMAC_SHA1_80 stream keeps its key (its SDP names it)")
        }
    }
}
