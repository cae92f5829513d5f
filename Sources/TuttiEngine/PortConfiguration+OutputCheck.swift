#if canImport(Glibc)
import Glibc
#endif
import TuttiIO

extension PortConfiguration {
    /// Checks that a `wav` receiver can create its files: the directory exists, is a directory and is
    /// writable by this process, and the path is not itself a directory. Other ports pass. `tutti peer`
    /// calls it for `--dry-run`, and `Peer.start` before anything starts, so a bad path is refused where the
    /// peer is started, not later on the host that connects to it.
    ///
    /// - Throws: a one-line `EngineError`, e.g. "port foh: cannot record to /nope/foh.wav: directory /nope
    ///   does not exist". Control plane (reads the file system).
    public func checkOutput() throws(EngineError) {
        let path: String
        switch role {
        case .receiver(.wavFile(let file)), .receiver(.wavFilePerTrack(let file)): path = file
        default: return
        }
        let naming = TakeNaming(path: path)
        func refuse(_ why: String) -> EngineError {
            EngineError("port \(descriptor.name): cannot record to \(path): \(why)")
        }
        var status = stat()
        if naming.isDirectoryPath || (system_stat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR) {
            var directory = path
            while directory.count > 1, directory.hasSuffix("/") { directory.removeLast() }
            let example = directory.isEmpty ? "" : directory == "/" ? "/" : directory + "/"
            throw refuse("it is a directory; give a file name, e.g. path=\(example)\(descriptor.name).wav")
        }
        let directory = naming.directory
        guard system_stat(directory, &status) == 0 else {
            if errno == ENOENT { throw refuse("directory \(directory) does not exist") }
            throw refuse("directory \(directory): \(String(cString: strerror(errno)))")
        }
        guard status.st_mode & S_IFMT == S_IFDIR else { throw refuse("\(directory) is not a directory") }
        guard system_access(directory, W_OK | X_OK) == 0 else {
            throw refuse("directory \(directory) is not writable (\(String(cString: strerror(errno))))")
        }
    }
}
