import ArgumentParser
import TuttiPeer
import TuttiSecurity

struct KeyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "key",
        abstract: "Make and change the session key: only hosts that hold it can join the session.",
        discussion: """
            A members-only session shares one secret, the session key. Make it once on one host with 'tutti key \
            new', then copy the key file (mode 0600) to the same place on every other host, or give the key \
            itself to 'tutti key add' there. Peers and commands find it in $TUTTI_KEY (the key), $TUTTI_KEY_FILE \
            (a file) or ~/.config/tutti/session.key; a peer without a key runs only as an open session, when \
            asked to.

            To change the key while the session plays: 'tutti key change' on one host, 'tutti key add NEWKEY' on \
            the others (both keys are accepted meanwhile; peers reread the file every 2 s), and when every host \
            has it, 'tutti key retire' on each.
            """,
        subcommands: [New.self, Show.self, Change.self, Add.self, Retire.self])

    struct FileOption: ParsableArguments {
        @Option(
            name: .customLong("file"),
            help: ArgumentHelp("The key file (default: $TUTTI_KEY_FILE, else ~/.config/tutti/session.key).", valueName: "FILE"))
        var file: String?

        var path: String { KeyOptions.keyFilePath(file) }

        /// The keys in the file, or a one-line `CLIError`.
        func load() throws -> SessionKeyRing {
            do throws(PeerError) { return try SessionKeyFile.load(path) } catch { throw CLIError(error.message) }
        }

        /// Writes `keys` to the file (0600), or a one-line `CLIError`.
        func save(_ keys: SessionKeyRing) throws {
            do throws(PeerError) { try SessionKeyFile.save(keys, to: path) } catch { throw CLIError(error.message) }
        }
    }

    struct New: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make a new random session key, store it in the key file and print it once.")

        @OptionGroup var file: FileOption

        @Flag(help: "Derive the key from a passphrase read from standard input (weaker than a random key).")
        var passphrase = false

        @Flag(help: "Replace a key file that exists (the old key stops working).")
        var force = false

        func run() throws {
            try reportingErrorsSynchronously {
                let path = file.path
                if !force, SessionKeyFile.exists(path) {
                    let held = (try? SessionKeyFile.load(path)).map { " (key \($0.current.fingerprint))" } ?? ""
                    throw CLIError(
                        "\(path) already holds a session key\(held); 'tutti key change' changes it while the session plays, --force replaces it"
                    )
                }
                let key: SessionKey
                if passphrase {
                    guard let line = readLine(strippingNewline: true), !line.isEmpty else {
                        throw CLIError("--passphrase reads the passphrase from standard input, and it was empty")
                    }
                    if line.count < 20 {
                        printError(
                            "warning: a passphrase of \(line.count) characters is easy to guess: anyone who records one handshake can try guesses offline; a random key (without --passphrase) is safer"
                        )
                    }
                    do throws(SessionKeyError) { key = try SessionKey.derived(fromPassphrase: line) } catch { throw CLIError("\(error)") }
                } else {
                    key = SessionKey.random()
                }
                try file.save(SessionKeyRing([key]))
                if passphrase {
                    print("session key \(key.fingerprint) (from the passphrase) stored in \(path)")
                    print("on every other host: echo PASSPHRASE | tutti key new --passphrase  (or copy \(path))")
                } else {
                    print(key.text)
                    print("session key \(key.fingerprint) stored in \(path) (mode 0600); it is printed only this once.")
                    print("On every other host: copy that file to the same place, or run: tutti key add \(key.text)")
                }
            }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Say where the key file is and which keys it holds (never the keys).")

        @OptionGroup var file: FileOption

        func run() throws {
            try reportingErrorsSynchronously {
                let path = file.path
                guard SessionKeyFile.exists(path) else {
                    print("no session key at \(path); make one with 'tutti key new', or copy the session's key file there")
                    return
                }
                let keys: SessionKeyRing
                keys = try file.load()
                print("\(path): session key \(keys.current.fingerprint)")
                for key in keys.keys.dropFirst() { print("  still accepted during a key change: \(key.fingerprint)") }
            }
        }
    }

    struct Change: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Start a key change: a new current key, the old ones still accepted until 'tutti key retire'.")

        @OptionGroup var file: FileOption

        func run() throws {
            try reportingErrorsSynchronously {
                let path = file.path
                let old: SessionKeyRing
                old = try file.load()
                let key = SessionKey.random()
                let keys = SessionKeyRing(Array(([key] + old.keys).prefix(SessionKeyRing.capacity)))
                try file.save(keys)
                print(key.text)
                print("new session key \(key.fingerprint) stored in \(path); \(old.current.fingerprint) is still accepted.")
                print("On every other host run: tutti key add \(key.text)")
                print("When every host has it, run 'tutti key retire' on each.")
            }
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Take a key another host made ('tutti key new' or 'change') as the current one, keeping the old ones.")

        @Argument(help: ArgumentHelp("The key (tk-…); read from standard input when not given.", valueName: "KEY"))
        var key: String?

        @OptionGroup var file: FileOption

        func run() throws {
            try reportingErrorsSynchronously {
                guard let text = key ?? readLine(strippingNewline: true), !text.isEmpty else {
                    throw CLIError("give the key as an argument or on standard input")
                }
                let new: SessionKey
                do throws(SessionKeyError) { new = try SessionKey(text: text) } catch { throw CLIError("\(error)") }
                let path = file.path
                var old: [SessionKey] = []
                if SessionKeyFile.exists(path) {
                    old = try file.load().keys
                }
                let keys = SessionKeyRing(Array(([new] + old.filter { $0 != new }).prefix(SessionKeyRing.capacity)))
                try file.save(keys)
                print(
                    "session key \(new.fingerprint) is current in \(path)"
                        + (keys.keys.count > 1
                            ? "; still accepted: \(keys.keys.dropFirst().map(\.fingerprint).joined(separator: ", "))" : ""))
            }
        }
    }

    struct Retire: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "End a key change: keep only the current key.")

        @OptionGroup var file: FileOption

        func run() throws {
            try reportingErrorsSynchronously {
                let path = file.path
                let keys: SessionKeyRing
                keys = try file.load()
                try file.save(SessionKeyRing([keys.current]))
                let retired = keys.keys.dropFirst().map(\.fingerprint)
                print(
                    retired.isEmpty
                        ? "\(path) holds only \(keys.current.fingerprint); nothing to retire"
                        : "retired \(retired.joined(separator: ", ")); \(path) holds only \(keys.current.fingerprint)")
            }
        }
    }
}
