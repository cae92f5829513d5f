import ArgumentParser
import TuttiIO
import TuttiPeer
import TuttiSecurity

/// Which session key this command uses, or whether it speaks to an open session. Shared by `tutti peer`
/// and the client commands.
struct KeyOptions: ParsableArguments {
    @Option(
        name: .customLong("key-file"),
        help: ArgumentHelp(
            "The session key file (default: $TUTTI_KEY_FILE, else ~/.config/tutti/session.key; $TUTTI_KEY may hold the key itself).",
            valueName: "FILE"))
    var keyFile: String?

    @Flag(
        name: .customLong("open"),
        help: "Open session: no session key; anyone who can reach the peers may list, connect and disconnect.")
    var open = false

    /// What the options, a config file and the environment choose.
    enum Choice {
        /// `--open` (or `open = true` in a config file).
        case open
        /// A key ring and the file it came from (nil: `$TUTTI_KEY`).
        case members(SessionKeyRing, file: String?)
        /// Nothing chosen: no flag, no key in the environment, no default key file.
        case none
    }

    /// The choice, in this order: `--open`, `--key-file`, the config file's `key-file`, its `open`,
    /// `$TUTTI_KEY`, `$TUTTI_KEY_FILE`, the default key file when it exists.
    ///
    /// - Throws: a one-line `CLIError` for `--open` with `--key-file`, or a key that cannot be read.
    func choice(configKeyFile: String? = nil, configOpen: Bool? = nil) throws -> Choice {
        if open, keyFile != nil { throw CLIError("--open and --key-file exclude each other: an open session has no key") }
        if open { return .open }
        if let path = keyFile ?? configKeyFile { return .members(try Self.load(path), file: path) }
        if configOpen == true { return .open }
        if let text = StateFiles.environment("TUTTI_KEY"), !text.isEmpty {
            do throws(SessionKeyError) {
                return .members(SessionKeyRing([try SessionKey(text: text)]), file: nil)
            } catch {
                throw CLIError("$TUTTI_KEY: \(error)")
            }
        }
        if let path = StateFiles.environment("TUTTI_KEY_FILE"), !path.isEmpty { return .members(try Self.load(path), file: path) }
        let path = SessionKeyFile.defaultPath
        return SessionKeyFile.exists(path) ? .members(try Self.load(path), file: path) : .none
    }

    /// What a client command proves: the key ring with a fresh key pair, or nil to speak plainly (an open
    /// session, or no key on this host: a members-only peer then says what is missing).
    func clientCredentials() throws -> ControlCredentials? {
        if case .members(let keys, _) = try choice() { return ControlCredentials(keys: keys) }
        return nil
    }

    /// The key file `tutti key` works on: `--file`, else `$TUTTI_KEY_FILE`, else the default.
    static func keyFilePath(_ given: String?) -> String {
        given ?? StateFiles.environment("TUTTI_KEY_FILE").flatMap { $0.isEmpty ? nil : $0 } ?? SessionKeyFile.defaultPath
    }

    private static func load(_ path: String) throws -> SessionKeyRing {
        do throws(PeerError) { return try SessionKeyFile.load(path) } catch { throw CLIError(error.message) }
    }
}
