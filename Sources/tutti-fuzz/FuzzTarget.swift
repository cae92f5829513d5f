import Foundation
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
    /// The SDP Tutti writes for a sending connection whose names and numbers a remote peer reported
    /// (`SDPFuzzInput` lays the input out).
    case sdp

    /// Runs one input.
    func run(_ bytes: UnsafeRawBufferPointer) {
        switch self {
        case .rtp: Self.rtp(bytes)
        case .control: Self.control(bytes)
        case .linkDiscovery: Self.linkDiscovery(bytes)
        case .linkMeasurement: Self.linkMeasurement(bytes)
        case .jitterBuffer: Self.jitterBuffer(bytes)
        case .noise: Self.noise(bytes)
        case .sdp: Self.sdp(bytes)
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
            var initiator = NoiseFuzzing.initiatorAwaitingAnswer
            _ = try? initiator.readAnswer(input)
        default:
            // The responder has read the member's first request; the input is what a stranger sends next.
            var channel = NoiseFuzzing.established.responderChannel
            let genuine = NoiseFuzzing.established.sealedRequest
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

    /// The first byte picks the format (fixed or adaptive latency, L16 or L24, 1 or 2 channels) and the
    /// concealment (silence, or repetition of the last period); then each
    /// 6 bytes are one step: a packet (sequence and timestamp moved by signed deltas, with or without a capture
    /// time, after some microseconds) or a read of a period. What comes out must be finite and within full
    /// scale (the payloads' samples are), and the counters must add up.
    private static func jitterBuffer(_ bytes: UnsafeRawBufferPointer) {
        guard let first = bytes.first else { return }
        let channels = first & 1 == 0 ? 2 : 1
        let format = StreamFormat(
            sampleRate: 48_000, channels: channels, sampleFormat: first & 2 == 0 ? .l16 : .l24, packetFrames: 64,
            targetLatencyFrames: 192, adaptiveLatencyFrames: first & 4 == 0 ? nil : 64...1_920)
        // Repetition in one input of four: its period search per gap is most of the target's time (the
        // coverage instrumentation of every comparison in its correlation loop), and the search is arithmetic on
        // samples, not state the fuzzer can steer.
        var buffer = JitterBuffer(format: format, concealment: first & 0x18 == 0x18 ? .repetition : .silence)
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

    /// Whatever the peer and port names, the origin host and the numbers, the SDP is the lines RFC 8866 §5
    /// orders (`v o s c t m`, then the media attributes), each `<letter>=<value>` ending in CRLF, with no CR,
    /// LF or NUL inside a value (no injected line) and no empty field in `o=`; one `m=` line; the crypto
    /// line, when there is a key, once and carrying the key; each attribute once, naming the payload type; and
    /// the addresses, port, id and packet time are the summary's.
    private static func sdp(_ bytes: UnsafeRawBufferPointer) {
        let input = SDPFuzzInput(bytes: bytes)
        let summary = input.summary
        guard
            let description = SessionDescription(
                connection: summary, originHost: input.originHost, direction: input.direction, srtpKey: input.key)
        else {
            return check(summary.role == .receiving || summary.rtpDestination == nil, "no SDP for a sending connection")
        }
        check(summary.role == .sending && summary.rtpDestination != nil, "an SDP for a connection without a destination")
        let lines = description.lines
        check(description.text == lines.map { $0 + "\r\n" }.joined(), "the text is not the lines, each ending in CRLF")
        for line in lines {
            let utf8 = Array(line.utf8)
            let breaks: Set<UInt8> = [0x0D, 0x0A, 0]
            check(utf8.count >= 2 && (0x61...0x7A).contains(utf8[0]) && utf8[1] == 0x3D, "not a <type>=<value> line: \(utf8)")
            check(!utf8.contains(where: breaks.contains), "CR, LF or NUL inside a line: \(utf8)")
        }
        let types = lines.map { String(UnicodeScalar($0.utf8.first!)) }
        check(Array(types.prefix(6)) == ["v", "o", "s", "c", "t", "m"], "session lines out of order: \(types)")
        check(types.dropFirst(6).allSatisfy { $0 == "a" }, "a line after m= that is not an attribute: \(types)")
        check(lines[0] == "v=0" && lines[4] == "t=0 0", "v= or t= changed: \(lines)")

        // Fields split at the space byte, as SDP readers split them (a combining mark after a space would join
        // it in one Character).
        func fields(_ line: String) -> [String] {
            line.utf8.dropFirst(2).split(separator: 0x20, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        }
        let origin = fields(lines[1])
        let destination = input.destination
        let originType = IPAddress(parsing: input.originHost)?.isIPv6 == true ? "IP6" : "IP4"
        check(origin.count == 6 && origin.allSatisfy { !$0.isEmpty }, "o= does not have six fields: \(lines[1].utf8.map { $0 })")
        check(
            Array(origin.prefix(5)) == ["-", "\(input.connectionID)", "0", "IN", originType],
            "o= does not name the connection: \(lines[1])")
        check(lines[2].count > 2, "an empty s=")
        let addressType = destination.address.isIPv6 ? "IP6" : "IP4"
        let connection = fields(lines[3])
        check(
            connection.count == 3 && connection[0] == "IN" && connection[1] == addressType
                && IPAddress(parsing: connection[2]) == destination.address,
            "c= is not the destination: \(lines[3])")
        let profile = input.key == nil ? "RTP/AVP" : "RTP/SAVP"
        let pt = input.payloadType
        check(lines[5] == "m=audio \(destination.port) \(profile) \(pt)", "m= is not the stream: \(lines[5])")
        check(types.filter { $0 == "m" }.count == 1, "more than one m= line")

        var attributes = Array(lines.dropFirst(6))
        if let key = input.key {
            let crypto = "a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:"
            check(attributes.first?.hasPrefix(crypto) == true, "no crypto line first: \(attributes)")
            check(attributes.filter { $0.hasPrefix("a=crypto") }.count == 1, "more than one crypto line")
            let base64 = String(attributes.removeFirst().dropFirst(crypto.count))
            check(Data(base64Encoded: base64).map { Array($0) } == key, "the crypto line is not the key: \(base64)")
        } else {
            check(!attributes.contains { $0.hasPrefix("a=crypto") }, "a crypto line without a key")
        }
        let format = input.format
        let rtpmap =
            format.sampleFormat == .opus
            ? "a=rtpmap:\(pt) opus/48000/2" : "a=rtpmap:\(pt) \(format.sampleFormat.rawValue)/\(format.sampleRate)/\(format.channels)"
        check(attributes.first == rtpmap, "rtpmap is not the format: \(attributes) for \(format)")
        attributes.removeFirst()
        if attributes.first?.hasPrefix("a=fmtp:") == true {
            check(format.sampleFormat == .opus, "fmtp on a PCM stream")
            check(attributes.removeFirst().hasPrefix("a=fmtp:\(pt) "), "fmtp names another payload type")
        }
        check(attributes.count == 2 && attributes[1] == "a=\(input.direction.rawValue)", "attributes after rtpmap: \(attributes)")
        // The packet time: at most three decimals, no trailing zero, within half a microsecond of the exact one.
        let ptime = attributes[0].dropFirst("a=ptime:".count)
        check(
            attributes[0].hasPrefix("a=ptime:") && !ptime.hasSuffix(".") && !(ptime.contains(".") && ptime.hasSuffix("0")),
            "ptime: \(ptime)")
        let decimals = ptime.split(separator: ".").dropFirst().first?.count ?? 0
        let exact = Double(format.packetFrames) * 1000 / Double(format.sampleRate)
        check(decimals <= 3 && Double(ptime).map { abs($0 - exact) <= 0.0005 + 1e-9 } == true, "ptime \(ptime) for \(exact) ms")
    }

    /// Traps with `what` when `condition` fails: libFuzzer saves the input that did it.
    private static func check(_ condition: Bool, _ what: @autoclosure () -> String) {
        if !condition { fatalError("fuzz invariant broken: \(what())") }
    }
}
