import TuttiIO
import TuttiSecurity

/// Where a host keeps its session key and how it is read and written: one key per line, the current one
/// first, mode 0600 (`SecretFile`), by default `$XDG_CONFIG_HOME/tutti/session.key` (else
/// `~/.config/tutti/session.key`). Control plane (blocking file I/O).
public enum SessionKeyFile {
    /// The default key file of this user.
    public static var defaultPath: String {
        if let config = StateFiles.environment("XDG_CONFIG_HOME"), !config.isEmpty { return config + "/tutti/session.key" }
        if let home = StateFiles.environment("HOME"), !home.isEmpty { return home + "/.config/tutti/session.key" }
        return "/tmp/tutti-config/session.key"
    }

    /// Whether a file exists at `path`.
    public static func exists(_ path: String) -> Bool { SecretFile.exists(path) }

    /// The keys in the file at `path`.
    ///
    /// - Throws: a one-line `PeerError`: missing, readable by others, unreadable, or not a key file (which line).
    public static func load(_ path: String) throws(PeerError) -> SessionKeyRing {
        let text: String
        do throws(SecretFile.Failure) { text = try SecretFile.read(path) } catch {
            switch error {
            case .missing: throw PeerError("no session key at \(path): make one with 'tutti key new' (or give --key-file FILE)")
            default: throw PeerError("cannot use the session key file: \(error)")
            }
        }
        do throws(SessionKeyRingError) { return try SessionKeyRing(fileText: text) } catch {
            throw PeerError("the session key file \(path) is not usable: \(error)")
        }
    }

    /// Writes `keys` to `path` (mode 0600; its directory made 0700 when missing), replacing the file whole.
    ///
    /// - Throws: a one-line `PeerError` naming what could not be written.
    public static func save(_ keys: SessionKeyRing, to path: String, replacing: Bool = true) throws(PeerError) {
        if let slash = path.lastIndex(of: "/"), slash != path.startIndex {
            let directory = String(path[..<slash])
            if !exists(directory) {
                do throws(SystemError) { try StateFiles.makeDirectories(directory, mode: 0o700) } catch {
                    throw PeerError("cannot \(error.operation) (\(error.reason))")
                }
            }
        }
        do throws(SecretFile.Failure) { try SecretFile.write(keys.fileText, to: path, replacing: replacing) } catch {
            throw PeerError("cannot write the session key file: \(error)")
        }
    }
}
