#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Whole small files (configs, /proc entries, fuzz inputs). Control plane only: blocking file I/O.
package enum TextFile {
    /// The file's contents, decoded as UTF-8 (invalid bytes replaced).
    ///
    /// - Throws: `SystemError` with the errno of the failed `fopen` (missing file, no permission…).
    package static func read(_ path: String) throws(SystemError) -> String {
        String(decoding: try readBytes(path), as: UTF8.self)
    }

    /// The file's bytes.
    ///
    /// - Throws: `SystemError` with the errno of the failed `fopen`.
    package static func readBytes(_ path: String) throws(SystemError) -> [UInt8] {
        guard let file = system_fopen(path, "r") else { throw SystemError.current("open \(path)") }
        defer { system_fclose(file) }
        var bytes = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 8192)
        while true {
            let count = system_fread(&chunk, 1, chunk.count, file)
            if count <= 0 { break }
            bytes += chunk[0..<count]
        }
        return bytes
    }

    /// Writes `bytes` to the file at `path`, replacing it.
    ///
    /// - Throws: `SystemError` with the errno of the failed `fopen` or write.
    package static func writeBytes(_ bytes: [UInt8], to path: String) throws(SystemError) {
        guard let file = system_fopen(path, "w") else { throw SystemError.current("create \(path)") }
        let written = system_fwrite(bytes, 1, bytes.count, file)
        let closed = system_fclose(file)
        if written != bytes.count || closed != 0 { throw SystemError.current("write \(path)") }
    }
}
