import COpus
import TuttiCore

/// One Opus encoder (libopus `OpusEncoder`) for a mono or stereo stream at 48 kHz: interleaved `Float`
/// frames in, one RTP payload (RFC 7587: exactly one Opus packet) out.
///
/// **Ownership.** A noncopyable struct, not a class: it owns the libopus state (created in `init`, destroyed
/// in `deinit`), there is exactly one owner, and encoding costs no reference counting. The control plane
/// creates it and moves it to the thread that encodes (or keeps it behind a pointer that thread uses);
/// every call that touches the state is `mutating`, so Swift's exclusivity rules keep two threads from
/// using it at once. That is also why it may be `Sendable`: the state is only ever reached through the
/// single owner.
///
/// **Realtime.** `encode` calls `opus_encode_float` and nothing else: no allocation, lock or log (libopus
/// allocates only in `opus_encoder_create`; its scratch memory is on the stack, so give the encoding thread
/// a normal stack, not a tiny one). The `MediaPath` benchmark checks zero allocations per packet.
///
/// **Delay.** Decoded audio lags the input by `lookaheadFrames` (`OPUS_GET_LOOKAHEAD`): 120 frames (2.5 ms)
/// with restricted low delay, 312 (6.5 ms) with `audio`/`voip`. A receiver adds it to the stream's latency
/// (or aligns to it); the frame itself adds `framesPerPacket` of packetization delay on top.
public struct OpusEncoder: ~Copyable, @unchecked Sendable {
    /// The settings in effect (validated).
    public private(set) var settings: OpusSettings
    /// 1 or 2.
    public let channels: Int
    /// Frames of codec delay (`OPUS_GET_LOOKAHEAD`), at 48 kHz.
    public let lookaheadFrames: Int
    private let state: OpaquePointer

    /// Frames per channel in each packet (`settings.frameDuration.framesPerChannel`).
    public var framesPerPacket: Int { settings.frameDuration.framesPerChannel }
    /// Interleaved samples `encode` takes: `framesPerPacket * channels`.
    public var samplesPerPacket: Int { framesPerPacket * channels }

    /// Creates and configures the libopus encoder. Control plane only (allocates).
    ///
    /// - Throws: `.invalidSettings` when `settings.validate()` fails or `channels` is not 1 or 2; a libopus
    ///   error (e.g. `.allocationFailed`) when creating or configuring the state fails.
    public init(settings: OpusSettings, channels: Int) throws(OpusError) {
        do { try settings.validate() } catch { throw .invalidSettings(error) }
        guard OpusSettings.supportedChannels.contains(channels) else {
            throw .invalidSettings(.unsupportedChannelCount(channels))
        }
        var status = OPUS_OK
        guard
            let state = opus_encoder_create(
                Int32(OpusSettings.sampleRate), Int32(channels), settings.application.libopusValue, &status),
            status == OPUS_OK
        else { throw OpusError(code: status == OPUS_OK ? OPUS_ALLOC_FAIL : status) }
        var lookahead: Int32 = 0
        status = Self.configure(state, settings)
        if status == OPUS_OK { status = tutti_opus_encoder_get_int(state, OPUS_GET_LOOKAHEAD_REQUEST, &lookahead) }
        guard status == OPUS_OK else {
            opus_encoder_destroy(state)
            throw OpusError(code: status)
        }
        self.settings = settings
        self.channels = channels
        self.lookaheadFrames = Int(lookahead)
        self.state = state
    }

    deinit { opus_encoder_destroy(state) }

    /// Encodes one frame of interleaved samples into one Opus packet.
    ///
    /// - Parameters:
    ///   - samples: exactly `samplesPerPacket` interleaved samples, nominally in [-1, 1] (a different count is
    ///     a bug: precondition).
    ///   - packet: where the packet goes; `OpusSettings.maximumPacketBytes` always suffices. A smaller buffer
    ///     caps the packet (libopus lowers the quality to fit) or fails with `.bufferTooSmall`.
    /// - Returns: the packet's length in bytes (≥ 1).
    /// - Throws: a libopus error; the encoder stays usable.
    ///
    /// Realtime-safe: yes (no allocation, lock or log). Thread-safe: no (one owner; `mutating`).
    public mutating func encode(
        _ samples: UnsafeBufferPointer<Float>, into packet: UnsafeMutableRawBufferPointer
    ) throws(OpusError) -> Int {
        precondition(samples.count == samplesPerPacket, "Opus encode takes exactly one frame of samples")
        guard let output = packet.baseAddress, !packet.isEmpty else { throw .bufferTooSmall }
        let result = opus_encode_float(
            state, samples.baseAddress!, Int32(framesPerPacket), output.assumingMemoryBound(to: UInt8.self),
            Int32(clamping: packet.count))
        guard result > 0 else { throw OpusError(code: result == 0 ? OPUS_INTERNAL_ERROR : result) }
        return Int(result)
    }

    /// Changes the bitrate, complexity, FEC and expected loss between two packets (e.g. after RTCP loss
    /// reports). The frame duration and application are fixed for the encoder's life (changing either is a
    /// bug: precondition; create a new encoder instead).
    ///
    /// - Throws: `.invalidSettings` when `settings.validate()` fails (nothing changed then); a libopus error
    ///   (the settings may be partly applied: `settings` still reports the old ones).
    ///
    /// Realtime-safe: yes (libopus's ctl calls do not allocate). Thread-safe: no (the owner's thread).
    public mutating func apply(_ settings: OpusSettings) throws(OpusError) {
        precondition(
            settings.frameDuration == self.settings.frameDuration && settings.application == self.settings.application,
            "an Opus encoder's frame duration and application are fixed")
        do { try settings.validate() } catch { throw .invalidSettings(error) }
        let status = Self.configure(state, settings)
        guard status == OPUS_OK else { throw OpusError(code: status) }
        self.settings = settings
    }

    /// Forgets the signal history (`OPUS_RESET_STATE`), as for a new stream, keeping the settings.
    /// Realtime-safe: yes. Thread-safe: no (the owner's thread).
    public mutating func reset() {
        let status = tutti_opus_encoder_reset(state)
        precondition(status == OPUS_OK, "OPUS_RESET_STATE cannot fail on a valid encoder")
    }

    /// The bitrate libopus is targeting (`OPUS_GET_BITRATE`), bits per second.
    /// Realtime-safe: yes. Thread-safe: no (the owner's thread).
    public mutating func effectiveBitrate() -> Int {
        var value: Int32 = 0
        let status = tutti_opus_encoder_get_int(state, OPUS_GET_BITRATE_REQUEST, &value)
        precondition(status == OPUS_OK)
        return Int(value)
    }

    /// Sets every adjustable field of `settings` on a fresh or running state; returns the first failure.
    /// No allocation (called from `apply`, which is realtime-safe).
    private static func configure(_ state: OpaquePointer, _ settings: OpusSettings) -> Int32 {
        var status = tutti_opus_encoder_set_int(state, OPUS_SET_BITRATE_REQUEST, Int32(settings.bitrate))
        if status == OPUS_OK {
            status = tutti_opus_encoder_set_int(state, OPUS_SET_COMPLEXITY_REQUEST, Int32(settings.complexity))
        }
        if status == OPUS_OK {
            status = tutti_opus_encoder_set_int(state, OPUS_SET_INBAND_FEC_REQUEST, settings.inBandFEC ? 1 : 0)
        }
        if status == OPUS_OK {
            status = tutti_opus_encoder_set_int(
                state, OPUS_SET_PACKET_LOSS_PERC_REQUEST, Int32(settings.expectedPacketLossPercent))
        }
        return status
    }
}

extension OpusSettings.Application {
    /// `OPUS_APPLICATION_RESTRICTED_LOWDELAY`, `OPUS_APPLICATION_AUDIO` or `OPUS_APPLICATION_VOIP`.
    var libopusValue: Int32 {
        switch self {
        case .restrictedLowDelay: OPUS_APPLICATION_RESTRICTED_LOWDELAY
        case .audio: OPUS_APPLICATION_AUDIO
        case .voip: OPUS_APPLICATION_VOIP
        }
    }
}
