import CSRTP
import TuttiSRTP
import XCTest

/// Tutti's AEAD_AES_128_GCM (CSRTPGCM, over OpenSSL) against libsrtp2's, the reference implementation:
/// every packet one protects, the other opens to the same bytes, across a sequence-number wrap (the
/// roll-over counter) and with a header extension and CSRCs in the authenticated header.
final class GCMInteropTests: XCTestCase {
    private let ssrc: UInt32 = 0x0BAD_CAFE

    /// A libsrtp2 GCM session of `key` for `ssrc` (inbound or outbound).
    private final class Reference {
        var session: srtp_t?
        init(key: SRTPMasterKey, ssrc: UInt32) {
            // libsrtp starts once per process (a second srtp_init fails): TuttiSRTP starts it with its first
            // libsrtp session.
            XCTAssertNotNil(try? SRTPProtector(key: SRTPMasterKey.random(.aesCM128HMACSHA1Tag80), ssrc: 1))
            var policy = srtp_policy_t()
            srtp_crypto_policy_set_aes_gcm_128_16_auth(&policy.rtp)
            srtp_crypto_policy_set_aes_gcm_128_16_auth(&policy.rtcp)
            policy.ssrc.type = ssrc_specific
            policy.ssrc.value = ssrc
            policy.window_size = 1024
            var bytes = key.bytes
            let status = bytes.withUnsafeMutableBufferPointer { buffer -> srtp_err_status_t in
                policy.key = buffer.baseAddress
                return srtp_create(&session, &policy)
            }
            XCTAssertEqual(status, srtp_err_status_ok)
        }
        deinit { if let session { srtp_dealloc(session) } }

        func protect(_ packet: [UInt8]) -> [UInt8]? {
            var buffer = packet + [UInt8](repeating: 0, count: 160)
            var length = Int32(packet.count)
            guard srtp_protect(session, &buffer, &length) == srtp_err_status_ok else { return nil }
            return Array(buffer.prefix(Int(length)))
        }

        func unprotect(_ datagram: [UInt8]) -> [UInt8]? {
            var buffer = datagram
            var length = Int32(datagram.count)
            guard srtp_unprotect(session, &buffer, &length) == srtp_err_status_ok else { return nil }
            return Array(buffer.prefix(Int(length)))
        }
    }

    /// An RTP packet with `csrcs` CSRCs and, when `extended`, a 12-byte RFC 8285 extension.
    private func packet(_ sequence: UInt16, csrcs: Int = 0, extended: Bool = true, payload: Int = 384) -> [UInt8] {
        var bytes: [UInt8] = [0x80 | (extended ? 0x10 : 0) | UInt8(csrcs), 96, UInt8(sequence >> 8), UInt8(sequence & 0xFF)]
        let timestamp = UInt32(sequence) &* 64
        bytes += [UInt8(timestamp >> 24), UInt8(timestamp >> 16 & 0xFF), UInt8(timestamp >> 8 & 0xFF), UInt8(timestamp & 0xFF)]
        bytes += [UInt8(ssrc >> 24), UInt8(ssrc >> 16 & 0xFF), UInt8(ssrc >> 8 & 0xFF), UInt8(ssrc & 0xFF)]
        for index in 0..<csrcs { bytes += [0, 0, 0, UInt8(index + 1)] }
        if extended { bytes += [0xBE, 0xDE, 0, 3] + (0..<12).map { UInt8($0 &* 7) } }
        return bytes + (0..<payload).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(sequence)) }
    }

    private func ours(_ packet: [UInt8], _ protector: SRTPProtector) -> [UInt8]? {
        packet.withUnsafeBytes { protector.protect($0).map { Array($0) } }
    }

    private func ours(_ datagram: [UInt8], _ verifier: SRTPVerifier) -> [UInt8]? {
        datagram.withUnsafeBytes { verifier.unprotect($0).map { Array($0) } }
    }

    func testLibsrtpOpensWhatTuttiProtectsAcrossASequenceWrap() throws {
        let key = SRTPMasterKey.random(.aeadAES128GCM)
        let protector = try SRTPProtector(key: key, ssrc: ssrc)
        let reference = Reference(key: key, ssrc: ssrc)
        for step in 0..<40 {
            let plain = packet(UInt16(truncatingIfNeeded: 65_520 + step), csrcs: step % 3, extended: step % 2 == 0)
            let sealed = try XCTUnwrap(ours(plain, protector), "step \(step)")
            XCTAssertEqual(sealed.count, plain.count + 16)
            XCTAssertEqual(reference.unprotect(sealed), plain, "libsrtp opens step \(step)")
        }
    }

    func testTuttiOpensWhatLibsrtpProtectsAcrossASequenceWrapOutOfOrder() throws {
        let key = SRTPMasterKey.random(.aeadAES128GCM)
        let verifier = try SRTPVerifier(key: key, ssrc: ssrc)
        let reference = Reference(key: key, ssrc: ssrc)
        var sealed: [(plain: [UInt8], datagram: [UInt8])] = []
        for step in 0..<40 {
            let plain = packet(UInt16(truncatingIfNeeded: 65_500 + step), csrcs: step % 2)
            sealed.append((plain, try XCTUnwrap(reference.protect(plain))))
        }
        // In order up to the wrap, then two swapped across it, then the rest.
        var order = Array(0..<40)
        order.swapAt(35, 36)
        order.swapAt(10, 12)
        for index in order {
            XCTAssertEqual(ours(sealed[index].datagram, verifier), sealed[index].plain, "Tutti opens packet \(index)")
        }
        XCTAssertEqual(verifier.forged.load(ordering: .relaxed), 0)
        XCTAssertNil(ours(sealed[20].datagram, verifier), "a replay")
        XCTAssertEqual(verifier.replayed.load(ordering: .relaxed), 1)
    }
}
