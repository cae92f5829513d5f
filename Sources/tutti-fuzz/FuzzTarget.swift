import TuttiClock
import TuttiCore
import TuttiSecurity
import TuttiStream
import TuttiWire

/// The parsers that read what the network sends, each as a fuzz target: it must turn any bytes into a value
/// or a typed error, never trap, and a value it accepts must survive its own encoder (decode → encode →
/// decode gives the same value). A broken invariant traps on purpose, which libFuzzer reports as a crash.
///
/// Thread-safe: yes (pure functions).
enum FuzzTarget: String, CaseIterable {
    /// An RTP datagram (RFC 3550 header, RFC 8285 extensions, Tutti's capture-time element).
    case rtp
    /// A control request and a control response (the length-prefixed JSON of the control channel).
    case control
    /// A Link discovery message (ALIVE, RESPONSE, BYEBYE with their payload entries).
    case linkDiscovery = "link-discovery"
    /// A Link measurement message (PING, PONG).
    case linkMeasurement = "link-measurement"
    /// A jitter buffer driven by a stream of packets and reads the input describes (any order, gaps,
    /// duplicates, jumps, stalls).
    case jitterBuffer = "jitter-buffer"
    /// The control channel's handshake and transport messages, as a stranger would send them (the first byte
    /// picks which message the input is).
    case noise

    /// Runs one input.
    func run(_ bytes: UnsafeRawBufferPointer) {
        switch self {
        case .rtp: Self.rtp(bytes)
        case .control: Self.control(bytes)
        case .linkDiscovery: Self.linkDiscovery(bytes)
        case .linkMeasurement: Self.linkMeasurement(bytes)
        case .jitterBuffer: Self.jitterBuffer(bytes)
        case .noise: Self.noise(bytes)
        }
    }

    /// First byte 0: the input (after it) is an initiator's first frame, and what follows the first 36 bytes
    /// its third; 1: a responder's answer to a fixed first frame; 2: a transport message after the member's
    /// first request. Nobody without the session key completes a handshake or has a transport message opened,
    /// and a member's message opens once, so a third message or a transport message that verifies is a
    /// broken invariant.
    private static func noise(_ bytes: UnsafeRawBufferPointer) {
        guard let mode = bytes.first else { return }
        let input = [UInt8](bytes.dropFirst())
        switch mode % 3 {
        case 0:
            var responder = NoiseFuzzing.responder()
            let split = min(input.count, ControlHandshake.magic.count + NoiseHandshake.keyLength)
            guard (try? responder.answer(Array(input[..<split]))) != nil else { return }
            check((try? responder.readFinal(Array(input[split...]))) == nil, "a forged third message completed the handshake")
        case 1:
            var initiator = NoiseFuzzing.initiator()
            _ = try? initiator.firstFrame()
            _ = try? initiator.readAnswer(input)
        default:
            // The responder has read the member's first request; the input is what a stranger sends next.
            var (_, channel, member) = NoiseFuzzing.handshake()
            let genuine = try! member.seal(NoiseFuzzing.request)
            check((try? channel.open(genuine)) == NoiseFuzzing.request, "the member's own request did not open")
            check((try? channel.open(input)) == nil, "a forged or replayed transport message opened")
        }
    }

    private static func rtp(_ bytes: UnsafeRawBufferPointer) {
        guard let packet = try? RTPPacketView.decode(bytes) else { return }
        check(packet.payloadOffset >= RTPHeader.fixedSize, "payload before the fixed header")
        check(packet.payloadCount >= 0 && packet.payloadOffset + packet.payloadCount <= bytes.count, "payload beyond the datagram")
        // What was read writes back and reads the same (the header Tutti would send for it).
        let header = packet.header
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: header.encodedSize, alignment: 8)
        defer { buffer.deallocate() }
        guard let written = header.write(to: buffer) else { return check(false, "a decoded header does not fit its own size") }
        let again = try? RTPPacketView.decode(UnsafeRawBufferPointer(rebasing: buffer[0..<written]))
        check(again?.header == header, "header round trip: \(header) → \(String(describing: again?.header))")
    }

    private static func control(_ bytes: UnsafeRawBufferPointer) {
        let array = [UInt8](bytes)
        _ = try? ControlCodec.frameLength(prefix: array)
        if let request = try? ControlCodec.decodeRequest(array) {
            guard let encoded = try? ControlCodec.encodeRequest(request) else { return check(false, "an accepted request does not encode") }
            let again = try? ControlCodec.decodeRequest(Array(encoded.dropFirst(ControlCodec.lengthPrefixBytes)))
            check(again?.message == request.message && again?.id == request.id, "request round trip: \(request.message)")
        }
        if let response = try? ControlCodec.decodeResponse(array) {
            let encoded = ControlCodec.encodeResponse(response)
            let again = try? ControlCodec.decodeResponse(Array(encoded.dropFirst(ControlCodec.lengthPrefixBytes)))
            check(again?.message == response.message && again?.id == response.id, "response round trip: \(response.message)")
        }
    }

    /// A discovery message's re-encoding may differ from a datagram that repeats a known key (the winning
    /// value is written once, `LinkDiscoveryMessage`'s documented exception), so the round trip compares
    /// what the message says (its wire order aside), and the re-encoding must be stable.
    private static func linkDiscovery(_ bytes: UnsafeRawBufferPointer) {
        guard var message = try? LinkDiscoveryMessage.decode(bytes) else { return }
        guard let encoded = try? message.encode() else { return check(false, "an accepted discovery message does not encode") }
        guard var again = try? LinkDiscoveryMessage.decode(encoded) else { return check(false, "a re-encoded message does not decode") }
        check((try? again.encode()) == encoded, "discovery re-encoding is not stable: \(message)")
        message.entryOrder = []
        again.entryOrder = []
        check(again == message, "discovery round trip: \(message) → \(again)")
    }

    private static func linkMeasurement(_ bytes: UnsafeRawBufferPointer) {
        guard let message = try? LinkMeasurementMessage.decode(bytes) else { return }
        guard let encoded = try? message.encode() else { return check(false, "an accepted measurement message does not encode") }
        check((try? LinkMeasurementMessage.decode(encoded)) == message, "measurement round trip: \(message)")
    }

    /// The first byte picks the format (fixed or adaptive latency, L16 or L24, 1 or 2 channels); then each
    /// 6 bytes are one step: a packet (sequence and timestamp moved by signed deltas, with or without a capture
    /// time, after some microseconds) or a read of a period. What comes out must be finite and within full
    /// scale (the payloads' samples are), and the counters must add up.
    private static func jitterBuffer(_ bytes: UnsafeRawBufferPointer) {
        guard let first = bytes.first else { return }
        let channels = first & 1 == 0 ? 2 : 1
        let format = StreamFormat(
            sampleRate: 48_000, channels: channels, sampleFormat: first & 2 == 0 ? .l16 : .l24, packetFrames: 64,
            targetLatencyFrames: 192, adaptiveLatencyFrames: first & 4 == 0 ? nil : 64...1_920)
        var buffer = JitterBuffer(format: format, concealment: first & 8 == 0 ? .silence : .repetition)
        var payload = [UInt8](repeating: 0, count: format.payloadBytes)
        for index in payload.indices { payload[index] = UInt8(truncatingIfNeeded: index &* 37) }
        let output = UnsafeMutableBufferPointer<Float>.allocate(capacity: 256 * channels)
        defer { output.deallocate() }
        var now = HostTime(nanoseconds: 1_000_000_000)
        var sequence: UInt16 = 100
        var timestamp: UInt32 = 6_400
        var inserted: UInt64 = 0
        var offset = 1
        while offset + 6 <= bytes.count {
            let step = bytes[offset]
            let a = Int8(bitPattern: bytes[offset + 1])
            let b = Int8(bitPattern: bytes[offset + 2])
            let wait = Int64(bytes[offset + 3]) << 8 | Int64(bytes[offset + 4])
            now = now + .microseconds(wait)
            if step & 1 == 0 {
                sequence = sequence &+ UInt16(bitPattern: Int16(a))
                timestamp = timestamp &+ UInt32(bitPattern: Int32(b) * 64)
                let captureTime: Int64? = step & 2 == 0 ? nil : now.nanoseconds - Int64(bytes[offset + 5]) * 10_000
                let payloadCount = step & 4 == 0 ? payload.count : Int(bytes[offset + 5]) % (payload.count + 1)
                _ = payload.withUnsafeBytes { raw in
                    buffer.insert(
                        sequenceNumber: sequence, timestamp: timestamp, captureTime: captureTime, arrival: now,
                        payload: UnsafeRawBufferPointer(rebasing: raw[0..<payloadCount]))
                }
                inserted += 1
            } else {
                let frames = 1 + Int(bytes[offset + 5])
                buffer.read(into: output, frames: frames, now: now, captureClockNow: now.nanoseconds)
                for sample in output[0..<(frames * channels)] {
                    check(sample.isFinite && abs(sample) <= 1.0001, "a sample out of range: \(sample)")
                }
            }
            offset += 6
        }
        let statistics = buffer.statistics
        check(statistics.received + statistics.invalid <= inserted, "more packets counted than offered")
        check(statistics.bufferedFrames >= 0, "a negative buffer level")
    }

    /// Traps with `what` when `condition` fails: libFuzzer saves the input that did it.
    private static func check(_ condition: Bool, _ what: @autoclosure () -> String) {
        if !condition { fatalError("fuzz invariant broken: \(what())") }
    }
}
