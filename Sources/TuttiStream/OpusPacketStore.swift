import TuttiCodec
import TuttiCore

/// The Opus side of a jitter buffer: each slot's packet as it came, decoded only when the play head reaches
/// it, in stream order, so that the decoder's loss concealment and in-band FEC follow the stream.
///
/// Realtime-safe: every method after `init` (no allocation, lock or log; libopus decodes into the caller's
/// buffer). Thread-safe: no (the jitter buffer's owner thread).
struct OpusPacketStore: ~Copyable {
    private var decoder: OpusDecoder
    private let maxPayloadBytes: Int
    private let payloads: UnsafeMutableRawBufferPointer
    private let payloadCounts: UnsafeMutableBufferPointer<Int>
    /// Which packet (extended timestamp) each slot's samples hold: decoded, recovered or concealed; `Int64.min`: none.
    private let decoded: UnsafeMutableBufferPointer<Int64>

    /// What `decode` put in the slot's samples.
    enum Outcome {
        case decoded
        /// Recovered from the next packet's in-band FEC.
        case recovered
        /// The decoder's concealment (or silence, if even that failed).
        case concealed
        /// The packet did not arrive and the buffer is not playing: nothing done.
        case nothing
    }

    /// Allocates room for `capacity` packets of `format`. Control plane.
    init(format: StreamFormat, capacity: Int) {
        do throws(OpusError) {
            decoder = try OpusDecoder(channels: format.channels)
        } catch {
            preconditionFailure("an Opus stream has 1 or 2 channels (negotiation checks): \(error)")
        }
        maxPayloadBytes = format.payloadBytes
        payloads = .allocate(byteCount: capacity * format.payloadBytes, alignment: 8)
        payloadCounts = .allocate(capacity: capacity)
        payloadCounts.initialize(repeating: 0)
        decoded = .allocate(capacity: capacity)
        decoded.initialize(repeating: .min)
    }

    deinit {
        payloads.deallocate()
        payloadCounts.deallocate()
        decoded.deallocate()
    }

    /// A new anchor: no slot holds decoded audio, and the decoder starts afresh.
    mutating func reanchor() {
        decoded.update(repeating: .min)
        decoder.reset()
    }

    /// Keeps a packet's payload in `slot` as it came (decoded when the play head reaches it).
    mutating func store(_ payload: UnsafeRawBufferPointer, slot: Int, timestamp: Int64) {
        UnsafeMutableRawBufferPointer(rebasing: payloads[(slot * maxPayloadBytes)...].prefix(payload.count)).copyMemory(from: payload)
        payloadCounts[slot] = payload.count
        if decoded[slot] != timestamp { decoded[slot] = .min }
    }

    /// Whether `slot`'s samples already hold the packet at `packetStart`.
    @inline(__always)
    func holds(slot: Int, packetStart: Int64) -> Bool { decoded[slot] == packetStart }

    private func payload(slot: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: payloads[(slot * maxPayloadBytes)...].prefix(payloadCounts[slot]))
    }

    /// Makes `destination` (the slot's samples) hold the audio of the packet at `packetStart`: decoded if it
    /// `arrived` and decodes to `frames`; else, while `playing`, recovered from the next slot's FEC when
    /// `nextSlot` holds the next packet (`nextArrived`) and `inBandFEC`, else concealed by the decoder.
    /// - Returns: what it did, and whether a packet that arrived failed to decode (the caller counts it invalid).
    mutating func decode(
        slot: Int, packetStart: Int64, arrived: Bool, playing: Bool, nextSlot: Int, nextArrived: Bool, inBandFEC: Bool,
        frames: Int, into destination: UnsafeMutableBufferPointer<Float>
    ) -> (outcome: Outcome, undecodable: Bool) {
        var undecodable = false
        if arrived {
            if let count = try? decoder.decode(payload(slot: slot), into: destination), count == frames {
                decoded[slot] = packetStart
                return (.decoded, false)
            }
            undecodable = true
        }
        guard playing else { return (.nothing, undecodable) }
        var recovered = false
        if !arrived, inBandFEC, nextArrived {
            recovered = (try? decoder.recoverLoss(frames: frames, fromNextPacket: payload(slot: nextSlot), into: destination)) != nil
        }
        if !recovered, (try? decoder.concealLoss(frames: frames, into: destination)) == nil {
            destination.update(repeating: 0)
        }
        decoded[slot] = packetStart
        return (recovered ? .recovered : .concealed, undecodable)
    }
}
