import Foundation
import Synchronization
import TuttiSRTP
import XCTest

/// The re-key hand-over across threads, as a running peer does it: one data thread protects and verifies a
/// stream without pause while the control plane stages new keys on both ends and frees what the data thread
/// left behind. Every packet opens, and under ThreadSanitizer (scripts/test) no access races.
final class RekeyConcurrencyTests: XCTestCase {
    private let ssrc: UInt32 = 0x5EED_0001

    /// What the data thread and the test share.
    private final class Counts: Sendable {
        let stop = Atomic<Bool>(false)
        let opened = Atomic<Int>(0)
        let refused = Atomic<Int>(0)
    }

    func testKeysStagedWhileTheDataThreadRunsLoseNoPacket() throws {
        let first = SRTPMasterKey.random(.aeadAES128GCM)
        let protector = try SRTPProtector(key: first, ssrc: ssrc)
        let verifier = try SRTPVerifier(key: first, ssrc: ssrc)
        let counts = Counts()
        let ssrc = self.ssrc
        let dataThread = Thread {
            var packet = [UInt8](repeating: 0, count: 12 + 384)
            packet[0] = 0x80
            packet[1] = 96
            for index in 0..<4 { packet[8 + index] = UInt8(truncatingIfNeeded: ssrc >> (24 - 8 * UInt32(index))) }
            var sequence: UInt16 = 65_000
            while !counts.stop.load(ordering: .relaxed) {
                packet[2] = UInt8(sequence >> 8)
                packet[3] = UInt8(sequence & 0xFF)
                packet[12] = UInt8(truncatingIfNeeded: sequence)
                let ok = packet.withUnsafeBytes { plain -> Bool in
                    guard let sealed = protector.protect(plain), let open = verifier.unprotect(sealed) else { return false }
                    return open.count == plain.count && open[12] == plain[12]
                }
                if ok { counts.opened.add(1, ordering: .relaxed) } else { counts.refused.add(1, ordering: .relaxed) }
                sequence &+= 1
            }
        }
        dataThread.start()
        let rounds = 40
        let deadline = Date().addingTimeInterval(20)  // a hand-over that never completes fails the counts below
        for round in 1...rounds where Date() < deadline {
            let next = SRTPMasterKey.random(.aeadAES128GCM)
            // The receiver first (it acknowledges), then the sender, as `Peer.rekey` does.
            try verifier.stage(key: next)
            try protector.stage(key: next)
            // The next re-key comes once this one has taken effect on the flowing stream, as a peer's do
            // (minutes apart): a key staged again before the receiver saw one packet under the last would drop
            // that key (`stage`), and with it the packets the sender already sealed under it. Waiting on the
            // switch, not on a fixed pause, keeps that out of a test run on a machine that stalls its threads
            // (a `make test` here once had the data thread held past a 2 ms pause: 1 packet refused).
            while verifier.rekeys.load(ordering: .relaxed) < UInt64(round), Date() < deadline {
                Thread.sleep(forTimeInterval: 0.0005)
            }
            verifier.reclaim()
            protector.reclaim()
        }
        Thread.sleep(forTimeInterval: 0.01)
        counts.stop.store(true, ordering: .relaxed)
        while !dataThread.isFinished { Thread.sleep(forTimeInterval: 0.001) }
        XCTAssertEqual(counts.refused.load(ordering: .relaxed), 0, "every packet opened")
        XCTAssertGreaterThan(counts.opened.load(ordering: .relaxed), 100)
        XCTAssertEqual(protector.rekeys.load(ordering: .relaxed), UInt64(rounds), "every key was sent under")
        XCTAssertEqual(verifier.rekeys.load(ordering: .relaxed), UInt64(rounds), "and switched to at the receiver")
        XCTAssertEqual(verifier.forged.load(ordering: .relaxed), 0)
    }
}
