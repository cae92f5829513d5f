import Foundation
import TuttiTesting
import XCTest

/// The whole help text of `tutti` and of every subcommand, as the binary prints it at 80 columns, against the
/// checked-in copies in `Help/` (as swift-argument-parser's example tests do): any change to a help line shows
/// here, to be read and accepted. After an intended change, `TUTTI_UPDATE_HELP=1 swift test --filter
/// HelpTextTests` rewrites the copies.
final class HelpTextTests: XCTestCase {
    private static let helpDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Help")
    private static let commands = [
        "peer", "ls", "connect", "disconnect", "stats", "set", "mute", "unmute", "sdp", "clock", "key", "analyze",
    ]

    func testEveryCommandHasACheckedInHelpText() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.helpDirectory.path).sorted()
        XCTAssertEqual(files, (["tutti"] + Self.commands).map { "\($0).txt" }.sorted())
    }

    func testTheBinaryPrintsTheCheckedInHelpOfEveryCommand() async throws {
        try TuttiBinary.require()
        let update = ProcessInfo.processInfo.environment["TUTTI_UPDATE_HELP"] == "1"
        for command in [nil] + Self.commands.map(Optional.some) {
            let name = command ?? "tutti"
            let printed = try await TuttiBinary.run((command.map { [$0] } ?? []) + ["--help"], environment: ["COLUMNS": "80"])
            XCTAssertEqual(printed.status, 0, name)
            XCTAssertEqual(printed.error, "", name)
            let file = Self.helpDirectory.appendingPathComponent("\(name).txt")
            if update { try printed.output.write(to: file, atomically: true, encoding: .utf8) }
            let expected = try String(contentsOf: file, encoding: .utf8)
            XCTAssertEqual(printed.output, expected, "\(name) --help differs from Help/\(name).txt")
        }
    }
}
