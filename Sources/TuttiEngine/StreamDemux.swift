import Synchronization
import TuttiCore
import TuttiIO
import TuttiSRTP
import TuttiStream

/// The receiving connections that share one media socket, told apart by the SSRC the receiver gave each
/// (every Tutti receiver picks its stream's SSRC in its answer, so it can make them unique). A stream of a
/// members-only session has an SRTP verifier: its datagrams reach it only verified and decrypted (the SSRC
/// is in the clear in SRTP too).
///
/// One socket per engine clock instead of one per connection: a period takes in every stream's packets
/// with one `recvmmsg` (up to its batch), not one per stream. A datagram whose SSRC belongs to no stream,
/// or that is not RTP at all, is counted in `strayDatagrams` and dropped; one that belongs to a stream but
/// came truncated is counted invalid on that stream.
///
/// The table is open-addressed with linear probing over `capacity` slots (twice the streams it holds, so
/// probes stay short). A slot's state is written by the control plane (`insert`, `remove`) and read by the
/// serving thread (`datagramHandler`); `remove` withdraws a stream, then waits until no handler call that
/// could still see it runs (`PacketReceiveLoop.waitForHandlers`), so the stream may be freed afterwards.
///
/// Thread rules: `insert`, `remove` on the control plane (one caller at a time: the peer); the handler on
/// the loop's serving thread (the engine clock's, or the JACK ports' network thread). Realtime-safe: the
/// handler (a few loads per datagram, no allocation, lock or log).
public final class StreamDemux: @unchecked Sendable {
    private enum SlotState: Int {
        case empty = 0
        case active = 1
        /// Was active: probes go past it; `insert` reuses it once no handler can still be reading it.
        case removed = 2
    }

    /// Streams the table holds at most.
    package let streamCapacity: Int
    private let slotCount: Int
    private let states: UnsafeMutablePointer<Atomic<Int>>
    private let ssrcs: UnsafeMutablePointer<UInt32>
    private let receivers: UnsafeMutablePointer<Unmanaged<StreamReceiver>?>
    /// Each stream's SRTP verifier, when it has one: a datagram reaches the stream only once verified.
    private let verifiers: UnsafeMutablePointer<Unmanaged<SRTPVerifier>?>
    private let stray = Atomic<UInt64>(0)
    private var streams = 0
    /// `streams`, for the serving thread.
    private let publishedStreams = Atomic<Int>(0)

    package init(streamCapacity: Int) {
        precondition(streamCapacity > 0)
        self.streamCapacity = streamCapacity
        var count = 1
        while count < 2 * streamCapacity { count <<= 1 }
        slotCount = count
        states = .allocate(capacity: count)
        for index in 0..<count { (states + index).initialize(to: Atomic(SlotState.empty.rawValue)) }
        ssrcs = .allocate(capacity: count)
        ssrcs.initialize(repeating: 0, count: count)
        receivers = .allocate(capacity: count)
        receivers.initialize(repeating: nil, count: count)
        verifiers = .allocate(capacity: count)
        verifiers.initialize(repeating: nil, count: count)
    }

    deinit {
        for index in 0..<slotCount {
            receivers[index]?.release()
            verifiers[index]?.release()
        }
        states.deinitialize(count: slotCount)
        states.deallocate()
        ssrcs.deallocate()
        receivers.deallocate()
        verifiers.deallocate()
    }

    /// Whether any stream is here: a period thread reads the socket every period only then. Any thread.
    package var carriesStreams: Bool { publishedStreams.load(ordering: .relaxed) > 0 }

    /// Datagrams that belonged to no stream here (an unknown SSRC, or not RTP): counted, dropped. Any thread.
    public var strayDatagrams: UInt64 { stray.load(ordering: .relaxed) }

    /// Where `ssrc`'s probe starts.
    @inline(__always)
    private func home(of ssrc: UInt32) -> Int { Int((ssrc &* 0x9E37_79B1) >> 7) & (slotCount - 1) }

    /// Delivers `receiver`'s stream (its `ssrc`) from now on, each datagram first through `verifier` when
    /// given (SRTP). Control plane.
    ///
    /// - Throws: `EngineError` when the SSRC is taken already or `streamCapacity` streams are here.
    package func insert(_ receiver: StreamReceiver, verifier: SRTPVerifier? = nil) throws(EngineError) {
        let ssrc = receiver.ssrc
        guard streams < streamCapacity else {
            throw EngineError("the media socket carries \(streamCapacity) streams already")
        }
        var index = home(of: ssrc)
        var free: Int?
        while true {
            let state = states[index].load(ordering: .acquiring)
            if state == SlotState.empty.rawValue {
                free = free ?? index
                break
            }
            if state == SlotState.active.rawValue, ssrcs[index] == ssrc {
                throw EngineError("SSRC \(ssrc) already names a stream on this media socket")
            }
            if state == SlotState.removed.rawValue, free == nil { free = index }
            index = (index + 1) & (slotCount - 1)
        }
        let slot = free!
        // A removed slot was drained by `remove` (no handler reads it any more): safe to rewrite.
        ssrcs[slot] = ssrc
        receivers[slot]?.release()
        receivers[slot] = .passRetained(receiver)
        verifiers[slot]?.release()
        verifiers[slot] = verifier.map { .passRetained($0) }
        states[slot].store(SlotState.active.rawValue, ordering: .sequentiallyConsistent)
        streams += 1
        publishedStreams.store(streams, ordering: .relaxed)
    }

    /// Stops delivering `receiver`'s stream; when it returns no handler call touches `receiver` any more.
    /// Returns `false` if it was not here. Control plane.
    @discardableResult
    package func remove(_ receiver: StreamReceiver, servedBy loop: PacketReceiveLoop) -> Bool {
        var index = home(of: receiver.ssrc)
        while states[index].load(ordering: .acquiring) != SlotState.empty.rawValue {
            if states[index].load(ordering: .acquiring) == SlotState.active.rawValue,
                receivers[index]?.takeUnretainedValue() === receiver
            {
                states[index].store(SlotState.removed.rawValue, ordering: .sequentiallyConsistent)
                loop.waitForHandlers()
                receivers[index]?.release()
                receivers[index] = nil
                verifiers[index]?.release()
                verifiers[index] = nil
                streams -= 1
                publishedStreams.store(streams, ordering: .relaxed)
                return true
            }
            index = (index + 1) & (slotCount - 1)
        }
        return false
    }

    /// The slot of the stream `ssrc` names, if any. Serving thread.
    @inline(__always)
    private func slot(for ssrc: UInt32) -> Int? {
        var index = home(of: ssrc)
        while true {
            let state = states[index].load(ordering: .sequentiallyConsistent)
            if state == SlotState.empty.rawValue { return nil }
            if state == SlotState.active.rawValue, ssrcs[index] == ssrc { return index }
            index = (index + 1) & (slotCount - 1)
        }
    }

    /// The loop's handler for the shared socket: `context` is the demux. Serving thread only.
    package static let datagramHandler: DatagramHandler = { context, bytes, length, arrival in
        Unmanaged<StreamDemux>.fromOpaque(context!)._withUnsafeGuaranteedRef { demux in
            // RTP: version 2 in the first byte's top bits, the SSRC in bytes 8–11 (network order).
            guard let bytes, length >= 12, bytes.load(as: UInt8.self) >> 6 == 2 else {
                demux.stray.add(1, ordering: .relaxed)
                return
            }
            let ssrc = UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt32.self))
            guard let slot = demux.slot(for: ssrc), let receiver = demux.receivers[slot] else {
                demux.stray.add(1, ordering: .relaxed)
                return
            }
            receiver._withUnsafeGuaranteedRef { receiver in
                guard length <= StreamLimits.maxDatagramBytes else {
                    receiver.countInvalidDatagram()
                    return
                }
                var datagram = UnsafeRawBufferPointer(start: bytes, count: length)
                if let verifier = demux.verifiers[slot] {
                    // Forged, replayed and cut packets are counted by the verifier and go no further.
                    guard let verified = verifier._withUnsafeGuaranteedRef({ $0.unprotect(datagram) }) else { return }
                    datagram = verified
                }
                receiver.accept(datagram: datagram, arrival: HostTime(nanoseconds: arrival))
            }
        }
    }
}
