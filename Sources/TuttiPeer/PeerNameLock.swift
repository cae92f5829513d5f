import TuttiIO

/// One running peer per name and state directory: an exclusive lock on `<directory>/<name>.lock`
/// (`ExclusiveLockFile`), which holds the PID of the peer that has it; a crash never leaves a stale lock.
///
/// Two users on one host have different state directories, so each may run a peer of the same name: they
/// have different IDs, Avahi publishes the second under another name ("stage #2"), and both are listed.
///
/// Control plane: `acquire` at start-up (blocking file I/O), `release` from any thread.
final class PeerNameLock: Sendable {
    private let file: ExclusiveLockFile

    private init(file: ExclusiveLockFile) { self.file = file }

    /// Takes the lock for `name` in `directory` (which must exist) and writes this process's PID into it.
    ///
    /// - Throws: a one-line `PeerError` naming the process that holds it and what to do instead, or saying
    ///   that the state directory is not writable.
    static func acquire(name: String, directory: String) throws(PeerError) -> PeerNameLock {
        let path = "\(directory)/\(name).lock"
        do {
            return PeerNameLock(file: try ExclusiveLockFile.acquire(path))
        } catch {
            switch error {
            case .held(let holder):
                let pid = holder.map { " (pid \($0))" } ?? ""
                throw PeerError(
                    "a peer named '\(name)' is already running on this host\(pid); give this one another name with --name OTHER")
            case .system(let failure):
                throw PeerError(
                    "cannot write the peer's lock file \(path) (\(failure.reason)); choose a writable state directory with --state-dir DIR")
            }
        }
    }

    /// Lets another peer take the name. Idempotent.
    func release() { file.release() }
}
