// Internal big-endian reading, writing and entry framing shared by the Link codecs.
// Callers check bounds before every access; nothing here allocates.

/// Big-endian loads from a raw buffer. The caller guarantees `offset + size <= buffer.count`.
enum LinkWireBytes {
    static func u16(_ buffer: UnsafeRawBufferPointer, _ offset: Int) -> UInt16 {
        UInt16(buffer[offset]) << 8 | UInt16(buffer[offset + 1])
    }

    static func u32(_ buffer: UnsafeRawBufferPointer, _ offset: Int) -> UInt32 {
        UInt32(bigEndian: buffer.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    static func u64(_ buffer: UnsafeRawBufferPointer, _ offset: Int) -> UInt64 {
        UInt64(bigEndian: buffer.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    static func i64(_ buffer: UnsafeRawBufferPointer, _ offset: Int) -> Int64 {
        Int64(bitPattern: u64(buffer, offset))
    }

    /// Whether the buffer starts with `magic` (8 bytes). The caller guarantees `buffer.count >= 8`.
    static func hasMagic(_ buffer: UnsafeRawBufferPointer, _ magic: UInt64) -> Bool { u64(buffer, 0) == magic }
}

/// Sequential big-endian writer into a buffer the caller has sized (no bounds failure is possible
/// once the caller has checked `encodedSize`).
struct LinkWireWriter {
    let buffer: UnsafeMutableRawBufferPointer
    private(set) var offset = 0

    init(_ buffer: UnsafeMutableRawBufferPointer) { self.buffer = buffer }

    mutating func u8(_ value: UInt8) {
        buffer[offset] = value
        offset += 1
    }

    mutating func u16(_ value: UInt16) {
        u8(UInt8(truncatingIfNeeded: value >> 8))
        u8(UInt8(truncatingIfNeeded: value))
    }

    mutating func u32(_ value: UInt32) {
        buffer.storeBytes(of: value.bigEndian, toByteOffset: offset, as: UInt32.self)
        offset += 4
    }

    mutating func u64(_ value: UInt64) {
        buffer.storeBytes(of: value.bigEndian, toByteOffset: offset, as: UInt64.self)
        offset += 8
    }

    mutating func i64(_ value: Int64) { u64(UInt64(bitPattern: value)) }

    mutating func bytes(_ source: UnsafeRawBufferPointer) {
        guard !source.isEmpty else { return }
        UnsafeMutableRawBufferPointer(rebasing: buffer[offset..<offset + source.count]).copyMemory(from: source)
        offset += source.count
    }

    mutating func bytes(_ source: [UInt8]) { source.withUnsafeBytes { bytes($0) } }

    /// An entry's key and value size.
    mutating func entryHeader(_ key: LinkEntryKey, size: Int) {
        u32(key.rawValue)
        u32(UInt32(truncatingIfNeeded: size))
    }
}

/// One framed entry found in a datagram: its key and where its value lies.
struct LinkWireEntry {
    var key: LinkEntryKey
    /// Offset of the entry's key (its first byte).
    var start: Int
    /// Offset of the value.
    var valueStart: Int
    /// Declared (and available) value size.
    var size: Int

    var valueEnd: Int { valueStart + size }
}

/// Walks the entries of a payload: key (4), size (u32 BE), value, repeated to the end of the datagram.
struct LinkWireEntryWalker {
    /// Size of an entry's key and size fields.
    static let headerSize = 8

    let bytes: UnsafeRawBufferPointer
    private(set) var offset: Int

    init(_ bytes: UnsafeRawBufferPointer, from offset: Int) {
        self.bytes = bytes
        self.offset = offset
    }

    /// The next entry, or `nil` at the exact end of the datagram.
    ///
    /// - Throws: `.truncatedEntryHeader` when 1 to 7 bytes remain, `.entryOverrunsDatagram` when the
    ///   declared size exceeds what is left.
    mutating func next() throws(LinkWireError) -> LinkWireEntry? {
        let remaining = bytes.count - offset
        if remaining <= 0 { return nil }
        guard remaining >= Self.headerSize else { throw .truncatedEntryHeader(offset: offset, remaining: remaining) }
        let key = LinkEntryKey(rawValue: LinkWireBytes.u32(bytes, offset))
        let size = LinkWireBytes.u32(bytes, offset + 4)
        let available = remaining - Self.headerSize
        guard UInt64(size) <= UInt64(available) else {
            throw .entryOverrunsDatagram(key: key, size: size, available: available)
        }
        let entry = LinkWireEntry(key: key, start: offset, valueStart: offset + Self.headerSize, size: Int(size))
        offset = entry.valueEnd
        return entry
    }

    /// Throws `.badEntrySize` unless `entry` has exactly `size` value bytes.
    static func expect(_ entry: LinkWireEntry, size: Int) throws(LinkWireError) {
        guard entry.size == size else { throw .badEntrySize(key: entry.key, size: UInt32(entry.size)) }
    }
}

extension Array where Element == UInt8 {
    /// Runs a typed-throwing body over the array's bytes.
    func withLinkWireBytes<R>(
        _ body: (UnsafeRawBufferPointer) throws(LinkWireError) -> R
    ) throws(LinkWireError) -> R {
        let result: Result<R, LinkWireError> = withUnsafeBytes { raw in
            do throws(LinkWireError) { return .success(try body(raw)) } catch { return .failure(error) }
        }
        return try result.get()
    }
}
