import TuttiCore
import TuttiWire

/// The `sdp` target's input: a connection summary as a remote peer reports it, the origin host a peer is
/// reached at, and the SRTP key a connect chose, laid out in bytes (`init(bytes:)` reads them, `bytes`
/// writes them for the seeds).
///
/// Layout: a flags byte, then fixed fields (`fixedSize` bytes in all; a shorter input reads as if padded
/// with zeros), then the free text: the source peer, its port and the origin host, separated by 0xFF (a
/// byte no UTF-8 text has; invalid UTF-8 in them reads as U+FFFD). The numbers are brought into the ranges
/// a peer's control validation lets through (`StreamLimits`, `OpusSettings`), so what the writer sees is
/// what a peer could send; the text is not: the writer must keep any text on its line, whoever checked it
/// before. Thread-safe: yes (values only).
struct SDPFuzzInput {
    /// Flags: 1 the receiving end, 2 no RTP destination, 4 an SRTP key, 8 an IPv6 destination, 16
    /// `sendonly`, 32 and 64 the sample format (L16, L24, Opus, L16), 128 Opus in-band FEC.
    var flags: UInt8
    var connectionID: UInt64
    /// 16 address bytes; an IPv4 destination uses the first 4.
    var address: [UInt8]
    var port: UInt16
    var payloadType: UInt8
    /// Any 32 bits: the sample rate is `StreamLimits.sampleRates`' lower bound plus this, modulo its size.
    var sampleRate: UInt32
    var channels: UInt8
    var packetFrames: UInt16
    var opusBitrate: UInt32 = 0
    var srtpKey: [UInt8] = Array(1...30)
    var peer: String
    var portName: String
    var originHost: String

    /// Flags (1), connection id (8), address (16), port (2), payload type (1), rate (4), channels (1),
    /// packet frames (2), Opus bitrate (4), SRTP key (30).
    static let fixedSize = 69

    /// The input's bytes (what `init(bytes:)` reads back).
    var bytes: [UInt8] {
        func bigEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
            (0..<(T.bitWidth / 8)).reversed().map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) }
        }
        var bytes = [flags] + bigEndian(connectionID) + address + bigEndian(port) + [payloadType] + bigEndian(sampleRate)
        bytes += [channels] + bigEndian(packetFrames) + bigEndian(opusBitrate) + srtpKey
        return bytes + Array(peer.utf8) + [0xFF] + Array(portName.utf8) + [0xFF] + Array(originHost.utf8)
    }

    var destination: RTPDestination {
        let word = { (range: Range<Int>) in address[range].reduce(UInt64(0)) { $0 << 8 | UInt64($1) } }
        let ip: IPAddress = flags & 8 == 0 ? .ipv4(UInt32(word(0..<4))) : .ipv6(high: word(0..<8), low: word(8..<16))
        return RTPDestination(address: ip, port: port)
    }

    var key: [UInt8]? { flags & 4 == 0 ? nil : srtpKey }

    var direction: SessionDescription.Direction { flags & 16 == 0 ? .receiveOnly : .sendOnly }

    var format: StreamFormat {
        let sampleFormat: SampleFormat = [.l16, .l24, .opus, .l16][Int(flags >> 5 & 3)]
        guard sampleFormat == .opus else {
            let rates = StreamLimits.sampleRates
            let rate = rates.lowerBound + Int(sampleRate) % rates.count
            let frames = StreamLimits.packetFrames.lowerBound + Int(packetFrames) % StreamLimits.packetFrames.count
            return StreamFormat(
                sampleRate: rate, channels: 1 + Int(channels) % StreamLimits.channels.upperBound, sampleFormat: sampleFormat,
                packetFrames: frames, targetLatencyFrames: frames * 3)
        }
        let durations = OpusSettings.FrameDuration.allCases
        let duration = durations[Int(packetFrames) % durations.count]
        let bitrate = OpusSettings.bitrateRange.lowerBound + Int(opusBitrate) % OpusSettings.bitrateRange.count
        let opus = OpusSettings(
            frameDuration: duration, bitrate: bitrate, inBandFEC: flags & 128 != 0 && duration.canCarrySILK,
            application: flags & 128 != 0 ? .audio : .restrictedLowDelay)
        return StreamFormat(
            sampleRate: OpusSettings.sampleRate, channels: 1 + Int(channels) % 2, sampleFormat: .opus,
            packetFrames: duration.framesPerChannel, targetLatencyFrames: duration.framesPerChannel * 3, opus: opus)
    }

    /// The summary a peer would report for the input.
    var summary: ConnectionSummary {
        let hex = String(connectionID, radix: 16)
        let noDestination = flags & 2 != 0
        return ConnectionSummary(
            id: ConnectionID(String(repeating: "0", count: 16 - hex.count) + hex)!, role: flags & 1 == 0 ? .sending : .receiving,
            source: PortReference(peer: peer, port: portName), destination: destination.portReference, format: format,
            state: .playing, rtpDestination: noDestination ? nil : destination, payloadType: noDestination ? nil : payloadType)
    }
}

extension SDPFuzzInput {
    /// Reads an input (the memberwise initializer, which the seeds use, stays: this one is in an extension).
    init(bytes: UnsafeRawBufferPointer) {
        var fixed = [UInt8](bytes.prefix(Self.fixedSize))
        fixed += [UInt8](repeating: 0, count: Self.fixedSize - fixed.count)
        func integer<T: FixedWidthInteger>(_ offset: Int, _: T.Type) -> T {
            fixed[offset..<(offset + T.bitWidth / 8)].reduce(T(0)) { $0 << 8 | T($1) }
        }
        flags = fixed[0]
        connectionID = integer(1, UInt64.self)
        address = Array(fixed[9..<25])
        port = integer(25, UInt16.self)
        payloadType = fixed[27]
        sampleRate = integer(28, UInt32.self)
        channels = fixed[32]
        packetFrames = integer(33, UInt16.self)
        opusBitrate = integer(35, UInt32.self)
        srtpKey = Array(fixed[39..<69])
        let text = bytes.count > Self.fixedSize ? Array(bytes[Self.fixedSize...]) : []
        var fields = text.split(separator: 0xFF, maxSplits: 2, omittingEmptySubsequences: false).map {
            String(decoding: $0, as: UTF8.self)
        }
        fields += Array(repeating: "", count: 3 - fields.count)
        (peer, portName, originHost) = (fields[0], fields[1], fields[2])
    }
}
