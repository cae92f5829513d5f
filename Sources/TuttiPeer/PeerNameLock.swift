#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// One running peer per name and state directory: an exclusive `flock` on `<directory>/<name>.lock`, which
/// holds the PID of the peer that has it. The kernel drops the lock when that process ends, however it ends,
/// so a crash never leaves a stale lock behind; the file itself stays.
///
/// Two users on one host have different state directories, so each may run a peer of the same name: they
/// have different IDs, Avahi publishes the second under another name ("stage #2"), and both are listed.
///
/// Control plane: `acquire` at start-up (blocking file I/O), `release` from any thread.
final class PeerNameLock: Sendable {
    private let descriptor: Mutex<Int32>

    private init(descriptor: Int32) { self.descriptor = Mutex(descriptor) }

    /// Takes the lock for `name` in `directory` (which must exist) and writes this process's PID into it.
    ///
    /// - Throws: a one-line `PeerError` naming the process that holds it and what to do instead, or saying
    ///   that the state directory is not writable.
    static func acquire(name: String, directory: String) throws(PeerError) -> PeerNameLock {
        let path = "\(directory)/\(name).lock"
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw PeerError(
                "cannot write the peer's lock file \(path) (\(String(cString: strerror(errno)))); choose a writable state directory with --state-dir DIR"
            )
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let holder = readPID(descriptor).map { " (pid \($0))" } ?? ""
            close(descriptor)
            throw PeerError("a peer named '\(name)' is already running on this host\(holder); give this one another name with --name OTHER")
        }
        let text = Array("\(getpid())\n".utf8)
        _ = ftruncate(descriptor, 0)
        _ = pwrite(descriptor, text, text.count, 0)
        return PeerNameLock(descriptor: descriptor)
    }

    /// Lets another peer take the name. Idempotent.
    func release() {
        descriptor.withLock { descriptor in
            guard descriptor >= 0 else { return }
            close(descriptor)  // drops the flock
            descriptor = -1
        }
    }

    deinit { release() }

    private static func readPID(_ descriptor: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = pread(descriptor, &buffer, buffer.count, 0)
        guard count > 0 else { return nil }
        return Int32(String(decoding: buffer.prefix(count), as: UTF8.self).trimmingCharacters())
    }
}
