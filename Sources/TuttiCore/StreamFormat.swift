/// Everything a sender and a receiver agree on for one PCM stream.
///
/// Produced by negotiation (`TuttiSession`) and fixed for the connection's lifetime, so the data plane
/// can preallocate from it. Invariants are checked by `validate()`, which negotiation calls.
public struct StreamFormat: Hashable, Sendable, Codable, CustomStringConvertible {
    /// Frames per second (an RTP clock of the same rate counts timestamps in frames).
    public var sampleRate: Int
    /// Interleaved channels per frame.
    public var channels: Int
    /// Wire sample format.
    public var sampleFormat: SampleFormat
    /// Frames carried by every packet.
    public var packetFrames: Int
    /// Target playout latency of the receiver's jitter buffer, in frames.
    public var targetLatencyFrames: Int
    /// Synchronized playout: every receiver plays each frame exactly this long (in nanoseconds on the
    /// shared clock) after it was captured, so receivers on different machines play the same frame at
    /// the same moment. `nil`: play at `targetLatencyFrames` after arrival.
    public var synchronizedLatencyNanoseconds: Int64?
    /// Adaptive latency: the receiver moves its target between these bounds (frames) to follow the
    /// network's jitter, starting at `targetLatencyFrames`. `nil`: the target stays fixed.
    public var adaptiveLatencyFrames: ClosedRange<Int>?
    /// Opus streams: the encoder's settings (its frame duration is `packetFrames`); nil for PCM.
    public var opus: OpusSettings?

    public init(
        sampleRate: Int, channels: Int, sampleFormat: SampleFormat, packetFrames: Int, targetLatencyFrames: Int,
        synchronizedLatencyNanoseconds: Int64? = nil, adaptiveLatencyFrames: ClosedRange<Int>? = nil,
        opus: OpusSettings? = nil
    ) {
        self.opus = opus
        self.synchronizedLatencyNanoseconds = synchronizedLatencyNanoseconds
        self.adaptiveLatencyFrames = adaptiveLatencyFrames
        self.sampleRate = sampleRate
        self.channels = channels
        self.sampleFormat = sampleFormat
        self.packetFrames = packetFrames
        self.targetLatencyFrames = targetLatencyFrames
    }

    /// Bytes of RTP payload per packet (PCM), or the most an Opus packet may have.
    @inlinable public var payloadBytes: Int {
        sampleFormat.isPCM ? packetFrames * channels * sampleFormat.bytesPerSample : OpusSettings.maximumPacketBytes
    }

    /// Whether a payload of `count` bytes can belong to this stream: exactly `payloadBytes` for PCM, 1 to
    /// `payloadBytes` for Opus.
    @inlinable public func acceptsPayload(count: Int) -> Bool {
        sampleFormat.isPCM ? count == payloadBytes : count > 0 && count <= payloadBytes
    }

    /// Samples (all channels) per packet.
    @inlinable public var samplesPerPacket: Int { packetFrames * channels }

    /// Duration of one packet.
    public var packetDuration: Duration { .nanoseconds(Int64(packetFrames) * 1_000_000_000 / Int64(sampleRate)) }

    /// Converts a frame count at this rate to a duration.
    public func duration(frames: Int) -> Duration { .nanoseconds(Int64(frames) * 1_000_000_000 / Int64(sampleRate)) }

    /// Converts a duration to frames at this rate (rounded to nearest).
    public func frames(in duration: Duration) -> Int {
        Int((duration.seconds * Double(sampleRate)).rounded())
    }

    /// What is on the wire, without the receiver's buffering: `L16/48000/2ch, 64 frames/packet`,
    /// `OPUS/96k+FEC/48000/2ch, 960 frames/packet` (for streams to standard RTP receivers, whose buffer is their
    /// own). Control plane: it allocates.
    public var wireDescription: String {
        let codec = opus.map { "/\($0.bitrate / 1000)k" + ($0.inBandFEC ? "+FEC" : "") } ?? ""
        return "\(sampleFormat)\(codec)/\(sampleRate)/\(channels)ch, \(packetFrames) frames/packet"
    }

    public var description: String {
        let latencyMs = Double(targetLatencyFrames) * 1000 / Double(sampleRate)
        let playout = synchronizedLatencyNanoseconds.map { ", synchronized playout at \(String(format: Double($0) / 1e6))ms" } ?? ""
        let adaptive =
            adaptiveLatencyFrames.map {
                " (adaptive \(String(format: Double($0.lowerBound) * 1000 / Double(sampleRate)))–\(String(format: Double($0.upperBound) * 1000 / Double(sampleRate)))ms)"
            } ?? ""
        return wireDescription + ", target latency \(String(format: latencyMs))ms" + adaptive + playout
    }
}

extension String {
    /// Formats with two decimals without Foundation (the core stays Foundation-free).
    init(format value: Double) {
        let scaled = (value * 100).rounded()
        let whole = Int(scaled) / 100
        let fraction = abs(Int(scaled) % 100)
        self = "\(value < 0 && whole == 0 ? "-" : "")\(whole).\(fraction < 10 ? "0" : "")\(fraction)"
    }
}
