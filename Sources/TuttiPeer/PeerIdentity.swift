import TuttiCore
import TuttiIO

/// Loads the peer's stable ID from `<directory>/<name>.id`, creating the directory and a new random ID the
/// first time (the files through `StateFiles`, TuttiIO). Control plane (blocking file I/O at start-up).
enum PeerIdentity {
    /// Takes the name (`PeerNameLock`: one running peer per name and state directory), then loads its ID.
    ///
    /// - Throws: a one-line `PeerError`: the name is taken (by which process), or the state directory is
    ///   not writable (and how to choose another).
    static func claim(name: String, directory: String) throws(PeerError) -> (id: PeerID, lock: PeerNameLock) {
        try makeDirectories(directory)
        let lock = try PeerNameLock.acquire(name: name, directory: directory)
        return (try load(name: name, directory: directory), lock)
    }

    static func load(name: String, directory: String) throws(PeerError) -> PeerID {
        let path = "\(directory)/\(name).id"
        if let text = StateFiles.readLine(path), let id = PeerID(text.filter { !$0.isWhitespace }) { return id }
        try makeDirectories(directory)
        var generator = SystemRandomNumberGenerator()
        let id = PeerID.random(using: &generator)
        do throws(SystemError) { try StateFiles.writeLine(id.rawValue, to: path) } catch {
            throw PeerError(
                "cannot write the peer's state file \(path) (\(error.reason)); choose a writable state directory with --state-dir DIR")
        }
        return id
    }

    /// The default state directory: `$XDG_STATE_HOME/tutti`, else `~/.local/state/tutti`, else `/tmp/tutti-state`.
    static var defaultDirectory: String {
        if let state = StateFiles.environment("XDG_STATE_HOME") { return state + "/tutti" }
        if let home = StateFiles.environment("HOME") { return home + "/.local/state/tutti" }
        return "/tmp/tutti-state"
    }

    private static func makeDirectories(_ path: String) throws(PeerError) {
        do throws(SystemError) { try StateFiles.makeDirectories(path) } catch {
            throw PeerError("cannot \(error.operation) (\(error.reason)); choose a writable one with --state-dir DIR")
        }
    }
}
