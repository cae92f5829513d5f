/// Converts between a DNS-SD TXT record (a list of byte strings, RFC 6763 §6) and `[String: String]`.
/// Pure functions: call them on any thread.
enum TXTRecord {
    /// The longest single TXT entry ("key=value") DNS can carry.
    static let maximumEntryLength = 255

    /// Decodes TXT entries. Never fails:
    /// - "key=value" splits at the first "=", so the value may itself contain "=";
    /// - an entry without "=" is a boolean attribute: the key with an empty value;
    /// - an entry that starts with "=" (empty key) or is empty is ignored (RFC 6763 §6.4);
    /// - if a key repeats, the first entry wins (RFC 6763 §6.4);
    /// - bytes that are not valid UTF-8 are replaced with U+FFFD.
    static func decode(_ entries: [[UInt8]]) -> [String: String] {
        var result: [String: String] = [:]
        for entry in entries {
            let equals = entry.firstIndex(of: UInt8(ascii: "="))
            let keyBytes = entry[..<(equals ?? entry.endIndex)]
            guard !keyBytes.isEmpty else { continue }
            let key = String(decoding: keyBytes, as: UTF8.self)
            guard result[key] == nil else { continue }
            if let equals {
                result[key] = String(decoding: entry[(equals + 1)...], as: UTF8.self)
            } else {
                result[key] = ""
            }
        }
        return result
    }

    /// Splits TXT RDATA as it appears on the wire (length-prefixed strings) into entries. Empty
    /// strings are skipped; a length running past the end takes what is there.
    static func entries(fromWire rdata: [UInt8]) -> [[UInt8]] {
        var entries: [[UInt8]] = []
        var index = rdata.startIndex
        while index < rdata.endIndex {
            let length = Int(rdata[index])
            let start = index + 1
            let end = min(start + length, rdata.endIndex)
            if end > start { entries.append(Array(rdata[start..<end])) }
            index = end
        }
        return entries
    }

    /// Encodes a dictionary as TXT entries "key=value", sorted by key so the same dictionary
    /// always gives the same record. Entries that cannot be represented are left out rather than
    /// truncated: an empty key, a key containing "=", or an entry longer than 255 bytes.
    static func encode(_ txt: [String: String]) -> [[UInt8]] {
        var entries: [[UInt8]] = []
        for key in txt.keys.sorted() {
            let keyBytes = Array(key.utf8)
            guard !keyBytes.isEmpty, !keyBytes.contains(UInt8(ascii: "=")) else { continue }
            let entry = keyBytes + [UInt8(ascii: "=")] + Array((txt[key] ?? "").utf8)
            guard entry.count <= maximumEntryLength else { continue }
            entries.append(entry)
        }
        return entries
    }
}
