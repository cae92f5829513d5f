import CSRTP
import Synchronization
import TuttiCore

/// Checks and decrypts one stream's incoming SRTP packets (the receiver's end): a packet that fails
/// authentication (forged, or altered) or that was seen before (replayed, or older than the replay window)
/// is counted and never reaches the jitter buffer. Nothing is allocated per packet.
///
/// Re-keying (`AEAD_AES_128_GCM` only): `stage(key:)` hands the stream's next key to the serving thread, which
/// tries it on a packet the current key does not open and switches to it at the first one it opens (the
/// sender's first packet under it). The key before stays for late packets until `retireAfter` packets have
/// opened under the new one. A packet neither key opens is forged, as before.
///
/// A stream back from a silence longer than 2^15 packets (44 s of 64-frame packets), where RFC 3711's guess
/// of the roll-over counter from sequence numbers fails, opens at once when the verifier knows the stream's
/// packet size (`packetFrames`): the counter is then taken from how far the RTP timestamp moved.
///
/// Thread rules: made, staged and freed on the control plane; `unprotect` on the stream's serving thread
/// only; the counters from any thread.
public final class SRTPVerifier: @unchecked Sendable {
    /// The suite this stream is protected with (a staged key has the same).
    public let suite: SRTPSuite
    private let ssrc: UInt32
    private let window: Int
    /// Frames per packet, by which RTP timestamps advance (0: unknown, no timestamp estimate).
    private let packetFrames: UInt32
    /// The serving thread's contexts, each its own reference (given back through `handoff`, never freed
    /// here): the current key's, the staged key not yet seen on a packet, and the key before the last switch.
    private var current: Unmanaged<SRTPContext>
    private var pending: Unmanaged<SRTPContext>?
    private var previous: Unmanaged<SRTPContext>?
    /// Packets opened under `current` since the last switch.
    private var openedSinceSwitch = 0
    private let handoff = SRTPContextHandoff()
    private let buffer: UnsafeMutableRawBufferPointer
    /// Packets that failed authentication.
    public let forged = Atomic<UInt64>(0)
    /// Packets seen before, or older than the replay window. A packet's index is checked before its tag (as
    /// libsrtp does), so a forged packet with such an index is counted here too.
    public let replayed = Atomic<UInt64>(0)
    /// Keys switched to after the first.
    public let rekeys = Atomic<UInt64>(0)

    /// The replay window Tutti's receivers use, in packets: more than a jitter buffer holds at its deepest
    /// (2 s of 64-frame packets at 96 kHz is 3000), so a late packet the buffer would still take is never
    /// taken for a replay.
    public static let replayWindow = 4_096
    /// Packets opened under a new key after which the key before it is dropped: a replay window's worth, so
    /// every late packet the window would take still opens.
    public static let retireAfter = replayWindow

    /// - Parameter packetFrames: the frames each packet's RTP timestamp advances by (a Tutti sender's packet
    ///   size), so a stream back from a long silence opens without waiting for a re-key; nil when unknown.
    /// - Throws: `SRTPError` when the crypto library refuses the key.
    public init(
        key: SRTPMasterKey, ssrc: UInt32, replayWindow: Int = SRTPVerifier.replayWindow, packetFrames: Int? = nil
    ) throws(SRTPError) {
        suite = key.suite
        self.ssrc = ssrc
        window = replayWindow
        self.packetFrames = UInt32(clamping: max(0, packetFrames ?? 0))
        current = Unmanaged.passRetained(try SRTPContext(key: key, ssrc: ssrc, inbound: true, replayWindow: replayWindow))
        buffer = .allocate(byteCount: StreamLimits.maxDatagramBytes + Int(SRTP_MAX_TRAILER_LEN), alignment: 16)
    }

    deinit {
        current.release()
        pending?.release()
        previous?.release()
        buffer.deallocate()
    }

    /// Hands the stream's next key to the serving thread (a key staged before and never seen on a packet is
    /// dropped). With `senderIndex` (the sender's `sentIndex` when it drew the key) the new key's context
    /// starts at the sender's position instead of taking the current one's, which may have lost count of the
    /// roll-over counter in a silence longer than 2^15 packets. Control plane.
    /// - Throws: `SRTPError` when the key is of another suite, the suite cannot be re-keyed here (only
    ///   `AEAD_AES_128_GCM` can), or the crypto library refuses it.
    public func stage(key: SRTPMasterKey, senderIndex: UInt64? = nil) throws(SRTPError) {
        try SRTPContext.checkRekeying(key, suite: suite)
        let context = try SRTPContext(key: key, ssrc: ssrc, inbound: true, replayWindow: window)
        if let senderIndex { context.place(at: senderIndex) }
        handoff.stage(context)
    }

    /// Frees the contexts of keys the serving thread has left behind (also done by the next `stage`). Control
    /// plane.
    public func reclaim() { handoff.reclaim() }

    /// `datagram`'s RTP packet, verified and decrypted (valid until the next call), or nil when it is forged,
    /// replayed or malformed (counted). Serving thread only. Realtime-safe: yes.
    @inline(__always)
    public func unprotect(_ datagram: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        guard datagram.count >= 12 + suite.tagLength, datagram.count <= StreamLimits.maxDatagramBytes, let base = buffer.baseAddress
        else {
            forged.add(1, ordering: .relaxed)
            return nil
        }
        if handoff.hasStaged, pending == nil || handoff.hasRoom {
            if let waiting = pending { _ = handoff.retire(waiting) }
            pending = handoff.take()
        }
        base.copyMemory(from: datagram.baseAddress!, byteCount: datagram.count)
        var verdict = current._withUnsafeGuaranteedRef { $0.unprotect(base, length: datagram.count) }
        if packetFrames > 0, verdict == .forged || verdict == .replayed, let again = reopenByTimestamp(datagram) {
            verdict = again
        }
        if case .verified(let length) = verdict {
            if let old = previous {
                openedSinceSwitch += 1
                if openedSinceSwitch >= Self.retireAfter, handoff.retire(old) { previous = nil }
            }
            return UnsafeRawBufferPointer(start: base, count: length)
        }
        // A packet the current key does not open, or takes for a replay (after a long silence its roll-over
        // counter guess can be wrong), may be the sender's first under the next key.
        if let next = pending,
            case .verified(let length) = open(
                datagram, with: next, carryingOn: next._withUnsafeGuaranteedRef { $0.placed } ? nil : current)
        {
            // The sender's first packet under the new key: switch, unless the key before the current one cannot
            // be given back yet (both mailboxes full), in which case the next packet tries again.
            if previous.map({ handoff.retire($0) }) ?? true {
                previous = current
                current = next
                pending = nil
                openedSinceSwitch = 0
                rekeys.add(1, ordering: .relaxed)
            }
            return UnsafeRawBufferPointer(start: base, count: length)
        }
        var replay = verdict == .replayed
        if let old = previous {
            switch open(datagram, with: old, carryingOn: nil) {
            case .verified(let length): return UnsafeRawBufferPointer(start: base, count: length)
            case .replayed: replay = true
            case .forged: break
            }
        }
        if replay { replayed.add(1, ordering: .relaxed) } else { forged.add(1, ordering: .relaxed) }
        return nil
    }

    /// `datagram` tried under the current key with the roll-over counter its timestamp points to, or nil when
    /// that is the counter already tried.
    @inline(__always)
    private func reopenByTimestamp(_ datagram: UnsafeRawBufferPointer) -> SRTPContext.Verdict? {
        guard let base = buffer.baseAddress else { return nil }
        base.copyMemory(from: datagram.baseAddress!, byteCount: datagram.count)
        return current._withUnsafeGuaranteedRef {
            $0.unprotect(base, length: datagram.count, byTimestampInPacketsOf: packetFrames)
        }
    }

    /// Tries `datagram` (copied into the buffer again: a failed attempt decrypts in place) under `context`,
    /// which first takes up `position`'s place in the stream when given.
    @inline(__always)
    private func open(
        _ datagram: UnsafeRawBufferPointer, with context: Unmanaged<SRTPContext>, carryingOn position: Unmanaged<SRTPContext>?
    ) -> SRTPContext.Verdict {
        guard let base = buffer.baseAddress else { return .forged }
        base.copyMemory(from: datagram.baseAddress!, byteCount: datagram.count)
        return context._withUnsafeGuaranteedRef { context in
            if let position { position._withUnsafeGuaranteedRef { context.adopt(from: $0) } }
            return context.unprotect(base, length: datagram.count)
        }
    }
}
