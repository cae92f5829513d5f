#if !FUZZING
import TuttiClock
import TuttiCore
import TuttiIO
import TuttiWire

/// Each fuzz target's seed corpus: valid inputs from the project's own encoders and the golden frames of the
/// Link reference captures (reference/link-protocol.md), which the fuzzer then mutates.
enum FuzzSeeds {
    /// Writes every target's seeds under `directory/TARGET/` and returns how many it wrote.
    static func write(under directory: String) throws(SystemError) -> Int {
        var count = 0
        for target in FuzzTarget.allCases {
            let folder = "\(directory)/\(target.rawValue)"
            try StateFiles.makeDirectories(folder)
            for (index, seed) in seeds(for: target).enumerated() {
                try TextFile.writeBytes(seed, to: "\(folder)/seed-\(index)")
                count += 1
            }
        }
        return count
    }

    static func seeds(for target: FuzzTarget) -> [[UInt8]] {
        switch target {
        case .rtp: rtp
        case .control: control
        case .linkDiscovery: linkDiscovery
        case .linkMeasurement: linkMeasurement
        case .jitterBuffer: jitterBuffer
        case .noise: noise
        case .sdp: sdp
        }
    }

    /// The fixed peers' real handshake: the first and third frames as one input, the answer, and the member's
    /// first request again (a replay, which the target must not open).
    private static var noise: [[UInt8]] {
        var (frames, _, member) = NoiseFuzzing.handshake()
        let first = (try? member.seal(NoiseFuzzing.request)) ?? []
        return [[0] + frames[0] + frames[2], [1] + frames[1], [2] + first]
    }

    /// Sending connections of each format and address family (with and without SRTP), a receiving end, and
    /// names that try to break a line (CRLF and a media line, NUL, Unicode line separators, a combining mark
    /// after a space, an empty origin).
    private static var sdp: [[UInt8]] {
        let v4: [UInt8] = [198, 18, 0, 2] + [UInt8](repeating: 0, count: 12)
        let v6: [UInt8] = [0x20, 0x01, 0, 2] + [UInt8](repeating: 0, count: 11) + [0x22]
        // 48 kHz is 40 000 above the lowest rate; packet frames are 16 above theirs.
        let inputs = [
            SDPFuzzInput(
                flags: 0, connectionID: 0x0011_2233_AABB_CCDD, address: v4, port: 5_004, payloadType: 96, sampleRate: 40_000,
                channels: 1, packetFrames: 48, peer: "stage", portName: "out", originHost: "198.18.0.1"),
            SDPFuzzInput(
                flags: 4 | 8 | 16 | 32, connectionID: 1, address: v6, port: 6_000, payloadType: 127, sampleRate: 88_000, channels: 7,
                packetFrames: 0, peer: "stage", portName: "multi", originHost: "2001:2::1"),
            SDPFuzzInput(
                flags: 4 | 64 | 128, connectionID: 0xFF, address: v4, port: 5_006, payloadType: 111, sampleRate: 0, channels: 1,
                packetFrames: 2, opusBitrate: 90_000, peer: "foh", portName: "mix", originHost: "foh.local"),
            SDPFuzzInput(
                flags: 1, connectionID: 2, address: v4, port: 5_004, payloadType: 96, sampleRate: 40_000, channels: 1,
                packetFrames: 48, peer: "stage", portName: "out", originHost: "198.18.0.1"),
            SDPFuzzInput(
                flags: 4, connectionID: 3, address: v4, port: 5_004, payloadType: 96, sampleRate: 40_000, channels: 1, packetFrames: 48,
                peer: "a\r\nm=video 9 RTP/AVP 0\r\na=crypto:1", portName: "out\u{0}\n", originHost: "bad host\r\nc=IN IP4 1.2.3.4"),
            SDPFuzzInput(
                flags: 8, connectionID: 4, address: v6, port: 1, payloadType: 96, sampleRate: 40_000, channels: 1, packetFrames: 48,
                peer: "\u{2028}\u{85}\u{FEFF}é", portName: " \u{301}", originHost: ""),
        ]
        return inputs.map(\.bytes)
    }

    private static var rtp: [[UInt8]] {
        let headers = [
            RTPHeader(payloadType: 96, sequenceNumber: 1, timestamp: 64, ssrc: 0x1234_5678),
            RTPHeader(marker: true, payloadType: 97, sequenceNumber: 65_535, timestamp: 0xFFFF_FFC0, ssrc: 7, captureTime: 1_234_567_890),
        ]
        var seeds = headers.map { header -> [UInt8] in
            var bytes = [UInt8](repeating: 0, count: header.encodedSize + 24)
            _ = bytes.withUnsafeMutableBytes { header.write(to: $0) }
            for index in header.encodedSize..<bytes.count { bytes[index] = UInt8(index & 0xFF) }
            return bytes
        }
        // Padding (3 bytes), two CSRCs, and a one-byte-header extension block with an unknown element.
        seeds.append([0xA2, 0x60, 0, 9, 0, 0, 1, 0, 0, 0, 0, 5, 0, 0, 0, 1, 0, 0, 0, 2, 0xAB, 0xCD, 0, 0, 3])
        seeds.append([0x90, 0x60, 0, 10, 0, 0, 2, 0, 0, 0, 0, 5, 0xBE, 0xDE, 0, 1, 0x21, 0xAA, 0xBB, 0, 0x55, 0x66])
        return seeds
    }

    private static var control: [[UInt8]] {
        let peer = PeerID("0123456789abcdef0123456789abcdef")!
        let presence = PeerPresence(id: peer, name: "stage", controlPort: 7_400)
        let source = PortReference(peer: "stage", port: "out")
        let destination = PortReference(peer: "foh", port: "in")
        let requests: [ControlRequest] = [
            .describe, .hello(presence), .bye(presence),
            .connect(
                ConnectRequest(
                    source: source, destination: destination, destinationEndpoints: [ControlEndpoint(host: "198.18.0.2", port: 7_400)],
                    options: ConnectOptions(sampleRate: 48_000, channels: 2, latencyMilliseconds: 4))),
            .disconnect(DisconnectRequest(source: source, destination: destination)),
            .rekey(
                RekeyNotice(
                    connectionID: ConnectionID("00000000000000a1")!,
                    mediaKey: MediaKeying(suite: "AEAD_AES_128_GCM", key: Array(0..<28)), senderIndex: 65_536 + 7)),
        ]
        var seeds = requests.enumerated().compactMap { index, request in
            try? Array(ControlCodec.encodeRequest(ControlEnvelope(id: UInt32(index + 1), message: request)).dropFirst(4))
        }
        let failure = ControlEnvelope<ControlResponse>(id: 9, message: .failure(ControlFailure(.busy, "try again")))
        seeds.append(Array(ControlCodec.encodeResponse(failure).dropFirst(4)))
        seeds.append(Array(ControlCodec.encodeResponse(ControlEnvelope(id: 10, message: .done)).dropFirst(4)))
        return seeds
    }

    /// Frame 21 of the reference captures: an ALIVE with tmln, sess, stst and mep4.
    static let frame21 = hex(
        "5f617364705f760101050000412277773c307056746d6c6e0000001800000000000a2c2b0000000000000270"
            + "00000000000000007365737300000008412277773c30705673747374000000110000000000000000000000000000000000"
            + "6d65703400000006c6120102ba07")
    /// Frame 37 of the reference captures: a PONG.
    static let frame37 = hex(
        "5f6c696e6b5f7601027365737300000008412277773c3070565f5f677400000008000000000000066d"
            + "5f5f6874000000080000000040ca1d585f7067740000000800000000000003ec")

    private static var linkDiscovery: [[UInt8]] {
        let state = LinkPeerState(
            timeline: Timeline(tempo: Tempo(bpm: 120), beatOrigin: Beats(microBeats: 0), timeOrigin: 1_000),
            sessionID: NodeID(rawValue: 0x4122_7777_3C30_7056), startStop: StartStopState(isPlaying: true, beats: Beats(4.0), timestamp: 9),
            measurementEndpoint: LinkEndpoint(ipv4: 198, 18, 0, 2, port: 20_000))
        let sender = NodeID(rawValue: 0x0102_0304_0506_0708)
        let messages: [LinkDiscoveryMessage] = [
            .alive(sender: sender, state: state), .response(sender: sender, state: state), .byebye(sender: sender),
        ]
        return [frame21] + messages.compactMap { try? $0.encode() }
    }

    private static var linkMeasurement: [[UInt8]] {
        let messages: [LinkMeasurementMessage] = [
            .ping(hostTime: 123_456, previousGhostTime: nil), .ping(hostTime: 123_456, previousGhostTime: 99),
            .pong(sessionID: NodeID(rawValue: 42), ghostTime: 77, echoedPayload: [1, 2, 3]),
        ]
        return [frame37] + messages.compactMap { try? $0.encode() }
    }

    /// A steady stream (packet, read, packet, read…), one with a lost and a late packet, and one with a jump.
    private static var jitterBuffer: [[UInt8]] {
        func steps(_ list: [(UInt8, Int8, Int8, UInt16, UInt8)]) -> [UInt8] {
            list.flatMap { [$0.0, UInt8(bitPattern: $0.1), UInt8(bitPattern: $0.2), UInt8($0.3 >> 8), UInt8($0.3 & 0xFF), $0.4] }
        }
        let steady = steps(Array(repeating: [(2, 1, 1, 1_333, 10), (1, 0, 0, 0, 63)], count: 12).flatMap { $0 })
        let lossy = steps([
            (2, 1, 1, 1_333, 0), (1, 0, 0, 0, 63), (2, 2, 2, 2_666, 0), (1, 0, 0, 0, 63), (2, -1, -1, 500, 0), (1, 0, 0, 10_000, 127),
        ])
        let jump = steps([(0, 1, 1, 1_333, 0), (1, 0, 0, 0, 63), (0, 100, 100, 1_333, 0), (0, 1, 1, 1_333, 0), (1, 0, 0, 60_000, 255)])
        return [[0] + steady, [6] + lossy, [0x1D] + jump]  // the jump with repetition (0x18)
    }

    private static func hex(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var high: UInt8?
        for character in text {
            guard let digit = character.hexDigitValue else { continue }
            if let first = high {
                bytes.append(first << 4 | UInt8(digit))
                high = nil
            } else {
                high = UInt8(digit)
            }
        }
        return bytes
    }
}
#endif
