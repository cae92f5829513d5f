import CSRTP
import CSRTPGCM

/// One SRTP session for one stream direction (one SSRC, one master key), shared by `SRTPProtector` and
/// `SRTPVerifier`:
/// - `AEAD_AES_128_GCM` (between peers, on every members' packet) runs on OpenSSL's EVP with one cipher
///   context per stream (CSRTPGCM): nothing is allocated per packet. libsrtp2 as Debian builds it calls NSS,
///   whose `PK11_Encrypt` allocates twice per packet, which the audio threads must not do;
/// - `AES_CM_128_HMAC_SHA1_80` (streams to standard receivers, with `--srtp`) runs on libsrtp2, which is
///   also the reference the GCM code is tested against.
///
/// Made and freed on the control plane; used by one data thread at a time.
final class SRTPContext {
    /// libsrtp is set up once per process, before the first session.
    private static let libraryStatus: srtp_err_status_t = srtp_init()

    enum Session {
        case gcm(OpaquePointer)
        case libsrtp(srtp_t)
    }

    let session: Session
    let suite: SRTPSuite

    /// - Parameters:
    ///   - inbound: true for a receiver's session (it checks replays in a window of `replayWindow` packets).
    /// - Throws: `SRTPError` when the crypto library refuses the suite or the key.
    init(key: SRTPMasterKey, ssrc: UInt32, inbound: Bool, replayWindow: Int) throws(SRTPError) {
        suite = key.suite
        if key.suite == .aeadAES128GCM {
            guard
                let context = key.bytes.withUnsafeBufferPointer({
                    tutti_srtp_gcm_create($0.baseAddress, ssrc, UInt32(max(replayWindow, 64)))
                })
            else { throw SRTPError("OpenSSL refused the AEAD_AES_128_GCM session") }
            session = .gcm(context)
            return
        }
        guard Self.libraryStatus == srtp_err_status_ok else {
            throw SRTPError("libsrtp did not start (status \(Self.libraryStatus.rawValue))")
        }
        var policy = srtp_policy_t()
        srtp_crypto_policy_set_rtp_default(&policy.rtp)
        srtp_crypto_policy_set_rtcp_default(&policy.rtcp)
        policy.ssrc.type = ssrc_specific
        policy.ssrc.value = ssrc
        policy.window_size = UInt(inbound ? min(max(replayWindow, 64), 0x7FFF) : 128)
        policy.allow_repeat_tx = 0
        policy.next = nil
        var material = key.bytes
        var created: srtp_t?
        let status = material.withUnsafeMutableBufferPointer { buffer -> srtp_err_status_t in
            policy.key = buffer.baseAddress
            return srtp_create(&created, &policy)
        }
        // Not left in this process's heap longer than needed: libsrtp holds its own copy now.
        for index in material.indices { material[index] = 0 }
        guard status == srtp_err_status_ok, let created else {
            throw SRTPError("libsrtp refused the \(key.suite.rawValue) session (status \(status.rawValue))")
        }
        session = .libsrtp(created)
    }

    deinit {
        switch session {
        case .gcm(let context): tutti_srtp_gcm_free(context)
        case .libsrtp(let session): srtp_dealloc(session)
        }
    }

    /// Protects the packet of `length` bytes at `base` in place; the new length, or nil. Data thread.
    @inline(__always)
    func protect(_ base: UnsafeMutableRawPointer, length: Int, capacity: Int) -> Int? {
        switch session {
        case .gcm(let context):
            let protected = tutti_srtp_gcm_protect(context, base.assumingMemoryBound(to: UInt8.self), Int32(length), Int32(capacity))
            return protected < 0 ? nil : Int(protected)
        case .libsrtp(let session):
            var count = Int32(length)
            return srtp_protect(session, base, &count) == srtp_err_status_ok ? Int(count) : nil
        }
    }

    /// Takes up `other`'s place in the stream (roll-over counter, highest sequence, replay window, last sent):
    /// the packets that follow are protected or verified as `other` would have, under this context's key.
    /// Both are `AEAD_AES_128_GCM` contexts of one direction (`checkRekeying`); otherwise nothing happens.
    /// The data thread that uses `other`.
    @inline(__always)
    func adopt(from other: SRTPContext) {
        guard case .gcm(let context) = session, case .gcm(let source) = other.session else { return }
        tutti_srtp_gcm_adopt(context, source)
    }

    /// A sender's position: the index (roll-over counter × 65536 + sequence) of its last protected packet (0
    /// before the first; always 0 for libsrtp's suite). The data thread.
    @inline(__always)
    var sentIndex: UInt64 {
        guard case .gcm(let context) = session else { return 0 }
        return tutti_srtp_gcm_sent_index(context)
    }

    /// Places a fresh receiving context at the sender's `index` (see `tutti_srtp_gcm_place`). Before the
    /// context is shared.
    func place(at index: UInt64) {
        guard case .gcm(let context) = session else { return }
        tutti_srtp_gcm_place(context, index)
        placed = true
    }

    /// Whether `place` put the context at the sender's position (it then takes none from another context).
    private(set) var placed = false

    /// Throws unless a stream protected with `suite` can take `key` as its next key: the same suite, and one
    /// Tutti re-keys (`AEAD_AES_128_GCM`; a standard receiver's `AES_CM` key is fixed by its SDP).
    static func checkRekeying(_ key: SRTPMasterKey, suite: SRTPSuite) throws(SRTPError) {
        guard key.suite == suite else { throw SRTPError("a \(suite.rawValue) stream cannot take a \(key.suite.rawValue) key") }
        guard suite == .aeadAES128GCM else { throw SRTPError("a \(suite.rawValue) stream keeps its key (its SDP names it)") }
    }

    enum Verdict: Equatable {
        case verified(Int)
        case forged
        case replayed
    }

    /// Tries a packet `unprotect` refused once more, with the roll-over counter its RTP timestamp points to
    /// (`tutti_srtp_gcm_unprotect_by_timestamp`): a stream back from a silence longer than 2^15 packets. Nil
    /// when that is the counter already tried (nothing done), and always for libsrtp's suite. Data thread.
    @inline(__always)
    func unprotect(_ base: UnsafeMutableRawPointer, length: Int, byTimestampInPacketsOf frames: UInt32) -> Verdict? {
        guard case .gcm(let context) = session else { return nil }
        let result = tutti_srtp_gcm_unprotect_by_timestamp(
            context, base.assumingMemoryBound(to: UInt8.self), Int32(length), frames)
        return result >= 0 ? .verified(Int(result)) : result == -2 ? .replayed : result == -1 ? .forged : nil
    }

    /// Verifies and decrypts the packet of `length` bytes at `base` in place. Data thread.
    @inline(__always)
    func unprotect(_ base: UnsafeMutableRawPointer, length: Int) -> Verdict {
        switch session {
        case .gcm(let context):
            let result = tutti_srtp_gcm_unprotect(context, base.assumingMemoryBound(to: UInt8.self), Int32(length))
            return result >= 0 ? .verified(Int(result)) : result == -2 ? .replayed : .forged
        case .libsrtp(let session):
            var count = Int32(length)
            let status = srtp_unprotect(session, base, &count)
            if status == srtp_err_status_ok { return .verified(Int(count)) }
            return status == srtp_err_status_replay_fail || status == srtp_err_status_replay_old ? .replayed : .forged
        }
    }
}
