import CSRTP
import Synchronization
import TuttiCore

/// Checks and decrypts one stream's incoming SRTP packets (the receiver's end): a packet that fails
/// authentication (forged, or altered) or that was seen before (replayed, or older than the replay window)
/// is counted and never reaches the jitter buffer. Nothing is allocated per packet.
///
/// Thread rules: made and freed on the control plane; `unprotect` on the stream's serving thread only; the
/// counters from any thread.
public final class SRTPVerifier: @unchecked Sendable {
    private let context: SRTPContext
    private let buffer: UnsafeMutableRawBufferPointer
    /// Packets that failed authentication.
    public let forged = Atomic<UInt64>(0)
    /// Packets seen before, or older than the replay window. A packet's index is checked before its tag (as
    /// libsrtp does), so a forged packet with such an index is counted here too.
    public let replayed = Atomic<UInt64>(0)

    /// The replay window Tutti's receivers use, in packets: more than a jitter buffer holds at its deepest
    /// (2 s of 64-frame packets at 96 kHz is 3000), so a late packet the buffer would still take is never
    /// taken for a replay.
    public static let replayWindow = 4_096

    /// - Throws: `SRTPError` when libsrtp refuses the key.
    public init(key: SRTPMasterKey, ssrc: UInt32, replayWindow: Int = SRTPVerifier.replayWindow) throws(SRTPError) {
        context = try SRTPContext(key: key, ssrc: ssrc, inbound: true, replayWindow: replayWindow)
        buffer = .allocate(byteCount: StreamLimits.maxDatagramBytes + Int(SRTP_MAX_TRAILER_LEN), alignment: 16)
    }

    deinit { buffer.deallocate() }

    /// The suite this stream is protected with.
    public var suite: SRTPSuite { context.suite }

    /// `datagram`'s RTP packet, verified and decrypted (valid until the next call), or nil when it is forged,
    /// replayed or malformed (counted). Serving thread only. Realtime-safe: yes.
    @inline(__always)
    public func unprotect(_ datagram: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        guard datagram.count >= 12 + context.suite.tagLength, datagram.count <= StreamLimits.maxDatagramBytes,
            let base = buffer.baseAddress
        else {
            forged.add(1, ordering: .relaxed)
            return nil
        }
        base.copyMemory(from: datagram.baseAddress!, byteCount: datagram.count)
        switch context.unprotect(base, length: datagram.count) {
        case .verified(let length): return UnsafeRawBufferPointer(start: base, count: length)
        case .replayed: replayed.add(1, ordering: .relaxed)
        case .forged: forged.add(1, ordering: .relaxed)
        }
        return nil
    }
}
