import TuttiCore
import TuttiIO
import TuttiSecurity

/// Loads the peer's key pair from `<directory>/<name>.key` (mode 0600), creating the directory and a new key
/// pair the first time; the peer's ID is derived from its public key (`PeerKeyPair.peerID`), so in a
/// members-only session a peer proves its ID in every handshake. `<name>.id` holds the ID for people and
/// scripts to read; the key file is what counts. Control plane (blocking file I/O at start-up).
enum PeerIdentity {
    /// Takes the name (`PeerNameLock`: one running peer per name and state directory), then loads its key pair.
    ///
    /// - Throws: a one-line `PeerError`: the name is taken (by which process), the state directory is not
    ///   writable (and how to choose another), or the key file is damaged or open to other users.
    static func claim(name: String, directory: String) throws(PeerError) -> (keyPair: PeerKeyPair, lock: PeerNameLock) {
        try makeDirectories(directory)
        let lock = try PeerNameLock.acquire(name: name, directory: directory)
        do throws(PeerError) {
            return (try load(name: name, directory: directory), lock)
        } catch {
            lock.release()
            throw error
        }
    }

    static func load(name: String, directory: String) throws(PeerError) -> PeerKeyPair {
        let path = "\(directory)/\(name).key"
        var stored: String?
        do throws(SecretFile.Failure) {
            stored = try SecretFile.read(path)
        } catch .missing {
            stored = nil
        } catch {
            throw PeerError("cannot read the peer's key file: \(error)")
        }
        let keyPair: PeerKeyPair
        if let stored {
            guard let pair = PeerKeyPair(hex: stored) else {
                throw PeerError(
                    "the peer's key file \(path) is damaged (not a private key in hex); move it away to give peer \(name) a new identity")
            }
            keyPair = pair
        } else {
            keyPair = PeerKeyPair()
            do throws(SecretFile.Failure) {
                try SecretFile.write(keyPair.hex + "\n", to: path)
            } catch {
                throw PeerError("cannot write the peer's key file (\(error)); choose a writable state directory with --state-dir DIR")
            }
        }
        // For people and scripts: the ID the key proves. Failing to write it is not fatal.
        try? StateFiles.writeLine(keyPair.peerID.rawValue, to: "\(directory)/\(name).id")
        return keyPair
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
