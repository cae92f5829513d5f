// Link measurement datagrams (protocol `_link_v`, version 1): PING and PONG, used to estimate a peer's
// ghost clock. Encoding, decoding and size live together here.
//
// Layout: 9-byte header (magic `_link_v\x01`, type u8: 1 PING, 2 PONG) followed by entries framed as in
// discovery. PING: `__ht` (host time) and, from the second ping of a chain on, `_pgt` (the ghost time of
// the previous PONG): 25 or 41 bytes. PONG: `sess`, `__gt` (the responder's ghost time), then the PING's
// payload copied verbatim: 57 or 73 bytes.

/// One Link measurement datagram.
///
/// Decoding: a PING needs `__ht`, may carry `_pgt`, other keys are skipped, and its payload (after the
/// header) must be at most 32 bytes, the limit Link's responder applies. A PONG needs `sess` and
/// `__gt`; when they are its first two entries (as every responder writes them) everything after them is
/// the echoed ping payload, kept verbatim; otherwise the remaining entries, in order, form the echo.
/// The echo must be framed entries of at most 32 bytes, so a PONG built from a prefix of a ping's
/// entries is valid (a 41-byte PONG echoes nothing, and yields no clock sample). Entries of known keys
/// (`sess`, `__gt`, `__ht`, `_pgt`) must be 8 bytes; a repeated key overrides the earlier one.
///
/// Round trips: canonical datagrams (every one Link sends) re-encode byte for byte. A PING's unknown
/// entries or unusual order are not kept (the ping's content matters only to its sender, and a
/// responder echoes the raw bytes, see `writePong(answering:sessionID:ghostTime:into:)`).
///
/// Thread-safe: a value. Realtime-safe: `encode(into:)`, `encodedSize` and `writePong(answering:…)`;
/// `decode` of a PONG and `encode()` allocate.
package enum LinkMeasurementMessage: Hashable, Sendable {
    /// Sent by the peer that measures: its host time now, and the ghost time of the PONG that triggered
    /// this ping (`nil` for the first ping of a chain, and after a timeout).
    case ping(hostTime: Int64, previousGhostTime: Int64?)
    /// The answer: the responder's session and ghost time, then the ping's payload bytes.
    case pong(sessionID: SessionID, ghostTime: Int64, echoedPayload: [UInt8])

    /// `_link_v` followed by the version byte 1, as a big-endian integer.
    package static let magic: UInt64 = 0x5f6c_696e_6b5f_7601
    /// Size of the fixed header.
    package static let headerSize = 9
    /// The largest ping payload (after the header) a responder answers: `__ht` plus `_pgt`.
    package static let maxPingPayloadSize = 32
    /// Datagrams must be strictly shorter than this.
    package static let sizeLimit = 512

    static let pingType: UInt8 = 1
    static let pongType: UInt8 = 2
    /// Key, size and 8-byte value.
    static let timeEntrySize = 16

    // MARK: Encoding

    /// Bytes `encode` produces: 25 or 41 for a PING, 41 plus the echo for a PONG.
    package var encodedSize: Int {
        switch self {
        case .ping(_, let previousGhostTime): Self.headerSize + Self.timeEntrySize * (previousGhostTime == nil ? 1 : 2)
        case .pong(_, _, let echo): Self.headerSize + 2 * Self.timeEntrySize + echo.count
        }
    }

    /// Writes the datagram at the start of `buffer`.
    ///
    /// Realtime-safe: yes (no allocation, no lock).
    /// - Returns: the number of bytes written (`encodedSize`).
    /// - Throws: `.bufferTooSmall`; for a PONG whose echo is not a valid ping payload,
    ///   `.pingPayloadTooLarge` or the framing error found in it.
    package func encode(into buffer: UnsafeMutableRawBufferPointer) throws(LinkWireError) -> Int {
        try validate()
        let size = encodedSize
        guard buffer.count >= size else { throw .bufferTooSmall(needed: size, got: buffer.count) }
        return write(to: buffer)
    }

    /// The datagram as a new array. Allocates: control plane only.
    package func encode() throws(LinkWireError) -> [UInt8] {
        try validate()
        return [UInt8](unsafeUninitializedCapacity: encodedSize) { buffer, count in
            count = write(to: UnsafeMutableRawBufferPointer(buffer))
        }
    }

    private func validate() throws(LinkWireError) {
        guard case .pong(_, _, let echo) = self else { return }
        try echo.withLinkWireBytes { raw throws(LinkWireError) in try Self.validateEcho(raw) }
    }

    private func write(to buffer: UnsafeMutableRawBufferPointer) -> Int {
        var writer = LinkWireWriter(buffer)
        writer.u64(Self.magic)
        switch self {
        case .ping(let hostTime, let previousGhostTime):
            writer.u8(Self.pingType)
            writer.entryHeader(.hostTime, size: 8)
            writer.i64(hostTime)
            if let previousGhostTime {
                writer.entryHeader(.previousGhostTime, size: 8)
                writer.i64(previousGhostTime)
            }
        case .pong(let sessionID, let ghostTime, let echo):
            writer.u8(Self.pongType)
            writer.entryHeader(.sessionID, size: 8)
            writer.u64(sessionID.rawValue)
            writer.entryHeader(.ghostTime, size: 8)
            writer.i64(ghostTime)
            writer.bytes(echo)
        }
        return writer.offset
    }

    /// The responder's fast path: answers the PING datagram `ping` with a PONG written into `buffer`,
    /// copying the ping's payload without interpreting it (Link's responder rules: magic, type PING,
    /// payload of at most 32 bytes).
    ///
    /// Realtime-safe: yes (no allocation, no lock).
    /// - Returns: the PONG's length.
    /// - Throws: `.oversize`, `.truncated`, `.badMagic`, `.unknownMessageType` (also for a PONG),
    ///   `.pingPayloadTooLarge`, `.bufferTooSmall`.
    package static func writePong(
        answering ping: UnsafeRawBufferPointer, sessionID: SessionID, ghostTime: Int64,
        into buffer: UnsafeMutableRawBufferPointer
    ) throws(LinkWireError) -> Int {
        guard ping.count < sizeLimit else { throw .oversize(ping.count) }
        guard ping.count >= headerSize else { throw .truncated(needed: headerSize, got: ping.count) }
        guard LinkWireBytes.hasMagic(ping, magic) else { throw .badMagic }
        guard ping[8] == pingType else { throw .unknownMessageType(ping[8]) }
        let payload = UnsafeRawBufferPointer(rebasing: ping[headerSize...])
        guard payload.count <= maxPingPayloadSize else { throw .pingPayloadTooLarge(payload.count) }
        let size = headerSize + 2 * timeEntrySize + payload.count
        guard buffer.count >= size else { throw .bufferTooSmall(needed: size, got: buffer.count) }
        var writer = LinkWireWriter(buffer)
        writer.u64(magic)
        writer.u8(pongType)
        writer.entryHeader(.sessionID, size: 8)
        writer.u64(sessionID.rawValue)
        writer.entryHeader(.ghostTime, size: 8)
        writer.i64(ghostTime)
        writer.bytes(payload)
        return writer.offset
    }

    // MARK: Decoding

    /// Decodes one measurement datagram.
    ///
    /// Never traps on any input. Allocates for a PONG's echo (control plane).
    /// - Throws: the specific `LinkWireError` for every malformed datagram (see the type's rules).
    package static func decode(_ bytes: UnsafeRawBufferPointer) throws(LinkWireError) -> LinkMeasurementMessage {
        guard bytes.count < sizeLimit else { throw .oversize(bytes.count) }
        guard bytes.count >= headerSize else { throw .truncated(needed: headerSize, got: bytes.count) }
        guard LinkWireBytes.hasMagic(bytes, magic) else { throw .badMagic }
        switch bytes[8] {
        case pingType:
            let payloadSize = bytes.count - headerSize
            guard payloadSize <= maxPingPayloadSize else { throw .pingPayloadTooLarge(payloadSize) }
            let times = try readTimes(bytes, from: headerSize)
            guard let hostTime = times.hostTime else { throw .missingEntry(.hostTime) }
            return .ping(hostTime: hostTime, previousGhostTime: times.previousGhostTime)
        case pongType:
            return try decodePong(bytes)
        default:
            throw .unknownMessageType(bytes[8])
        }
    }

    /// Decodes one measurement datagram held in an array.
    package static func decode(_ bytes: [UInt8]) throws(LinkWireError) -> LinkMeasurementMessage {
        try bytes.withLinkWireBytes { raw throws(LinkWireError) in try decode(raw) }
    }

    private static func decodePong(_ bytes: UnsafeRawBufferPointer) throws(LinkWireError) -> LinkMeasurementMessage {
        var sessionID: SessionID?
        var ghostTime: Int64?
        var leading = 0  // how many entries so far were, in order, `sess` then `__gt`
        var echoStart: Int?
        var scattered: [UInt8] = []  // the echo when `sess`/`__gt` are not the two leading entries
        var walker = LinkWireEntryWalker(bytes, from: headerSize)
        var index = 0
        while let entry = try walker.next() {
            defer { index += 1 }
            switch entry.key {
            case .sessionID:
                try LinkWireEntryWalker.expect(entry, size: 8)
                sessionID = SessionID(rawValue: LinkWireBytes.u64(bytes, entry.valueStart))
                if index == 0 { leading = 1 }
            case .ghostTime:
                try LinkWireEntryWalker.expect(entry, size: 8)
                ghostTime = LinkWireBytes.i64(bytes, entry.valueStart)
                if index == 1 && leading == 1 {
                    leading = 2
                    echoStart = entry.valueEnd
                }
            case .hostTime, .previousGhostTime:
                try LinkWireEntryWalker.expect(entry, size: 8)
            default:
                break
            }
            if entry.key != .sessionID && entry.key != .ghostTime {
                scattered.append(contentsOf: bytes[entry.start..<entry.valueEnd])
            }
        }
        guard let sessionID else { throw .missingEntry(.sessionID) }
        guard let ghostTime else { throw .missingEntry(.ghostTime) }
        let echo: [UInt8]
        if leading == 2, let echoStart {
            echo = Array(bytes[echoStart...])
        } else {
            echo = scattered
        }
        guard echo.count <= maxPingPayloadSize else { throw .pingPayloadTooLarge(echo.count) }
        return .pong(sessionID: sessionID, ghostTime: ghostTime, echoedPayload: echo)
    }

    /// Reads `__ht` and `_pgt` from framed entries starting at `offset` (other keys skipped).
    static func readTimes(
        _ bytes: UnsafeRawBufferPointer, from offset: Int
    ) throws(LinkWireError) -> (hostTime: Int64?, previousGhostTime: Int64?) {
        var hostTime: Int64?
        var previousGhostTime: Int64?
        var walker = LinkWireEntryWalker(bytes, from: offset)
        while let entry = try walker.next() {
            switch entry.key {
            case .hostTime:
                try LinkWireEntryWalker.expect(entry, size: 8)
                hostTime = LinkWireBytes.i64(bytes, entry.valueStart)
            case .previousGhostTime:
                try LinkWireEntryWalker.expect(entry, size: 8)
                previousGhostTime = LinkWireBytes.i64(bytes, entry.valueStart)
            default:
                break
            }
        }
        return (hostTime, previousGhostTime)
    }

    /// Checks that `echo` is a payload a responder would echo: at most 32 bytes of framed entries.
    static func validateEcho(_ echo: UnsafeRawBufferPointer) throws(LinkWireError) {
        guard echo.count <= maxPingPayloadSize else { throw .pingPayloadTooLarge(echo.count) }
        _ = try readTimes(echo, from: 0)
    }

    // MARK: Reading a PONG's echo

    /// The `__ht` echoed in a PONG (the pinger's host time when it sent the ping); `nil` for a PING or
    /// when the echo carries none.
    package var echoedHostTime: Int64? { echoedTimes?.hostTime }

    /// The `_pgt` echoed in a PONG (the ghost time of the PONG before it); `nil` for a PING, for the
    /// answer to the first ping of a chain, or when the echo is malformed.
    package var echoedPreviousGhostTime: Int64? { echoedTimes?.previousGhostTime }

    private var echoedTimes: (hostTime: Int64?, previousGhostTime: Int64?)? {
        guard case .pong(_, _, let echo) = self else { return nil }
        return try? echo.withLinkWireBytes { raw throws(LinkWireError) in try Self.readTimes(raw, from: 0) }
    }

    /// The payload a PING carries after its header (what its PONG echoes); `nil` for a PONG.
    package var pingPayload: [UInt8]? {
        guard case .ping = self, let bytes = try? encode() else { return nil }
        return Array(bytes[Self.headerSize...])
    }

    /// The PONG a responder in `sessionID` at ghost time `ghostTime` sends for this PING; `nil` for a PONG.
    package func pong(sessionID: SessionID, ghostTime: Int64) -> LinkMeasurementMessage? {
        guard let pingPayload else { return nil }
        return .pong(sessionID: sessionID, ghostTime: ghostTime, echoedPayload: pingPayload)
    }
}
