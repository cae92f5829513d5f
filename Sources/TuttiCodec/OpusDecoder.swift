import COpus
import TuttiCore

/// One Opus decoder (libopus `OpusDecoder`) for a mono or stereo stream at 48 kHz: one RTP payload (one
/// Opus packet, RFC 7587) in, interleaved `Float` frames out; and the two ways to fill a lost packet.
///
/// **Losses.** When packet *n* is missing at play-out time:
/// - if packet *n + 1* has arrived, `recoverLoss(frames:fromNextPacket:into:)` decodes the in-band FEC
///   (LBRR) copy of frame *n* that packet *n + 1* may carry, then `decode` decodes packet *n + 1* as usual;
///   when *n + 1* carries no FEC (CELT-only packets never do: see `OpusSettings`), libopus conceals instead;
/// - otherwise `concealLoss(frames:into:)` extrapolates the signal (packet-loss concealment), which
///   continues a steady tone and fades out over longer losses.
/// Either way call exactly one of them per lost packet, in stream order, so the decoder's state follows the
/// stream.
///
/// **Ownership.** A noncopyable struct owning the libopus state (created in `init`, destroyed in `deinit`);
/// every call that touches the state is `mutating`, so one owner at a time uses it (hence `Sendable`). See
/// `OpusEncoder`.
///
/// **Realtime.** `decode`, `concealLoss` and `recoverLoss` call `opus_decode_float` only: no allocation, lock
/// or log (libopus's scratch memory is on the stack).
public struct OpusDecoder: ~Copyable, @unchecked Sendable {
    /// 1 or 2.
    public let channels: Int
    private let state: OpaquePointer

    /// Creates the libopus decoder (48 kHz output). Control plane only (allocates).
    ///
    /// - Throws: `.invalidSettings(.unsupportedChannelCount)` unless `channels` is 1 or 2; a libopus error
    ///   (e.g. `.allocationFailed`) when creating the state fails.
    public init(channels: Int) throws(OpusError) {
        guard OpusSettings.supportedChannels.contains(channels) else {
            throw .invalidSettings(.unsupportedChannelCount(channels))
        }
        var status = OPUS_OK
        guard let state = opus_decoder_create(Int32(OpusSettings.sampleRate), Int32(channels), &status),
            status == OPUS_OK
        else { throw OpusError(code: status == OPUS_OK ? OPUS_ALLOC_FAIL : status) }
        self.channels = channels
        self.state = state
    }

    deinit { opus_decoder_destroy(state) }

    /// Decodes one packet.
    ///
    /// - Parameters:
    ///   - packet: one Opus packet (an RTP payload). Empty is `.invalidPacket` (libopus would take an empty
    ///     packet for a loss and conceal the whole buffer: use `concealLoss` for that).
    ///   - samples: room for the packet's frames, interleaved; its capacity in frames is
    ///     `samples.count / channels`. The packet's duration is not checked against the stream's frame
    ///     duration here: the caller compares the returned count.
    /// - Returns: frames per channel written (the packet's duration: 120 per 2.5 ms).
    /// - Throws: `.invalidPacket` for a corrupted packet, `.bufferTooSmall` when the frames do not fit;
    ///   nothing is written then and the decoder stays usable (count the packet and treat it as lost).
    ///
    /// Realtime-safe: yes. Thread-safe: no (one owner; `mutating`).
    public mutating func decode(
        _ packet: UnsafeRawBufferPointer, into samples: UnsafeMutableBufferPointer<Float>
    ) throws(OpusError) -> Int {
        guard let bytes = packet.baseAddress, !packet.isEmpty else { throw .invalidPacket }
        return try run(bytes, packet.count, samples, frames: samples.count / channels, fec: false)
    }

    /// Fills one lost packet by packet-loss concealment (`opus_decode_float` with no data).
    ///
    /// - Parameters:
    ///   - frames: the lost packet's duration in frames per channel: a multiple of 120 (2.5 ms), else
    ///     `.badArgument`.
    ///   - samples: room for `frames * channels` interleaved samples (less is a bug: precondition).
    /// - Throws: `.badArgument` for a duration libopus cannot conceal.
    ///
    /// Realtime-safe: yes. Thread-safe: no (one owner; `mutating`).
    public mutating func concealLoss(frames: Int, into samples: UnsafeMutableBufferPointer<Float>) throws(OpusError) {
        precondition(frames > 0 && frames * channels <= samples.count, "no room for the concealed frames")
        _ = try run(nil, 0, samples, frames: frames, fec: false)
    }

    /// Fills one lost packet from the in-band FEC that the *next* packet carries (`decode_fec = 1`). Decode
    /// that next packet normally afterwards.
    ///
    /// - Parameters:
    ///   - frames: the *lost* packet's duration in frames per channel (a multiple of 120, else
    ///     `.badArgument`). If the next packet carries no FEC data, or is shorter, libopus conceals instead,
    ///     as `concealLoss` would.
    ///   - nextPacket: the packet that followed the lost one (not empty, else `.invalidPacket`).
    ///   - samples: room for `frames * channels` interleaved samples (less is a bug: precondition).
    /// - Throws: `.invalidPacket` for a corrupted next packet; `.badArgument` for a bad duration.
    ///
    /// Realtime-safe: yes. Thread-safe: no (one owner; `mutating`).
    public mutating func recoverLoss(
        frames: Int, fromNextPacket nextPacket: UnsafeRawBufferPointer, into samples: UnsafeMutableBufferPointer<Float>
    ) throws(OpusError) {
        precondition(frames > 0 && frames * channels <= samples.count, "no room for the recovered frames")
        guard let bytes = nextPacket.baseAddress, !nextPacket.isEmpty else { throw .invalidPacket }
        _ = try run(bytes, nextPacket.count, samples, frames: frames, fec: true)
    }

    /// Forgets the stream history (`OPUS_RESET_STATE`), as for a new stream (e.g. after a resynchronization).
    /// Realtime-safe: yes. Thread-safe: no (the owner's thread).
    public mutating func reset() {
        let status = tutti_opus_decoder_reset(state)
        precondition(status == OPUS_OK, "OPUS_RESET_STATE cannot fail on a valid decoder")
    }

    /// The one call into libopus on the data plane.
    private func run(
        _ bytes: UnsafeRawPointer?, _ count: Int, _ samples: UnsafeMutableBufferPointer<Float>, frames: Int, fec: Bool
    ) throws(OpusError) -> Int {
        guard let output = samples.baseAddress else { throw .bufferTooSmall }
        let result = opus_decode_float(
            state, bytes?.assumingMemoryBound(to: UInt8.self), Int32(clamping: count), output,
            Int32(clamping: frames), fec ? 1 : 0)
        guard result >= 0 else { throw OpusError(code: result) }
        return Int(result)
    }
}
