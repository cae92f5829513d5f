#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Files that hold secrets (a session key, a peer's private key): written 0600 and replaced whole (a new file
/// renamed over the old, so a crash never leaves half a key), and read only when no other user may read
/// them, as ssh treats its private keys. Control plane only: blocking file I/O at start-up.
package enum SecretFile {
    /// Why a secret file could not be read or written.
    package enum Failure: Error, Hashable, Sendable, CustomStringConvertible {
        case missing(path: String)
        /// Group or others may read or write it: `mode` is its permission bits.
        case readableByOthers(path: String, mode: UInt32)
        case system(SystemError)

        package var description: String {
            switch self {
            case .missing(let path): "\(path) does not exist"
            case .readableByOthers(let path, let mode):
                "\(path) may be read by other users (mode \(String(mode, radix: 8))); make it yours alone with: chmod 600 \(path)"
            case .system(let error): "cannot \(error.operation) (\(error.reason))"
            }
        }
    }

    /// Whether anything exists at `path`.
    package static func exists(_ path: String) -> Bool { system_access(path, F_OK) == 0 }

    /// The file's text, checked to be readable by its owner alone.
    ///
    /// - Throws: `Failure`: missing, open to others, or unreadable.
    package static func read(_ path: String) throws(Failure) -> String {
        let descriptor = system_open(path, O_RDONLY | O_CLOEXEC, 0)
        guard descriptor >= 0 else {
            if system_errno == ENOENT { throw .missing(path: path) }
            throw .system(SystemError.current("read \(path)"))
        }
        defer { _ = system_close(descriptor) }
        var status = stat()
        guard system_fstat(descriptor, &status) == 0 else { throw .system(SystemError.current("read \(path)")) }
        let mode = UInt32(status.st_mode) & 0o777
        guard mode & 0o077 == 0 else { throw .readableByOthers(path: path, mode: mode) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 1 << 20 {
            let count = chunk.withUnsafeMutableBytes { system_read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, system_errno == EINTR { continue }
            guard count >= 0 else { throw .system(SystemError.current("read \(path)")) }
            if count == 0 { break }
            bytes += chunk[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Writes `text` to `path` with mode 0600, replacing the file whole.
    ///
    /// - Parameter replacing: false to refuse when the file exists (`EEXIST`).
    /// - Throws: `Failure.system` naming the step that failed.
    package static func write(_ text: String, to path: String, replacing: Bool = true) throws(Failure) {
        if !replacing, exists(path) { throw .system(SystemError("write \(path)", errno: EEXIST)) }
        let temporary = "\(path).\(system_getpid()).new"
        let descriptor = system_open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .system(SystemError.current("write \(path)")) }
        var bytes = Array(text.utf8)[...]
        var failed = system_fchmod(descriptor, 0o600) != 0
        while !failed, !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { system_write(descriptor, $0.baseAddress, $0.count) }
            if written < 0, system_errno == EINTR { continue }
            if written <= 0 { failed = true } else { bytes = bytes.dropFirst(written) }
        }
        if !failed { failed = system_fsync(descriptor) != 0 }
        let error = SystemError.current("write \(path)")
        _ = system_close(descriptor)
        guard !failed, system_rename(temporary, path) == 0 else {
            let failure = failed ? error : SystemError.current("write \(path)")
            _ = system_unlink(temporary)
            throw .system(failure)
        }
    }
}
