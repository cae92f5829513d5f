import TuttiCodec
import TuttiCore
import TuttiWire

/// The sending end of a stream: cuts the device's periods into packets of `format.packetFrames` frames,
/// stamps them (sequence number, RTP timestamp in frames, SSRC, capture time) and encodes L16/L24, or Opus
/// (one Opus packet per RTP packet, RFC 7587; the stream runs at 48 kHz, the RTP clock's rate).
///
/// Periods and packets need not align: frames accumulate until a packet is full. Each packet's capture
/// time is that of its first frame. Realtime-safe: `append` (no allocation after `init`).
/// Thread-safe: no (the device thread owns it).
public struct Packetizer: ~Copyable {
    public let format: StreamFormat
    public let payloadType: UInt8
    public let ssrc: UInt32
    public private(set) var sequenceNumber: UInt16
    public private(set) var timestamp: UInt32
    /// Packets produced so far.
    public private(set) var packetsSent: UInt64 = 0
    /// Packets the Opus encoder failed to encode (not sent; the receiver conceals them).
    public private(set) var encodingFailures: UInt64 = 0
    /// Opus streams: the encoder.
    private var opusEncoder: OpusEncoder?

    private let pending: UnsafeMutableBufferPointer<Float>
    private let datagram: UnsafeMutableRawBufferPointer
    private var pendingFrames = 0
    private var pendingCaptureTime: Int64 = 0

    /// Largest datagram this packetizer produces.
    public var maxDatagramBytes: Int { datagram.count }

    /// - Parameters: the initial sequence number and timestamp should be random (RFC 3550 §5.1).
    /// - Precondition: an Opus format carries valid `opus` settings whose frame is `packetFrames` long
    ///   (negotiation guarantees it). Control plane (allocates).
    public init(format: StreamFormat, payloadType: UInt8, ssrc: UInt32, initialSequenceNumber: UInt16, initialTimestamp: UInt32) {
        if format.sampleFormat == .opus {
            guard let settings = format.opus, settings.frameDuration.framesPerChannel == format.packetFrames else {
                preconditionFailure("an Opus stream needs Opus settings whose frame is its packet size")
            }
            do throws(OpusError) {
                opusEncoder = Optional(try OpusEncoder(settings: settings, channels: format.channels))
            } catch {
                preconditionFailure("negotiation accepted Opus settings that libopus refuses: \(error)")
            }
        }
        self.format = format
        self.payloadType = payloadType
        self.ssrc = ssrc
        sequenceNumber = initialSequenceNumber
        timestamp = initialTimestamp
        pending = .allocate(capacity: format.samplesPerPacket)
        pending.initialize(repeating: 0)
        datagram = .allocate(byteCount: RTPHeader.fixedSize + CaptureTimeExtension.blockSize + format.payloadBytes, alignment: 8)
        datagram.initializeMemory(as: UInt8.self, repeating: 0)
    }

    deinit {
        pending.deallocate()
        datagram.deallocate()
    }

    /// Appends `frames` interleaved frames (`format.channels` samples each) captured at `captureTime`
    /// (capture-clock nanoseconds of the first frame) and calls `send` with each complete datagram.
    public mutating func append(
        _ samples: UnsafeBufferPointer<Float>, frames: Int, captureTime: Int64,
        send: (UnsafeRawBufferPointer) -> Void
    ) {
        let channels = format.channels
        precondition(samples.count >= frames * channels)
        var consumed = 0
        while consumed < frames {
            if pendingFrames == 0 {
                pendingCaptureTime = captureTime + Int64(consumed) * 1_000_000_000 / Int64(format.sampleRate)
            }
            let count = min(frames - consumed, format.packetFrames - pendingFrames)
            let source = consumed * channels
            let destination = pendingFrames * channels
            for index in 0..<(count * channels) { pending[destination + index] = samples[source + index] }
            pendingFrames += count
            consumed += count
            if pendingFrames == format.packetFrames {
                if let packet = encodePacket() { send(packet) }
                pendingFrames = 0
            }
        }
    }

    /// Writes the pending packet into `datagram`; nil when the Opus encoder failed (counted, not sent; the
    /// sequence number still advances, so the receiver counts the packet lost and conceals it).
    private mutating func encodePacket() -> UnsafeRawBufferPointer? {
        let header = RTPHeader(
            marker: packetsSent == 0, payloadType: payloadType, sequenceNumber: sequenceNumber, timestamp: timestamp,
            ssrc: ssrc, captureTime: pendingCaptureTime)
        let headerSize = header.write(to: datagram)!
        let payload = UnsafeMutableRawBufferPointer(rebasing: datagram[headerSize..<(headerSize + format.payloadBytes)])
        var payloadCount = format.payloadBytes
        sequenceNumber &+= 1
        timestamp &+= UInt32(format.packetFrames)
        if opusEncoder != nil {
            do throws(OpusError) {
                payloadCount = try opusEncoder!.encode(UnsafeBufferPointer(pending), into: payload)
            } catch {
                encodingFailures &+= 1
                return nil
            }
        } else {
            PCMCodec.encode(UnsafeBufferPointer(pending), as: format.sampleFormat, into: payload)
        }
        packetsSent &+= 1
        return UnsafeRawBufferPointer(rebasing: datagram[0..<(headerSize + payloadCount)])
    }
}
