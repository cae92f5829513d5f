// Errors of the Ableton Link wire codec (discovery `_asdp_v` and measurement `_link_v` datagrams).

/// Why a Link datagram could not be decoded, or a Link message could not be encoded.
///
/// Every malformed input maps to one specific case; the decoders never trap. A receiver drops the
/// datagram on any of them (as Link drops a malformed message whole), so the cases exist for tests,
/// logging and counters rather than for recovery.
package enum LinkWireError: Error, Hashable, Sendable {
    /// The datagram is shorter than its fixed header (20 bytes for discovery, 9 for measurement).
    case truncated(needed: Int, got: Int)
    /// The first 8 bytes are not the protocol's magic (`_asdp_v\x01` or `_link_v\x01`), which also
    /// covers another protocol version.
    case badMagic
    /// The type byte is none of the protocol's types (discovery: 1, 2, 3; measurement: 1, 2).
    case unknownMessageType(UInt8)
    /// A discovery header's session group id is not 0; Link ignores such messages.
    case nonZeroGroup(UInt16)
    /// 1 to 7 bytes remain after the last complete entry: too few for an entry's key and size.
    case truncatedEntryHeader(offset: Int, remaining: Int)
    /// An entry's declared size runs past the end of the datagram (`available` bytes follow its header).
    case entryOverrunsDatagram(key: LinkEntryKey, size: UInt32, available: Int)
    /// A known entry's size is not its documented size (e.g. `tmln` of 23 or 25 bytes, `mep4` of 5).
    case badEntrySize(key: LinkEntryKey, size: UInt32)
    /// A required entry is absent: `tmln` or `sess` in ALIVE/RESPONSE, `sess` or `__gt` in a PONG,
    /// `__ht` in a PING.
    case missingEntry(LinkEntryKey)
    /// An ALIVE/RESPONSE carries neither `mep4` nor `mep6`, so its sender cannot be measured.
    case missingMeasurementEndpoint
    /// The datagram is 512 bytes or longer; Link never builds one and its receive buffer is 512 bytes.
    /// Raised by both the decoders and the encoders.
    case oversize(Int)
    /// A PING payload (after the 9-byte header), or the echoed payload of a PONG, is longer than 32
    /// bytes; Link's responder ignores such pings.
    case pingPayloadTooLarge(Int)
    /// The caller's buffer is smaller than the encoded message.
    case bufferTooSmall(needed: Int, got: Int)
    /// Encoding an ALIVE or RESPONSE without a peer state.
    case missingState
    /// Encoding a BYEBYE that has a peer state (a BYEBYE carries none).
    case unexpectedState
    /// Encoding a state message whose `unknownEntries` contain a key the codec writes from the state
    /// (`tmln`, `sess`, `stst`, `mep4`/`mep6`, `aep4`/`aep6`): it would send a duplicate.
    case unknownEntryHasKnownKey(LinkEntryKey)
}
