import CAvahi

#if canImport(Glibc)
import Glibc
#endif

/// Small conversions between Avahi's C types and Swift values. Stateless: any thread (the
/// pointers passed in must of course be valid, which for Avahi objects means poll lock held).
enum AvahiBridge {
    /// `avahi_strerror` text for an `AVAHI_ERR_*` code.
    static func errorText(_ code: Int32) -> String {
        guard let text = avahi_strerror(code) else { return "Avahi error \(code)" }
        return String(cString: text)
    }

    /// Copies an `AvahiStringList` (a TXT record) into byte arrays, list order preserved.
    static func entries(of list: UnsafeMutablePointer<AvahiStringList>?) -> [[UInt8]] {
        var result: [[UInt8]] = []
        var node = list
        while let current = node {
            let size = avahi_string_list_get_size(current)
            if size > 0, let text = avahi_string_list_get_text(current) {
                result.append(Array(UnsafeBufferPointer(start: text, count: size)))
            }
            node = avahi_string_list_get_next(current)
        }
        return result
    }

    /// Builds an `AvahiStringList` with the entries in the given order; free it with
    /// `avahi_string_list_free`. Returns nil for no entries (an empty TXT record).
    static func makeStringList(_ entries: [[UInt8]]) -> UnsafeMutablePointer<AvahiStringList>? {
        var list: UnsafeMutablePointer<AvahiStringList>?
        // avahi_string_list_add_arbitrary prepends, so add in reverse.
        for entry in entries.reversed() where !entry.isEmpty {
            let grown = entry.withUnsafeBufferPointer { avahi_string_list_add_arbitrary(list, $0.baseAddress, $0.count) }
            if let grown { list = grown }
        }
        return list
    }

    /// The textual form of a resolved address; IPv6 link-local addresses get "%ifname" (or
    /// "%index" when the interface has no name any more).
    static func addressText(_ address: UnsafePointer<AvahiAddress>, interface: AvahiIfIndex) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(AVAHI_ADDRESS_STR_MAX) + 1)
        guard avahi_address_snprint(&buffer, buffer.count, address) != nil else { return nil }
        let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard address.pointee.proto == AvahiProtocol(AVAHI_PROTO_INET6) else { return text }
        let isLinkLocal = withUnsafeBytes(of: address.pointee.data.ipv6.address) { bytes in
            bytes.count == 16 && bytes[0] == 0xfe && (bytes[1] & 0xc0) == 0x80
        }
        guard isLinkLocal, interface > 0 else { return text }
        return text + "%" + interfaceName(interface)
    }

    /// The kernel's name for an interface index, or the index as text.
    static func interfaceName(_ index: AvahiIfIndex) -> String {
        var name = [CChar](repeating: 0, count: Int(IF_NAMESIZE) + 1)
        guard if_indextoname(UInt32(bitPattern: index), &name) != nil else { return String(index) }
        return String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// An absolute deadline `milliseconds` from now on Avahi's clock (`gettimeofday`).
    static func deadline(afterMilliseconds milliseconds: Int) -> timeval {
        var now = timeval()
        gettimeofday(&now, nil)
        let totalMicroseconds = Int(now.tv_usec) + (milliseconds % 1000) * 1000
        var result = timeval()
        result.tv_sec = now.tv_sec + milliseconds / 1000 + totalMicroseconds / 1_000_000
        result.tv_usec = type(of: now.tv_usec).init(totalMicroseconds % 1_000_000)
        return result
    }

    /// `avahi_alternative_service_name` as a Swift string.
    static func alternativeServiceName(_ name: String) -> String {
        guard let alternative = avahi_alternative_service_name(name) else { return name + " #2" }
        defer { avahi_free(alternative) }
        return String(cString: alternative)
    }
}
