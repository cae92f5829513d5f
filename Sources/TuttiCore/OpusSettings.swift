/// How a Tutti Opus stream is encoded (RFC 6716 codec, RFC 7587 RTP payload): frame duration, bitrate,
/// complexity, in-band FEC and the libopus application. The channel count is not here: it is the stream's
/// (`StreamFormat.channels`, 1 or 2 for Opus) and goes to `OpusEncoder`/`OpusDecoder` directly.
///
/// **RTP clock.** RFC 7587 fixes the RTP clock of Opus at 48 kHz whatever the audio bandwidth, and Tutti
/// encodes and decodes at 48 kHz, so a frame duration is also a fixed number of RTP timestamp ticks
/// (`FrameDuration.framesPerChannel`).
///
/// **Defaults, for musicians on a LAN.** 5 ms frames with the restricted low-delay application (CELT only):
/// 7.5 ms of codec latency (5 ms frame + 2.5 ms lookahead) at 200 packets per second. 2.5 ms frames save
/// another 2.5 ms but double the packet rate (400/s, so another 64 kb/s of IP/UDP/RTP headers at 40 bytes
/// a packet), and CELT's 2.5 ms transform resolves frequency far more coarsely: a 1 kHz tone at 128 kb/s
/// comes back at about 20 dB SNR instead of about 40 dB at 5 ms (`OpusCodecTests`). 10 and 20 ms frames are
/// for WAN links and for FEC. 128 kb/s for a stereo pair (64 kb/s a channel) keeps a music signal close to
/// transparent; the complexity is libopus's own default, 9.
///
/// **In-band FEC (LBRR)** is a low-bitrate copy of the previous frame coded by the SILK layer, so it exists
/// only in packets that carry SILK: the SILK-only and hybrid modes. Those need frames of at least 10 ms and
/// the `audio` or `voip` application: restricted low delay is CELT only, and libopus codes frames shorter
/// than 10 ms with CELT only in every application. So a 2.5 or 5 ms musician's stream cannot carry FEC, and
/// `validate()` rejects `inBandFEC` there. Where FEC is allowed, libopus 1.3.1 codes LBRR only when
/// - the expected loss is above 0 % (at 0 % a "FEC" stream carries none: `recoverLoss` then conceals);
/// - the packet is SILK or hybrid: at music bitrates libopus prefers CELT and moves to hybrid for FEC only
///   when the expected loss exceeds (128 − voice estimate) / 16 % (voice estimate 0…127: about 8 % for
///   music, less for voice-like signals);
/// - the bitrate leaves room for it (measured: 32 kb/s stereo at 5 % loss codes no LBRR).
/// Measured (`OpusCodecTests`): `audio` or `voip`, 10 or 20 ms frames, 64 kb/s stereo, FEC on, 20 % loss:
/// every packet is hybrid and a lost frame recovered from the next packet is 12–20 dB (SNR) from the
/// loss-free decode, against about −1 dB for concealment. The price: hybrid codes everything below 8 kHz
/// with SILK, a speech codec, and adds 4 ms of lookahead (6.5 ms in all) to the 10–20 ms frame.
///
/// `Codable` does not validate: call `validate()` after decoding. Pure value; thread-safe: yes.
public struct OpusSettings: Sendable, Hashable, Codable {
    /// Duration of one Opus frame (one RTP packet). Only the durations a low-latency stream needs.
    public enum FrameDuration: String, CaseIterable, Sendable, Hashable, Codable, CustomStringConvertible {
        case twoAndAHalfMilliseconds = "2.5ms"
        case fiveMilliseconds = "5ms"
        case tenMilliseconds = "10ms"
        case twentyMilliseconds = "20ms"

        /// Frames per channel at 48 kHz (= RTP timestamp ticks per packet, RFC 7587): 120, 240, 480, 960.
        public var framesPerChannel: Int {
            switch self {
            case .twoAndAHalfMilliseconds: 120
            case .fiveMilliseconds: 240
            case .tenMilliseconds: 480
            case .twentyMilliseconds: 960
            }
        }

        /// The duration in milliseconds: 2.5, 5, 10 or 20.
        public var milliseconds: Double { Double(framesPerChannel) / 48 }

        /// Whether a frame this long can carry SILK and therefore in-band FEC (10 ms and longer).
        public var canCarrySILK: Bool { framesPerChannel >= 480 }

        /// "2.5ms", "5ms", "10ms", "20ms" (also the `Codable` form).
        public var description: String { rawValue }
    }

    /// libopus's application, which decides the codec modes it may use.
    public enum Application: String, CaseIterable, Sendable, Hashable, Codable, CustomStringConvertible {
        /// `OPUS_APPLICATION_RESTRICTED_LOWDELAY`: CELT only, 2.5 ms lookahead, no FEC. Tutti's default.
        case restrictedLowDelay = "lowdelay"
        /// `OPUS_APPLICATION_AUDIO`: music-oriented; SILK/hybrid/CELT; 6.5 ms lookahead.
        case audio
        /// `OPUS_APPLICATION_VOIP`: speech-oriented (biased toward SILK); 6.5 ms lookahead.
        case voip

        /// "lowdelay", "audio", "voip" (also the `Codable` form).
        public var description: String { rawValue }

        /// Frames at 48 kHz by which libopus's decoded audio lags its input (`OPUS_GET_LOOKAHEAD`): 2.5 ms
        /// (120) with restricted low delay, 6.5 ms (312: 2.5 ms plus SILK's 4 ms) otherwise; the same for every
        /// frame size, bitrate and channel count (pinned against the encoder by OpusCodecTests).
        public var lookaheadFrames: Int {
            switch self {
            case .restrictedLowDelay: 120
            case .audio, .voip: 312
            }
        }
    }

    /// Bitrates libopus accepts for a stream, in bits per second (RFC 7587 §3.1.1: 6 to 510 kb/s).
    public static let bitrateRange = 6_000...510_000
    /// libopus complexity: 0 (cheapest) to 10 (best).
    public static let complexityRange = 0...10
    public static let packetLossRange = 0...100
    /// Opus over RTP is mono or stereo (RFC 7587 §7; more channels need the multistream API).
    public static let supportedChannels = 1...2
    /// The RTP clock rate and Tutti's encode/decode rate (RFC 7587 §4.1).
    public static let sampleRate = 48_000
    /// An upper bound for one encoded packet of one frame: TOC byte + at most 1,275 bytes of frame (RFC 6716
    /// §3.2.1). A packet buffer this large never makes `OpusEncoder.encode` fail for lack of room.
    public static let maximumPacketBytes = 1_276

    public var frameDuration: FrameDuration
    /// Target bitrate of the whole stream (all channels), bits per second.
    public var bitrate: Int
    /// 0…10.
    public var complexity: Int
    /// In-band forward error correction (`OPUS_SET_INBAND_FEC`). Needs `audio`/`voip` and ≥ 10 ms frames.
    public var inBandFEC: Bool
    /// The loss the encoder should expect and protect against, percent (`OPUS_SET_PACKET_LOSS_PERC`).
    public var expectedPacketLossPercent: Int
    public var application: Application

    public init(
        frameDuration: FrameDuration = .fiveMilliseconds, bitrate: Int = 128_000, complexity: Int = 9,
        inBandFEC: Bool = false, expectedPacketLossPercent: Int = 0, application: Application = .restrictedLowDelay
    ) {
        self.frameDuration = frameDuration
        self.bitrate = bitrate
        self.complexity = complexity
        self.inBandFEC = inBandFEC
        self.expectedPacketLossPercent = expectedPacketLossPercent
        self.application = application
    }

    /// Tutti's LAN defaults: 5 ms, 128 kb/s, complexity 9, no FEC, restricted low delay.
    public static let lan = OpusSettings()

    /// Checks every field and the combination; the first problem is thrown, described in one line.
    ///
    /// - Throws: `.bitrateOutOfRange`, `.complexityOutOfRange`, `.packetLossOutOfRange`, or
    ///   `.inBandFECUnavailable` when FEC is asked for on a stream that cannot carry it (restricted low
    ///   delay, or frames shorter than 10 ms).
    public func validate() throws(OpusSettingsError) {
        guard Self.bitrateRange.contains(bitrate) else { throw .bitrateOutOfRange(bitrate) }
        guard Self.complexityRange.contains(complexity) else { throw .complexityOutOfRange(complexity) }
        guard Self.packetLossRange.contains(expectedPacketLossPercent) else {
            throw .packetLossOutOfRange(expectedPacketLossPercent)
        }
        if inBandFEC && (application == .restrictedLowDelay || !frameDuration.canCarrySILK) {
            throw .inBandFECUnavailable(frameDuration, application)
        }
    }
}
