import ArgumentParser
import Foundation
import TuttiTesting
import XCTest

@testable import tutti

/// Every subcommand of `tutti`, from one table: its help (usage line, arguments, every option, and no
/// option mentioned that it lacks), an unknown option, and one bad value, parsed through the command types
/// at 80 columns; then the built binary prints the same text with the same exit status.
final class EveryCommandTests: XCTestCase {
    private struct Command {
        var type: any ParsableCommand.Type
        var name: String
        /// The help's USAGE line, exactly (ArgumentParser shortens a long one to `<options>`).
        var usage: String
        /// The ARGUMENTS section's labels.
        var arguments: [String] = []
        /// The OPTIONS section's labels, without the `--version` and `-h, --help` every command has.
        var options: [String]
        /// What the command needs before an option is looked at (its required arguments).
        var required: [String] = []
        /// Arguments with one bad value, and the message refusing it (exit status 64).
        var bad: [String]
        var refusal: String
    }

    private static let session = ["--peer <HOST:PORT>", "--no-discovery", "--browse <SECONDS>", "--key-file <FILE>", "--open"]

    private static let commands: [Command] = [
        Command(
            type: PeerCommand.self, name: "peer", usage: "tutti peer <options>",
            options: [
                "--name <NAME>", "--config <FILE>", "--sender <SPEC>", "--receiver <SPEC>", "--filter <SPEC>", "--control-port <PORT>",
                "--control-address <IP>", "--allow-rtp <PREFIX>",
                "--peer <HOST:PORT>", "--key-file <FILE>", "--open", "--public-reads", "--no-discovery", "--no-link",
                "--link-interface <NAME>", "--period <FRAMES>",
                "--conceal <MODE>", "--no-drift-compensation", "--realtime-priority <N>", "--state-dir <DIR>",
                "--log-level <log-level>", "--dry-run",
            ],
            bad: ["--control-port", "70000"], refusal: "The value '70000' is invalid for '--control-port <PORT>'"),
        Command(
            type: ListCommand.self, name: "ls",
            usage: "tutti ls [--peer <HOST:PORT> ...] [--no-discovery] [--browse <SECONDS>] [--key-file <FILE>] [--open] [--json]",
            options: session + ["--json"],
            bad: ["--browse", "0"], refusal: "--browse must be between 0 and 30 seconds"),
        Command(
            type: ConnectCommand.self, name: "connect",
            usage: "tutti connect [<options>] <PEER:PORT> <PEER:PORT|rtp://HOST:PORT> [<PEER:PORT> ...]",
            arguments: ["<PEER:PORT>", "<PEER:PORT|rtp://HOST:PORT>", "<PEER:PORT>"],
            options: [
                "--sdp <FILE>", "--srtp", "--rate <HZ>", "--channels <N>", "--format <FORMAT>", "--codec <CODEC>", "--bitrate <BITS/S>",
                "--frame <DURATION>", "--complexity <N>", "--application <MODE>", "--fec", "--expected-loss <PERCENT>",
                "--frames <FRAMES>", "--latency <MS|MIN..MAX|auto>", "--sync <MS>", "--json",
            ] + session,
            required: ["a:out", "b:in"],
            bad: ["a:out", "b:in", "--latency", "0"],
            refusal: "--latency must be a number of milliseconds above 0 and at most 2000, a range MIN..MAX, or auto (got '0')"),
        Command(
            type: DisconnectCommand.self, name: "disconnect",
            usage:
                "tutti disconnect <PEER:PORT> [<PEER:PORT|rtp://HOST:PORT>] [--json] [--peer <HOST:PORT> ...] [--no-discovery] [--browse <SECONDS>] [--key-file <FILE>] [--open]",
            arguments: ["<PEER:PORT>", "<PEER:PORT|rtp://HOST:PORT>"], options: ["--json"] + session, required: ["a:out"],
            bad: ["nocolon"], refusal: "name the sender port as PEER:PORT ('nocolon' has no port; 'tutti ls' lists them)"),
        Command(
            type: StatsCommand.self, name: "stats",
            usage:
                "tutti stats [--peer <HOST:PORT> ...] [--no-discovery] [--browse <SECONDS>] [--key-file <FILE>] [--open] [--json] [--wide] [--interval <SECONDS>] [--count <count>]",
            options: session + ["--json", "--wide", "--interval <SECONDS>", "--count <count>"],
            bad: ["--interval", "0.01"], refusal: "--interval must be between 0.1 and 3600 seconds"),
        Command(
            type: SetCommand.self, name: "set",
            usage:
                "tutti set <PEER:PORT> [<NAME=VALUE> ...] [--json] [--peer <HOST:PORT> ...] [--no-discovery] [--browse <SECONDS>] [--key-file <FILE>] [--open]",
            arguments: ["<PEER:PORT>", "<NAME=VALUE>"], options: ["--json"] + session, required: ["fx:vox", "db=-6"],
            bad: ["fx:vox", "db"], refusal: "'db' is not NAME=VALUE, e.g. db=-6"),
        Command(
            type: MuteCommand.self, name: "mute",
            usage:
                "tutti mute <PEER:PORT> [<PEER:PORT|rtp://HOST:PORT>] [--json] [--peer <HOST:PORT> ...] [--no-discovery] [--browse <SECONDS>] [--key-file <FILE>] [--open]",
            arguments: ["<PEER:PORT>", "<PEER:PORT|rtp://HOST:PORT>"], options: ["--json"] + session, required: ["stage:vox"],
            bad: ["stage"], refusal: "name the port as PEER:PORT ('stage' has no port; 'tutti ls' lists them)"),
        Command(
            type: UnmuteCommand.self, name: "unmute",
            usage:
                "tutti unmute <PEER:PORT> [<PEER:PORT|rtp://HOST:PORT>] [--json] [--peer <HOST:PORT> ...] [--no-discovery] [--browse <SECONDS>] [--key-file <FILE>] [--open]",
            arguments: ["<PEER:PORT>", "<PEER:PORT|rtp://HOST:PORT>"], options: ["--json"] + session, required: ["stage:vox"],
            bad: ["stage:vox", "foh"], refusal: "name the receiver port as PEER:PORT ('foh' has no port; 'tutti ls' lists them)"),
        Command(
            type: SDPCommand.self, name: "sdp",
            usage:
                "tutti sdp [<PEER[:PORT]>] [--connection <ID>] [--json] [--peer <HOST:PORT> ...] [--no-discovery] [--browse <SECONDS>] [--key-file <FILE>] [--open]",
            arguments: ["<PEER[:PORT]>"], options: ["--connection <ID>", "--json"] + session,
            bad: ["--connection", "XYZ"], refusal: "--connection must be 16 lowercase hex digits"),
        Command(
            type: ClockCommand.self, name: "clock", usage: "tutti clock <options>",
            options: [
                "--tempo <BPM>", "--start", "--stop", "--quantum <BEATS>", "--interface <NAME>", "--settle <SECONDS>", "--json",
                "--interval <SECONDS>", "--count <count>", "--serve", "--name <NAME>", "--sample-every <MS>", "--log-changes",
            ],
            bad: ["--tempo", "5"], refusal: "--tempo must be between 20 and 999 bpm"),
        Command(
            type: KeyCommand.self, name: "key", usage: "tutti key <subcommand>", options: [],
            bad: ["add", "--file"], refusal: "Missing value for '--file <FILE>'"),
        Command(
            type: AnalyzeCommand.self, name: "analyze",
            usage:
                "tutti analyze <file> [--reference <FILE>] [--packet-frames <FRAMES>] [--settle <SECONDS>] [--ignore-tail <SECONDS>] [--tone-hz <HZ>] [--window <SECONDS>] [--channel <channel>] [--level-hz <HZ> ...] [--clicks] [--json]",
            arguments: ["<file>"],
            options: [
                "--reference <FILE>", "--packet-frames <FRAMES>", "--settle <SECONDS>", "--ignore-tail <SECONDS>",
                "--tone-hz <HZ>", "--window <SECONDS>", "--channel <channel>", "--level-hz <HZ>", "--clicks", "--json",
            ],
            required: ["take.wav"],
            bad: ["take.wav", "--channel", "two"], refusal: "The value 'two' is invalid for '--channel <channel>'"),
    ]

    /// The error parsing `arguments` throws. `--help` parses to ArgumentParser's own help command, whose
    /// `run` throws the help request (it prints nothing); any of our commands parsed is a failure here.
    private func parseError(_ arguments: [String], file: StaticString = #filePath, line: UInt = #line) -> (any Error)? {
        do {
            var command = try Tutti.parseAsRoot(arguments)
            guard !(command is any AsyncParsableCommand) else {
                XCTFail("tutti \(arguments.joined(separator: " ")) parsed as \(type(of: command))", file: file, line: line)
                return nil
            }
            try command.run()
            XCTFail("tutti \(arguments.joined(separator: " ")) ran", file: file, line: line)
            return nil
        } catch {
            return error
        }
    }

    /// The labels of a help section (`ARGUMENTS:`, `OPTIONS:`): what starts each entry, before its help.
    private static func labels(of section: String, in help: String) -> [String] {
        let lines = help.components(separatedBy: "\n")
        guard let start = lines.firstIndex(of: section) else { return [] }
        let label = /^  (-h, --help|--[a-z-]+(?: <[^>]+>)?|<[^>]+>)(?: |$)/
        return lines[(start + 1)...].prefix { !$0.isEmpty }.compactMap { line in
            (try? label.firstMatch(in: line)).map { String($0.1) }
        }
    }

    func testTheTableHasEverySubcommand() {
        XCTAssertEqual(Tutti.configuration.subcommands.map { $0.configuration.commandName }, Self.commands.map(\.name))
        for command in Self.commands { XCTAssertEqual(command.type.configuration.commandName, command.name) }
    }

    func testHelpOfEveryCommandShowsItsUsageArgumentsAndEveryOption() throws {
        for command in Self.commands {
            let error = try XCTUnwrap(parseError([command.name, "--help"]), command.name)
            XCTAssertEqual(Tutti.exitCode(for: error), .success, command.name)
            let help = Tutti.fullMessage(for: error, columns: 80)
            XCTAssertEqual(help, Tutti.helpMessage(for: command.type, columns: 80), command.name)

            let usage = help.components(separatedBy: "\n").filter { $0.hasPrefix("USAGE: ") }
            XCTAssertEqual(usage, ["USAGE: \(command.usage)"], command.name)
            XCTAssertEqual(Self.labels(of: "ARGUMENTS:", in: help), command.arguments, command.name)
            XCTAssertEqual(Self.labels(of: "OPTIONS:", in: help), command.options + ["--version", "-h, --help"], command.name)
            if !command.usage.contains("<options>") {
                for option in command.options {
                    XCTAssertTrue(command.usage.contains("[\(option)"), "\(command.name): usage lacks \(option)")
                }
            }
        }
    }

    /// Overview, discussion and option help name only options the command has, and hold no stray `\`.
    func testHelpMentionsOnlyOptionsTheCommandHas() throws {
        for command in Self.commands {
            let help = Tutti.helpMessage(for: command.type, columns: 80)
            let names = Set(command.options.map { String($0.prefix { $0 != " " }) } + ["--version", "--help"])
            let mentioned = Set(help.matches(of: /--[a-z][a-z-]*/).map { String($0.0) })
            XCTAssertEqual(mentioned.subtracting(names), [], "\(command.name) mentions options it does not have")
            XCTAssertFalse(help.contains("\\"), "\(command.name): a stray backslash in its help")
        }
    }

    func testAnUnknownOptionIsAUsageErrorNamingIt() throws {
        for command in Self.commands {
            let error = try XCTUnwrap(parseError([command.name] + command.required + ["--bogus"]), command.name)
            XCTAssertEqual(Tutti.exitCode(for: error), .validationFailure, command.name)
            XCTAssertEqual(Tutti.exitCode(for: error).rawValue, 64, command.name)
            XCTAssertEqual(Tutti.message(for: error), "Unknown option '--bogus'", command.name)
            XCTAssertEqual(
                Tutti.fullMessage(for: error, columns: 80),
                """
                Error: Unknown option '--bogus'
                Usage: \(command.usage)
                  See 'tutti \(command.name) --help' for more information.
                """, command.name)
        }
    }

    func testABadValueOfEveryCommandIsRefusedWithItsReason() throws {
        for command in Self.commands {
            let error = try XCTUnwrap(parseError([command.name] + command.bad), command.name)
            XCTAssertEqual(Tutti.exitCode(for: error).rawValue, 64, command.name)
            XCTAssertEqual(Tutti.message(for: error), command.refusal, command.name)
            XCTAssertEqual(
                Tutti.fullMessage(for: error, columns: 80).components(separatedBy: "\n").first, "Error: \(command.refusal)",
                command.name)
        }
    }

    /// The built binary: the same help on stdout with status 0, and the same usage errors on stderr (nothing
    /// on stdout) with status 64.
    func testTheBinaryPrintsTheSameHelpAndUsageErrors() async throws {
        try requireBinary()
        let columns = ["COLUMNS": "80"]
        for command in Self.commands {
            let help = try await TuttiBinary.run([command.name, "--help"], environment: columns)
            XCTAssertEqual(help.status, 0, command.name)
            XCTAssertEqual(help.output, Tutti.helpMessage(for: command.type, columns: 80) + "\n", command.name)
            XCTAssertEqual(help.error, "", command.name)

            for arguments in [command.required + ["--bogus"], command.bad] {
                let error = try XCTUnwrap(parseError([command.name] + arguments))
                let refused = try await TuttiBinary.run([command.name] + arguments, environment: columns)
                XCTAssertEqual(refused.status, 64, "\(command.name) \(arguments)")
                XCTAssertEqual(refused.error, Tutti.fullMessage(for: error, columns: 80) + "\n", "\(command.name) \(arguments)")
                XCTAssertEqual(refused.output, "", "\(command.name) \(arguments)")
            }
        }
        let root = try await TuttiBinary.run(["--help"], environment: columns)
        XCTAssertEqual(root.status, 0)
        for command in Self.commands {
            let abstract = command.type.configuration.abstract
            XCTAssertTrue(
                root.output.contains("  \(command.name) ") && root.output.contains(String(abstract.prefix(20))),
                "root help lacks \(command.name)")
        }
    }
}
