import CSRTP

/// One libsrtp session for one stream direction (one SSRC, one master key), shared by `SRTPProtector` and
/// `SRTPVerifier`. libsrtp copies the key when the session is made and allocates nothing per packet.
///
/// Made and freed on the control plane; used by one data thread at a time.
final class SRTPContext {
    /// libsrtp is set up once per process, before the first session.
    private static let libraryStatus: srtp_err_status_t = srtp_init()

    let session: srtp_t
    let suite: SRTPSuite

    /// - Parameters:
    ///   - inbound: true for a receiver's session (it checks replays in a window of `replayWindow` packets).
    /// - Throws: `SRTPError` when libsrtp refuses the suite or the key.
    init(key: SRTPMasterKey, ssrc: UInt32, inbound: Bool, replayWindow: Int) throws(SRTPError) {
        guard Self.libraryStatus == srtp_err_status_ok else {
            throw SRTPError("libsrtp did not start (status \(Self.libraryStatus.rawValue))")
        }
        var policy = srtp_policy_t()
        switch key.suite {
        case .aeadAES128GCM:
            srtp_crypto_policy_set_aes_gcm_128_16_auth(&policy.rtp)
            srtp_crypto_policy_set_aes_gcm_128_16_auth(&policy.rtcp)
        case .aes128CMHMACSHA1_80:
            srtp_crypto_policy_set_rtp_default(&policy.rtp)
            srtp_crypto_policy_set_rtcp_default(&policy.rtcp)
        }
        policy.ssrc.type = ssrc_specific
        policy.ssrc.value = ssrc
        policy.window_size = UInt(inbound ? replayWindow : 128)
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
        session = created
        suite = key.suite
    }

    deinit { srtp_dealloc(session) }
}
