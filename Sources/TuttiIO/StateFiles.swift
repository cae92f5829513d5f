#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization

/// The small files a peer keeps in its state directory: the directory itself, a one-line text file (its ID),
/// and an exclusive lock file that holds the PID of its owner (one running peer per name). Blocking file I/O
/// through the choke point; control plane only (start-up).
package enum StateFiles {
    /// Creates `path` and every missing parent (`mkdir -p`), each with `mode` (0755 by default; 0700 for a
    /// directory of secrets), less the umask.
    ///
    /// - Throws: `SystemError` naming the directory that could not be made.
    package static func makeDirectories(_ path: String, mode: mode_t = 0o755) throws(SystemError) {
        // A relative path stays relative: its first component is created in the working directory.
        var current = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            current += current.isEmpty || current.hasSuffix("/") ? String(component) : "/" + component
            if system_mkdir(current, mode) != 0 && system_errno != EEXIST {
                throw SystemError.current("create the state directory \(current)")
            }
        }
    }

    /// The first line of the text file at `path` (at most 127 bytes), or nil when it cannot be read.
    package static func readLine(_ path: String) -> String? {
        guard let file = system_fopen(path, "r") else { return nil }
        defer { _ = system_fclose(file) }
        var buffer = [CChar](repeating: 0, count: 128)
        guard fgets(&buffer, Int32(buffer.count), file) != nil else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 && $0 != 10 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Writes `line` and a newline to the file at `path`, replacing it.
    ///
    /// - Throws: `SystemError` when the file cannot be opened or written.
    package static func writeLine(_ line: String, to path: String) throws(SystemError) {
        guard let file = system_fopen(path, "w") else { throw SystemError.current("write \(path)") }
        let written = system_fputs(line + "\n", file)
        let closed = system_fclose(file)
        guard written >= 0, closed == 0 else { throw SystemError.current("write \(path)") }
    }

    /// This host's name (what `gethostname` says), for `describe`.
    package static var hostName: String {
        var buffer = [CChar](repeating: 0, count: 256)
        _ = system_gethostname(&buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// An environment variable's value, or nil.
    package static func environment(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }
}

/// An exclusive `flock` on a file that holds its owner's PID. The kernel drops the lock when the owner ends,
/// however it ends, so a crash never leaves a stale lock; the file itself stays. Control plane: `acquire` at
/// start-up, `release` from any thread (once the owner is done with it).
package final class ExclusiveLockFile: Sendable {
    /// Why the lock was not taken.
    package enum Failure: Error {
        /// Another process holds it (its PID, when the file tells).
        case held(by: Int32?)
        case system(SystemError)
    }

    private let descriptor: Mutex<Int32>

    private init(descriptor: Int32) { self.descriptor = Mutex(descriptor) }

    /// Takes the lock on `path` (created if missing) without waiting, and writes this process's PID into it.
    package static func acquire(_ path: String) throws(Failure) -> ExclusiveLockFile {
        let descriptor = system_open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw .system(SystemError.current("open \(path)")) }
        guard system_flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let holder = readPID(descriptor)
            _ = system_close(descriptor)
            throw .held(by: holder)
        }
        let text = Array("\(system_getpid())\n".utf8)
        _ = system_ftruncate(descriptor, 0)
        _ = text.withUnsafeBytes { system_pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        return ExclusiveLockFile(descriptor: descriptor)
    }

    /// Lets another process take the lock. Idempotent; any thread.
    package func release() {
        descriptor.withLock { descriptor in
            guard descriptor >= 0 else { return }
            _ = system_close(descriptor)  // drops the flock
            descriptor = -1
        }
    }

    deinit { release() }

    private static func readPID(_ descriptor: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = buffer.withUnsafeMutableBytes { system_pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        return Int32(String(decoding: buffer.prefix(count), as: UTF8.self).filter { !$0.isWhitespace })
    }
}
