#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Whole small text files (configs, /proc entries). Control plane only: blocking file I/O.
package enum TextFile {
    /// The file's contents, decoded as UTF-8 (invalid bytes replaced).
    ///
    /// - Throws: `SystemError` with the errno of the failed `fopen` (missing file, no permission…).
    package static func read(_ path: String) throws(SystemError) -> String {
        guard let file = system_fopen(path, "r") else { throw SystemError.current("open \(path)") }
        defer { system_fclose(file) }
        var bytes = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 8192)
        while true {
            let count = system_fread(&chunk, 1, chunk.count, file)
            if count <= 0 { break }
            bytes += chunk[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
