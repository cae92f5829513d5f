/// The SRTP protection profiles Tutti speaks (RFC 3711, RFC 7714). A value; thread-safe: yes.
public enum SRTPSuite: String, CaseIterable, Hashable, Sendable {
    /// AES-128 in Galois/Counter Mode with a 16-byte tag (RFC 7714): between Tutti peers.
    case aeadAES128GCM = "AEAD_AES_128_GCM"
    /// AES-128 in counter mode with HMAC-SHA1 cut to 80 bits (RFC 3711's default, and the `a=crypto` suite
    /// SDES receivers such as ffmpeg know): to standard RTP receivers.
    case aesCM128HMACSHA1Tag80 = "AES_CM_128_HMAC_SHA1_80"

    /// Bytes of the master key and master salt together.
    public var masterLength: Int {
        switch self {
        case .aeadAES128GCM: 16 + 12
        case .aesCM128HMACSHA1Tag80: 16 + 14
        }
    }

    /// Bytes `protect` adds to a packet (the authentication tag).
    public var tagLength: Int {
        switch self {
        case .aeadAES128GCM: 16
        case .aesCM128HMACSHA1Tag80: 10
        }
    }
}
