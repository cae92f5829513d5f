// Link discovery datagrams (protocol `_asdp_v`, version 1): ALIVE, RESPONSE and BYEBYE, with the peer
// state they carry. Encoding, decoding and size live together here.
//
// Layout: 20-byte header (magic `_asdp_v\x01`, type u8, ttl u8, group id u16 = 0, sender NodeID) followed
// by entries (4-byte key, u32 big-endian size, value). Known entries: `tmln` (24), `sess` (8), `stst`
// (17), `mep4` (6) / `mep6` (18), `aep4` (6) / `aep6` (18). All integers are big-endian.

/// What a Link peer announces about itself in ALIVE and RESPONSE messages.
///
/// Realtime-safe and thread-safe: a value.
package struct LinkPeerState: Hashable, Sendable {
    /// The session timeline as this peer holds it (`tmln`); its time origin is in ghost microseconds.
    package var timeline: Timeline
    /// The session the peer belongs to (`sess`).
    package var sessionID: SessionID
    /// The session's start/stop state (`stst`); `nil` when the message carries none (Link 1.x peers),
    /// which a receiver reads as `StartStopState.default` (see `effectiveStartStop`).
    package var startStop: StartStopState?
    /// Where the peer answers measurement pings (`mep4` or `mep6`, by the address family).
    package var measurementEndpoint: LinkEndpoint
    /// The peer's Link Audio endpoint (`aep4` or `aep6`), when Link Audio is active; carried, not used.
    package var audioEndpoint: LinkEndpoint?

    package init(
        timeline: Timeline, sessionID: SessionID, startStop: StartStopState?, measurementEndpoint: LinkEndpoint,
        audioEndpoint: LinkEndpoint? = nil
    ) {
        self.timeline = timeline
        self.sessionID = sessionID
        self.startStop = startStop
        self.measurementEndpoint = measurementEndpoint
        self.audioEndpoint = audioEndpoint
    }

    /// The start/stop state to act on: the announced one, or Link's default (stopped at 0) when absent.
    package var effectiveStartStop: StartStopState { startStop ?? .default }
}

/// A payload entry the codec does not interpret, kept verbatim so that re-encoding reproduces it.
///
/// Realtime-safe to read, thread-safe: a value.
package struct LinkUnknownEntry: Hashable, Sendable {
    package var key: LinkEntryKey
    /// The value bytes (without key and size).
    package var value: [UInt8]

    package init(key: LinkEntryKey, value: [UInt8]) {
        self.key = key
        self.value = value
    }
}

/// One Link discovery datagram.
///
/// Decoding follows Link's receive rules: unknown keys are skipped by their size (and kept in
/// `unknownEntries`), an entry running past the end or a known entry of the wrong size rejects the whole
/// datagram, a repeated known key overrides the earlier one (Link applies entries in order). Tutti is
/// stricter than Link in three places, each with its own error: ALIVE/RESPONSE must carry `tmln`, `sess`
/// and a measurement endpoint (Link would fill in zeros it cannot use), `sess` must be exactly 8 bytes
/// (Link zero-pads a shorter one), and datagrams of 512 bytes or more are refused.
///
/// Round trips: decoding records the wire order of the entries in `entryOrder` (left empty when it is
/// the order `encode` produces by itself: `tmln`, `sess`, `stst`, `mep`, `aep`, then unknown entries),
/// so re-encoding a captured datagram reproduces it byte for byte. Exceptions, all absent from real
/// traffic: a `stst` boolean byte other than 0 or 1 (re-encoded as 1), and repeated known keys (the
/// winning value is written once, at the key's first position). In a BYEBYE no entry is interpreted:
/// any payload entries are kept in `unknownEntries`.
///
/// Thread-safe: a value. Realtime-safe: `encode(into:)` and `encodedSize` (no allocation, no lock);
/// `decode` and `encode()` allocate (control plane only).
package struct LinkDiscoveryMessage: Hashable, Sendable {
    /// The message type (header byte 8).
    package enum Kind: UInt8, Hashable, Sendable, CaseIterable {
        /// Periodic multicast announcement of the sender's state.
        case alive = 1
        /// Unicast answer to an ALIVE, with the responder's state.
        case response = 2
        /// The sender leaves: forget it at once. No state, ttl 0.
        case byebye = 3
    }

    /// `_asdp_v` followed by the version byte 1, as a big-endian integer.
    package static let magic: UInt64 = 0x5f61_7364_705f_7601
    /// Size of the fixed header.
    package static let headerSize = 20
    /// Datagrams must be strictly shorter than this (Link's receive buffer size).
    package static let sizeLimit = 512
    /// The ttl Link sends in ALIVE and RESPONSE, in seconds.
    package static let defaultTTL: UInt8 = 5

    package var kind: Kind
    /// Seconds the receiver should consider the sender's state valid (5 in ALIVE/RESPONSE, 0 in BYEBYE).
    package var ttl: UInt8
    /// Session group id; 0 on the wire (decoding refuses anything else; encoding writes what is set).
    package var groupID: UInt16
    /// The sending peer's NodeID.
    package var sender: NodeID
    /// The sender's state; present in ALIVE and RESPONSE, `nil` in BYEBYE.
    package var state: LinkPeerState?
    /// Entries the codec does not interpret, in wire order.
    package var unknownEntries: [LinkUnknownEntry]
    /// The wire order of the entries when it differs from the encoder's own order; empty otherwise.
    /// Keys of state entries place the state's value (the endpoint entries by slot: a `mep4` position
    /// holds the measurement endpoint whatever its family); each occurrence of an unknown key places the
    /// next unknown entry with that key. Entries not named here follow in the encoder's own order.
    package var entryOrder: [LinkEntryKey]

    package init(
        kind: Kind, ttl: UInt8, groupID: UInt16 = 0, sender: NodeID, state: LinkPeerState?,
        unknownEntries: [LinkUnknownEntry] = [], entryOrder: [LinkEntryKey] = []
    ) {
        self.kind = kind
        self.ttl = ttl
        self.groupID = groupID
        self.sender = sender
        self.state = state
        self.unknownEntries = unknownEntries
        self.entryOrder = entryOrder
    }

    /// An ALIVE announcing `state`, with Link's ttl.
    package static func alive(sender: NodeID, state: LinkPeerState, ttl: UInt8 = defaultTTL) -> LinkDiscoveryMessage {
        LinkDiscoveryMessage(kind: .alive, ttl: ttl, sender: sender, state: state)
    }

    /// A RESPONSE carrying `state`, with Link's ttl.
    package static func response(sender: NodeID, state: LinkPeerState, ttl: UInt8 = defaultTTL) -> LinkDiscoveryMessage {
        LinkDiscoveryMessage(kind: .response, ttl: ttl, sender: sender, state: state)
    }

    /// A BYEBYE (ttl 0, no payload).
    package static func byebye(sender: NodeID) -> LinkDiscoveryMessage {
        LinkDiscoveryMessage(kind: .byebye, ttl: 0, sender: sender, state: nil)
    }

    // MARK: Entry layout

    /// The state entries, one per value (an endpoint slot covers both address families).
    enum Slot: CaseIterable {
        case timeline, sessionID, startStop, measurementEndpoint, audioEndpoint

        init?(_ key: LinkEntryKey) {
            switch key {
            case .timeline: self = .timeline
            case .sessionID: self = .sessionID
            case .startStop: self = .startStop
            case .measurementEndpointV4, .measurementEndpointV6: self = .measurementEndpoint
            case .audioEndpointV4, .audioEndpointV6: self = .audioEndpoint
            default: return nil
            }
        }
    }

    /// One entry to write: a state value or an index into `unknownEntries`.
    enum EntryReference {
        case state(Slot)
        case unknown(Int)
    }

    /// Visits the entries `encode` writes, in order. Allocation-free.
    func forEachEntry(_ body: (EntryReference) -> Void) {
        if let state {
            for (position, key) in entryOrder.enumerated() {
                if let slot = Slot(key) {
                    let firstOfSlot = !entryOrder[..<position].contains { Slot($0) == slot }
                    if firstOfSlot && state.has(slot) { body(.state(slot)) }
                } else if let index = unknownIndex(key: key, occurrence: entryOrder[..<position].count { $0 == key }) {
                    body(.unknown(index))
                }
            }
            for slot in Slot.allCases where state.has(slot) && !entryOrder.contains(where: { Slot($0) == slot }) {
                body(.state(slot))
            }
        } else {
            for (position, key) in entryOrder.enumerated() {
                if let index = unknownIndex(key: key, occurrence: entryOrder[..<position].count { $0 == key }) {
                    body(.unknown(index))
                }
            }
        }
        // Unknown entries that `entryOrder` does not place.
        for (index, entry) in unknownEntries.enumerated() {
            let occurrence = unknownEntries[..<index].count { $0.key == entry.key }
            let placed = (state != nil && Slot(entry.key) != nil) ? 0 : entryOrder.count { $0 == entry.key }
            if occurrence >= placed { body(.unknown(index)) }
        }
    }

    private func unknownIndex(key: LinkEntryKey, occurrence: Int) -> Int? {
        var seen = 0
        for (index, entry) in unknownEntries.enumerated() where entry.key == key {
            if seen == occurrence { return index }
            seen += 1
        }
        return nil
    }

    private func entrySize(_ reference: EntryReference) -> Int {
        switch reference {
        case .unknown(let index): return LinkWireEntryWalker.headerSize + unknownEntries[index].value.count
        case .state(let slot): return LinkWireEntryWalker.headerSize + (state?.valueSize(slot) ?? 0)
        }
    }

    // MARK: Encoding

    /// Bytes `encode` produces (whether or not encoding would succeed).
    package var encodedSize: Int {
        var size = Self.headerSize
        forEachEntry { size += entrySize($0) }
        return size
    }

    /// Checks what encoding requires and returns the encoded size.
    private func validatedSize() throws(LinkWireError) -> Int {
        switch kind {
        case .alive, .response: guard state != nil else { throw .missingState }
        case .byebye: guard state == nil else { throw .unexpectedState }
        }
        if state != nil, let clash = unknownEntries.first(where: { Slot($0.key) != nil }) {
            throw .unknownEntryHasKnownKey(clash.key)
        }
        // Refuse a huge unknown value before summing, so the sum cannot overflow.
        for entry in unknownEntries where entry.value.count >= Self.sizeLimit {
            throw .oversize(Self.headerSize + LinkWireEntryWalker.headerSize + entry.value.count)
        }
        let size = encodedSize
        guard size < Self.sizeLimit else { throw .oversize(size) }
        return size
    }

    /// Writes the datagram at the start of `buffer`.
    ///
    /// Realtime-safe: yes (no allocation, no lock).
    /// - Returns: the number of bytes written (`encodedSize`).
    /// - Throws: `.bufferTooSmall`, `.oversize` (512 bytes or more), `.missingState`, `.unexpectedState`,
    ///   `.unknownEntryHasKnownKey`.
    package func encode(into buffer: UnsafeMutableRawBufferPointer) throws(LinkWireError) -> Int {
        let size = try validatedSize()
        guard buffer.count >= size else { throw .bufferTooSmall(needed: size, got: buffer.count) }
        return write(to: buffer)
    }

    /// The datagram as a new array. Allocates: control plane only.
    /// - Throws: as `encode(into:)`, except `.bufferTooSmall`.
    package func encode() throws(LinkWireError) -> [UInt8] {
        let size = try validatedSize()
        return [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            count = write(to: UnsafeMutableRawBufferPointer(buffer))
        }
    }

    /// Writes a validated message into a buffer of at least `encodedSize` bytes.
    private func write(to buffer: UnsafeMutableRawBufferPointer) -> Int {
        var writer = LinkWireWriter(buffer)
        writer.u64(Self.magic)
        writer.u8(kind.rawValue)
        writer.u8(ttl)
        writer.u16(groupID)
        writer.u64(sender.rawValue)
        forEachEntry { reference in
            switch reference {
            case .unknown(let index):
                let entry = unknownEntries[index]
                writer.entryHeader(entry.key, size: entry.value.count)
                writer.bytes(entry.value)
            case .state(let slot):
                state?.write(slot, to: &writer)
            }
        }
        return writer.offset
    }

    // MARK: Decoding

    /// Decodes one discovery datagram.
    ///
    /// Not realtime-safe (allocates the entry lists); never traps on any input.
    /// - Throws: the specific `LinkWireError` for every malformed datagram (see the type's rules).
    package static func decode(_ bytes: UnsafeRawBufferPointer) throws(LinkWireError) -> LinkDiscoveryMessage {
        guard bytes.count < sizeLimit else { throw .oversize(bytes.count) }
        guard bytes.count >= headerSize else { throw .truncated(needed: headerSize, got: bytes.count) }
        guard LinkWireBytes.hasMagic(bytes, magic) else { throw .badMagic }
        guard let kind = Kind(rawValue: bytes[8]) else { throw .unknownMessageType(bytes[8]) }
        let groupID = LinkWireBytes.u16(bytes, 10)
        guard groupID == 0 else { throw .nonZeroGroup(groupID) }
        var message = LinkDiscoveryMessage(
            kind: kind, ttl: bytes[9], groupID: groupID, sender: NodeID(rawValue: LinkWireBytes.u64(bytes, 12)),
            state: nil)

        var timeline: Timeline?
        var sessionID: SessionID?
        var startStop: StartStopState?
        var measurementEndpoint: LinkEndpoint?
        var audioEndpoint: LinkEndpoint?
        var order: [LinkEntryKey] = []
        var walker = LinkWireEntryWalker(bytes, from: headerSize)
        while let entry = try walker.next() {
            order.append(entry.key)
            let at = entry.valueStart
            switch kind == .byebye ? nil : Slot(entry.key) {
            case .timeline:
                try LinkWireEntryWalker.expect(entry, size: 24)
                timeline = Timeline(
                    tempo: Tempo(microsecondsPerBeat: LinkWireBytes.i64(bytes, at)),
                    beatOrigin: Beats(microBeats: LinkWireBytes.i64(bytes, at + 8)),
                    timeOrigin: LinkWireBytes.i64(bytes, at + 16))
            case .sessionID:
                try LinkWireEntryWalker.expect(entry, size: 8)
                sessionID = SessionID(rawValue: LinkWireBytes.u64(bytes, at))
            case .startStop:
                try LinkWireEntryWalker.expect(entry, size: 17)
                startStop = StartStopState(
                    isPlaying: bytes[at] != 0, beats: Beats(microBeats: LinkWireBytes.i64(bytes, at + 1)),
                    timestamp: LinkWireBytes.i64(bytes, at + 9))
            case .measurementEndpoint:
                let ipv6 = entry.key == .measurementEndpointV6
                try LinkWireEntryWalker.expect(entry, size: ipv6 ? 18 : 6)
                measurementEndpoint = LinkEndpoint.read(bytes, at: at, ipv6: ipv6)
            case .audioEndpoint:
                let ipv6 = entry.key == .audioEndpointV6
                try LinkWireEntryWalker.expect(entry, size: ipv6 ? 18 : 6)
                audioEndpoint = LinkEndpoint.read(bytes, at: at, ipv6: ipv6)
            case nil:
                message.unknownEntries.append(
                    LinkUnknownEntry(key: entry.key, value: Array(bytes[entry.valueStart..<entry.valueEnd])))
            }
        }

        if kind != .byebye {
            guard let timeline else { throw .missingEntry(.timeline) }
            guard let sessionID else { throw .missingEntry(.sessionID) }
            guard let measurementEndpoint else { throw .missingMeasurementEndpoint }
            message.state = LinkPeerState(
                timeline: timeline, sessionID: sessionID, startStop: startStop,
                measurementEndpoint: measurementEndpoint, audioEndpoint: audioEndpoint)
        }
        // Keep the order only when the encoder would not reproduce it by itself.
        if order != message.encodedEntryKeys { message.entryOrder = order }
        return message
    }

    /// Decodes one discovery datagram held in an array. Not realtime-safe.
    package static func decode(_ bytes: [UInt8]) throws(LinkWireError) -> LinkDiscoveryMessage {
        try bytes.withLinkWireBytes { raw throws(LinkWireError) in try decode(raw) }
    }

    /// The keys of the entries `encode` writes, in order. Allocates.
    package var encodedEntryKeys: [LinkEntryKey] {
        var keys: [LinkEntryKey] = []
        forEachEntry { reference in
            switch reference {
            case .unknown(let index): keys.append(unknownEntries[index].key)
            case .state(let slot): if let key = state?.key(slot) { keys.append(key) }
            }
        }
        return keys
    }
}

extension LinkPeerState {
    func has(_ slot: LinkDiscoveryMessage.Slot) -> Bool {
        switch slot {
        case .timeline, .sessionID, .measurementEndpoint: true
        case .startStop: startStop != nil
        case .audioEndpoint: audioEndpoint != nil
        }
    }

    /// The key written for `slot` (endpoint keys follow the address family).
    func key(_ slot: LinkDiscoveryMessage.Slot) -> LinkEntryKey {
        switch slot {
        case .timeline: .timeline
        case .sessionID: .sessionID
        case .startStop: .startStop
        case .measurementEndpoint: measurementEndpoint.isIPv6 ? .measurementEndpointV6 : .measurementEndpointV4
        case .audioEndpoint: audioEndpoint?.isIPv6 == true ? .audioEndpointV6 : .audioEndpointV4
        }
    }

    /// Value bytes of `slot`'s entry (0 when the state has none).
    func valueSize(_ slot: LinkDiscoveryMessage.Slot) -> Int {
        switch slot {
        case .timeline: 24
        case .sessionID: 8
        case .startStop: startStop == nil ? 0 : 17
        case .measurementEndpoint: measurementEndpoint.encodedSize
        case .audioEndpoint: audioEndpoint?.encodedSize ?? 0
        }
    }

    /// Writes `slot`'s entry (key, size, value); nothing when the state has none.
    func write(_ slot: LinkDiscoveryMessage.Slot, to writer: inout LinkWireWriter) {
        guard has(slot) else { return }
        writer.entryHeader(key(slot), size: valueSize(slot))
        switch slot {
        case .timeline:
            writer.i64(timeline.tempo.microsecondsPerBeat)
            writer.i64(timeline.beatOrigin.microBeats)
            writer.i64(timeline.timeOrigin)
        case .sessionID:
            writer.u64(sessionID.rawValue)
        case .startStop:
            guard let startStop else { return }
            writer.u8(startStop.isPlaying ? 1 : 0)
            writer.i64(startStop.beats.microBeats)
            writer.i64(startStop.timestamp)
        case .measurementEndpoint:
            measurementEndpoint.write(to: &writer)
        case .audioEndpoint:
            audioEndpoint?.write(to: &writer)
        }
    }
}
