#if canImport(Glibc)
import Glibc
#endif
import TuttiCore

/// Loads the peer's stable ID from `<directory>/<name>.id`, creating the directory and a new random ID the
/// first time. Control plane (blocking file I/O at start-up).
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
        if let text = readFile(path), let id = PeerID(text.trimmingCharacters()) { return id }
        try makeDirectories(directory)
        var generator = SystemRandomNumberGenerator()
        let id = PeerID.random(using: &generator)
        guard let file = fopen(path, "w") else {
            throw PeerError(
                "cannot write the peer's state file \(path) (\(String(cString: strerror(errno)))); choose a writable state directory with --state-dir DIR"
            )
        }
        fputs(id.rawValue + "\n", file)
        fclose(file)
        return id
    }

    /// The default state directory: `$XDG_STATE_HOME/tutti`, else `~/.local/state/tutti`, else `/tmp/tutti-state`.
    static var defaultDirectory: String {
        if let state = getenv("XDG_STATE_HOME") { return String(cString: state) + "/tutti" }
        if let home = getenv("HOME") { return String(cString: home) + "/.local/state/tutti" }
        return "/tmp/tutti-state"
    }

    private static func readFile(_ path: String) -> String? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 128)
        guard fgets(&buffer, Int32(buffer.count), file) != nil else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func makeDirectories(_ path: String) throws(PeerError) {
        var current = ""
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            current += "/" + component
            if mkdir(current, 0o755) != 0 && errno != EEXIST {
                throw PeerError(
                    "cannot create the state directory \(current) (\(String(cString: strerror(errno)))); choose a writable one with --state-dir DIR"
                )
            }
        }
    }
}

extension String {
    func trimmingCharacters() -> String {
        String(self.drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }
}
