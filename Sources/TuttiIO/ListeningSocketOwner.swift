#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Which process listens on a TCP port, read from /proc (this network namespace; only processes whose open
/// files this user may read). Control plane (blocking reads of /proc).
package enum ListeningSocketOwner {
    /// The process holding a TCP socket that listens on `port` in this network namespace, if one of this
    /// user's processes does (another user's open files are not readable without privileges).
    package static func find(port: UInt16) -> (pid: Int32, command: String)? {
        let inodes = ["/proc/net/tcp", "/proc/net/tcp6"].reduce(into: Set<UInt64>()) { found, table in
            found.formUnion(listeningSocketInodes(table: readText(table) ?? "", port: port))
        }
        guard !inodes.isEmpty, let processes = opendir("/proc") else { return nil }
        defer { closedir(processes) }
        while let entry = readdir(processes) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard let pid = Int32(name), holdsSocket(pid: pid, inodes: inodes) else { continue }
            let command = readText("/proc/\(pid)/comm")?.filter { !$0.isNewline } ?? "?"
            return (pid, command)
        }
        return nil
    }

    /// The inodes of the sockets in LISTEN state on `port` in a `/proc/net/tcp` or `/proc/net/tcp6` table
    /// (`sl local_address rem_address st … inode`, addresses as HEX-ADDRESS:HEX-PORT, LISTEN is state 0A).
    package static func listeningSocketInodes(table: String, port: UInt16) -> Set<UInt64> {
        var inodes = Set<UInt64>()
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count > 9, fields[3] == "0A", let colon = fields[1].lastIndex(of: ":"),
                UInt16(fields[1][fields[1].index(after: colon)...], radix: 16) == port, let inode = UInt64(fields[9]), inode != 0
            else { continue }
            inodes.insert(inode)
        }
        return inodes
    }

    private static func holdsSocket(pid: Int32, inodes: Set<UInt64>) -> Bool {
        guard let descriptors = opendir("/proc/\(pid)/fd") else { return false }
        defer { closedir(descriptors) }
        var target = [CChar](repeating: 0, count: 64)
        while let entry = readdir(descriptors) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            let length = readlink("/proc/\(pid)/fd/\(name)", &target, target.count - 1)
            guard length > 0 else { continue }
            let link = String(decoding: target.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            // "socket:[12345]"
            guard link.hasPrefix("socket:["), let inode = UInt64(link.dropFirst(8).dropLast()) else { continue }
            if inodes.contains(inode) { return true }
        }
        return false
    }

    private static func readText(_ path: String) -> String? { try? TextFile.read(path) }
}
