#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import TuttiCore

/// An RFC 8866 session description (SDP) of one Tutti stream: what a standard RTP receiver (ffmpeg,
/// GStreamer, PipeWire's RTP source) needs to play it.
///
/// The text has one media section, `m=audio PORT RTP/AVP PT`, at the stream's destination (`c=`), with:
/// - PCM: `a=rtpmap:PT L16/RATE/CHANNELS` or `L24/…` (RFC 3551 §4.5.11, RFC 3190 §4: big-endian, interleaved);
/// - Opus: `a=rtpmap:PT opus/48000/2` whatever the channel count (RFC 7587 §7), and `a=fmtp:PT` with
///   `stereo=1;sprop-stereo=1` for a stereo stream, `useinbandfec=1` when the encoder codes FEC, and
///   `maxaveragebitrate=` the encoder's bitrate;
/// - `a=ptime:` the packet duration in milliseconds, up to three decimals (RFC 8866 allows a real number:
///   64 frames at 48 kHz are `1.333`);
/// - the direction, `a=recvonly` by default: the file is the receiver's.
///
/// Tutti packets carry an RFC 8285 header extension (ID 1, capture time) that no `a=extmap` declares:
/// it has no registered URI, and RTP receivers skip extensions they were not told about (RFC 8285 §4.1;
/// checked with ffmpeg). `o=` uses `sessionID` as both id and version 0, so one connection always
/// describes itself the same way. Lines end with CRLF (RFC 8866 §5). Pure value; thread-safe: yes.
public struct SessionDescription: Hashable, Sendable, CustomStringConvertible {
    /// The media direction attribute, from the point of view of whoever reads the file.
    public enum Direction: String, Hashable, Sendable {
        case receiveOnly = "recvonly"
        case sendOnly = "sendonly"
    }

    /// `o=` session id (a connection's 64-bit id).
    public var sessionID: UInt64
    /// `s=`: one line of text (control characters become spaces; empty becomes a single space, RFC 8866 §5.3).
    public var sessionName: String
    /// `o=` unicast address of the sending machine: a numeric address (its type picks `IP4`/`IP6`) or a
    /// host name (written as given, type `IP4`). Spaces and control characters become `-`, and so does an
    /// empty host, so `o=` always has its six fields.
    public var originHost: String
    public var destination: RTPDestination
    public var payloadType: UInt8
    public var format: StreamFormat
    public var direction: Direction
    /// The SRTP master key and salt of an `AES_CM_128_HMAC_SHA1_80` stream (30 bytes): the media line says
    /// `RTP/SAVP` and `a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:KEY` carries it (SDES, RFC 4568), as ffmpeg
    /// and GStreamer read it. A file holding it must be its reader's alone. Nil: plain RTP.
    public var srtpKey: [UInt8]?

    public init(
        sessionID: UInt64, sessionName: String, originHost: String, destination: RTPDestination, payloadType: UInt8,
        format: StreamFormat, direction: Direction = .receiveOnly, srtpKey: [UInt8]? = nil
    ) {
        self.srtpKey = srtpKey
        self.sessionID = sessionID
        self.sessionName = sessionName
        self.originHost = originHost
        self.destination = destination
        self.payloadType = payloadType
        self.format = format
        self.direction = direction
    }

    /// The description of a sending connection, as its summary reports it; `nil` when the summary has no
    /// RTP destination or payload type (a receiving end, or a peer from before they were reported).
    public init?(connection: ConnectionSummary, originHost: String, direction: Direction = .receiveOnly, srtpKey: [UInt8]? = nil) {
        guard connection.role == .sending, let destination = connection.rtpDestination,
            let payloadType = connection.payloadType, let id = UInt64(connection.id.rawValue, radix: 16)
        else { return nil }
        self.init(
            sessionID: id, sessionName: "Tutti \(connection.source)", originHost: originHost, destination: destination,
            payloadType: payloadType, format: connection.format, direction: direction, srtpKey: srtpKey)
    }

    /// The lines, without line ends.
    public var lines: [String] {
        let originType = IPAddress(parsing: originHost)?.isIPv6 == true ? "IP6" : "IP4"
        var origin = String(originHost.unicodeScalars.map { $0.value <= 0x20 || $0.value == 0x7F ? "-" : Character($0) })
        if origin.isEmpty { origin = "-" }
        var name = String(sessionName.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? " " : Character($0) })
        if name.isEmpty { name = " " }
        let addressType = destination.address.isIPv6 ? "IP6" : "IP4"
        var lines = [
            "v=0",
            "o=- \(sessionID) 0 IN \(originType) \(origin)",
            "s=\(name)",
            "c=IN \(addressType) \(destination.address)",
            "t=0 0",
            "m=audio \(destination.port) \(srtpKey == nil ? "RTP/AVP" : "RTP/SAVP") \(payloadType)",
        ]
        if let srtpKey { lines.append("a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:\(Data(srtpKey).base64EncodedString())") }
        let pt = payloadType
        switch format.sampleFormat {
        case .l16, .l24:
            lines.append("a=rtpmap:\(pt) \(format.sampleFormat.rawValue)/\(format.sampleRate)/\(format.channels)")
        case .opus:
            lines.append("a=rtpmap:\(pt) opus/48000/2")
            var parameters = [String]()
            if format.channels == 2 { parameters += ["stereo=1", "sprop-stereo=1"] }
            if format.opus?.inBandFEC == true { parameters.append("useinbandfec=1") }
            if let bitrate = format.opus?.bitrate { parameters.append("maxaveragebitrate=\(bitrate)") }
            if !parameters.isEmpty { lines.append("a=fmtp:\(pt) " + parameters.joined(separator: ";")) }
        }
        lines.append("a=ptime:\(Self.milliseconds(frames: format.packetFrames, rate: format.sampleRate))")
        lines.append("a=\(direction.rawValue)")
        return lines
    }

    /// The SDP text: every line ends with CRLF.
    public var text: String { lines.map { $0 + "\r\n" }.joined() }

    public var description: String { text }

    /// `frames` at `rate` in milliseconds, to three decimals without trailing zeros: 1.333, 2.5, 20.
    static func milliseconds(frames: Int, rate: Int) -> String {
        let thousandths = (frames * 1_000_000 + rate / 2) / rate
        let whole = thousandths / 1000
        var fraction = thousandths % 1000
        guard fraction != 0 else { return "\(whole)" }
        var digits = 3
        while fraction % 10 == 0 {
            fraction /= 10
            digits -= 1
        }
        let text = String(fraction)
        return "\(whole)." + String(repeating: "0", count: digits - text.count) + text
    }
}
