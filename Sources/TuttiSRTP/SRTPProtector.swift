import CSRTP
import Synchronization
import TuttiCore

/// Encrypts and authenticates one stream's outgoing RTP packets (the sender's end of a members-only
/// session's stream). Each packet is copied into the protector's own buffer, which has room for the tag, and
/// protected there; nothing is allocated per packet.
///
/// Re-keying (`AEAD_AES_128_GCM` only): `stage(key:)` hands the stream's next key to the device thread, which
/// protects every packet from its next one on with it, carrying the stream's roll-over counter over. Stage it
/// only once the receiver holds the key too (it tries a staged key on a packet its current key does not open).
///
/// Thread rules: made, staged and freed on the control plane; `protect` on the device thread only; the
/// counters from any thread.
public final class SRTPProtector: @unchecked Sendable {
    /// The suite this stream is protected with (a staged key has the same).
    public let suite: SRTPSuite
    private let ssrc: UInt32
    /// The context the device thread protects with: its own reference, given back through `handoff` when a
    /// new key replaces it.
    private var current: Unmanaged<SRTPContext>
    private let handoff = SRTPContextHandoff()
    private let buffer: UnsafeMutableRawBufferPointer
    /// Keys switched to after the first.
    public let rekeys = Atomic<UInt64>(0)
    /// The index (roll-over counter × 65536 + sequence number) of the last packet protected: what a re-key
    /// tells the receiver, so that it need not guess the roll-over counter after a long silence.
    public let sentIndex = Atomic<UInt64>(0)

    /// - Throws: `SRTPError` when the crypto library refuses the key.
    public init(key: SRTPMasterKey, ssrc: UInt32) throws(SRTPError) {
        suite = key.suite
        self.ssrc = ssrc
        current = Unmanaged.passRetained(try SRTPContext(key: key, ssrc: ssrc, inbound: false, replayWindow: 0))
        buffer = .allocate(byteCount: StreamLimits.maxDatagramBytes + Int(SRTP_MAX_TRAILER_LEN), alignment: 16)
    }

    deinit {
        current.release()
        buffer.deallocate()
    }

    /// Hands the stream's next key to the device thread, which switches to it at its next packet. Control
    /// plane.
    /// - Throws: `SRTPError` when the key is of another suite, the suite cannot be re-keyed here (only
    ///   `AEAD_AES_128_GCM` can), or the crypto library refuses it.
    public func stage(key: SRTPMasterKey) throws(SRTPError) {
        try SRTPContext.checkRekeying(key, suite: suite)
        handoff.stage(try SRTPContext(key: key, ssrc: ssrc, inbound: false, replayWindow: 0))
    }

    /// Frees the contexts of keys the device thread has left behind (also done by the next `stage`). Control
    /// plane.
    public func reclaim() { handoff.reclaim() }

    /// `packet` as SRTP (valid until the next call), or nil when it is too large or the library refused it.
    /// Device thread only. Realtime-safe: yes.
    @inline(__always)
    public func protect(_ packet: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        guard packet.count >= 12, packet.count <= StreamLimits.maxDatagramBytes, let base = buffer.baseAddress else { return nil }
        if handoff.hasStaged, handoff.hasRoom, let next = handoff.take() {
            next._withUnsafeGuaranteedRef { next in current._withUnsafeGuaranteedRef { next.adopt(from: $0) } }
            _ = handoff.retire(current)
            current = next
            rekeys.add(1, ordering: .relaxed)
        }
        base.copyMemory(from: packet.baseAddress!, byteCount: packet.count)
        guard
            let length = current._withUnsafeGuaranteedRef({ context -> Int? in
                defer { sentIndex.store(context.sentIndex, ordering: .relaxed) }
                return context.protect(base, length: packet.count, capacity: buffer.count)
            })
        else { return nil }
        return UnsafeRawBufferPointer(start: base, count: length)
    }
}
