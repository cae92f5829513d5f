import CSRTP
import TuttiCore

/// Encrypts and authenticates one stream's outgoing RTP packets (the sender's end of a members-only
/// session's stream). Each packet is copied into the protector's own buffer, which has room for the tag, and
/// protected there; nothing is allocated per packet.
///
/// Thread rules: made and freed on the control plane; `protect` on the device thread only.
public final class SRTPProtector: @unchecked Sendable {
    private let context: SRTPContext
    private let buffer: UnsafeMutableRawBufferPointer

    /// - Throws: `SRTPError` when libsrtp refuses the key.
    public init(key: SRTPMasterKey, ssrc: UInt32) throws(SRTPError) {
        context = try SRTPContext(key: key, ssrc: ssrc, inbound: false, replayWindow: 0)
        buffer = .allocate(byteCount: StreamLimits.maxDatagramBytes + Int(SRTP_MAX_TRAILER_LEN), alignment: 16)
    }

    deinit { buffer.deallocate() }

    /// The suite this stream is protected with.
    public var suite: SRTPSuite { context.suite }

    /// `packet` as SRTP (valid until the next call), or nil when it is too large or libsrtp refused it.
    /// Device thread only. Realtime-safe: yes.
    @inline(__always)
    public func protect(_ packet: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        guard packet.count >= 12, packet.count <= StreamLimits.maxDatagramBytes, let base = buffer.baseAddress else { return nil }
        base.copyMemory(from: packet.baseAddress!, byteCount: packet.count)
        guard let length = context.protect(base, length: packet.count, capacity: buffer.count) else { return nil }
        return UnsafeRawBufferPointer(start: base, count: length)
    }
}
