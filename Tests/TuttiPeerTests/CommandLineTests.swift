import Foundation
import XCTest

/// The `tutti` binary's help and exit codes (it is built with the tests: `swift build --build-tests`).
final class CommandLineTests: XCTestCase {
    private var binary: URL {
        // .build/<configuration>/tutti, next to the test executable.
        Bundle.main.executableURL!.deletingLastPathComponent().appendingPathComponent("tutti")
    }

    private func run(_ arguments: [String]) throws -> (status: Int32, output: String, error: String) {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        process.waitUntilExit()
        return (
            process.terminationStatus, String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self),
            String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        )
    }

    // Skipped only when run without the product built (e.g. `swift test --filter` after a partial build);
    // `make test` builds it with `swift build --build-tests`, so CI always runs these.
    func testEveryCommandHasHelp() throws {
        try XCTSkipUnless(FileManager.default.isExecutableFile(atPath: binary.path), "tutti binary not built at \(binary.path)")
        for command in ["peer", "ls", "connect", "disconnect", "stats", "analyze"] {
            let result = try run([command, "--help"])
            XCTAssertEqual(result.status, 0, command)
            XCTAssertTrue(result.output.contains("USAGE: tutti \(command)"), "\(command): \(result.output)")
        }
        let root = try run(["--help"])
        XCTAssertTrue(root.output.contains("SUBCOMMANDS:"))
    }

    func testErrorsAreOneLineOnStandardErrorWithAFailingStatus() throws {
        try XCTSkipUnless(FileManager.default.isExecutableFile(atPath: binary.path), "tutti binary not built at \(binary.path)")
        let badPort = try run(["peer", "--no-discovery", "--sender", "out=bogus"])
        XCTAssertEqual(badPort.status, 1)
        XCTAssertEqual(badPort.error, "tutti: port out: unknown sender kind 'bogus' (one of: tone, wav, stdin)\n")
        let noPorts = try run(["peer", "--no-discovery"])
        XCTAssertEqual(noPorts.status, 1)
        XCTAssertEqual(noPorts.error.split(separator: "\n").count, 1)
        let unreachable = try run(["connect", "x:out", "y:in", "--no-discovery", "--peer", "127.0.0.1:9", "--browse", "0.5"])
        XCTAssertEqual(unreachable.status, 1)
        XCTAssertTrue(unreachable.error.hasPrefix("tutti: peer x does not answer") || unreachable.error.hasPrefix("tutti: no peer named 'x'"), unreachable.error)
        let badArgument = try run(["connect", "nocolon", "y:in"])
        XCTAssertNotEqual(badArgument.status, 0)
    }
}
