import Foundation
import XCTest

/// The `tutti` binary's help and exit codes (it is built with the tests: `swift build --build-tests`).
final class CommandLineTests: XCTestCase {
    private var binary: URL {
        // .build/<configuration>/tutti, next to the test executable.
        Bundle.main.executableURL!.deletingLastPathComponent().appendingPathComponent("tutti")
    }

    /// The one skip in these tests: only when the `tutti` product was not built (e.g. `swift test --filter`
    /// after a partial build). `make test` (and so CI) builds it with `swift build --build-tests` first, so CI
    /// always runs these tests; the lab tests drive the same binary end to end as well.
    private func requireBinary() throws {
        try XCTSkipUnless(FileManager.default.isExecutableFile(atPath: binary.path), "tutti binary not built at \(binary.path)")
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

    func testEveryCommandHasHelp() throws {
        try requireBinary()
        for command in ["peer", "ls", "connect", "disconnect", "stats", "analyze"] {
            let result = try run([command, "--help"])
            XCTAssertEqual(result.status, 0, command)
            XCTAssertTrue(result.output.contains("USAGE: tutti \(command)"), "\(command): \(result.output)")
        }
        let root = try run(["--help"])
        XCTAssertTrue(root.output.contains("SUBCOMMANDS:"))
    }

    func testTheExampleConfigurationParses() throws {
        try requireBinary()
        let configs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../configs")
        let stage = try run(["peer", "--config", configs.appendingPathComponent("stage.toml").path, "--dry-run"])
        XCTAssertEqual(stage.status, 0, stage.error)
        XCTAssertEqual(
            stage.output,
            """
            peer stage: control port any, period 64 frames, discovery on, beat clock on
              sender click "Click 1 kHz": 2ch, 48000/44100 Hz, L24/L16/OPUS, tone 1000.0 Hz at 0.5
              sender mic "stdin": 1ch, 48000 Hz, L24/L16/OPUS, stdin s16le
              receiver monitor "monitor.wav": 2ch, 48000/44100/96000 Hz, L24/L16/OPUS, wav monitor.wav

            """)
        // Flags override the file.
        let overridden = try run([
            "peer", "--config", configs.appendingPathComponent("stage.toml").path, "--name", "other", "--no-discovery", "--dry-run",
        ])
        XCTAssertTrue(overridden.output.hasPrefix("peer other: control port any, period 64 frames, discovery off, beat clock on"), overridden.output)

        let broken = FileManager.default.temporaryDirectory.appendingPathComponent("tutti-broken-\(UInt32.random(in: 0 ... .max)).toml")
        try "name = \"x\"\ncolour = 3\n".write(to: broken, atomically: true, encoding: .utf8)
        let refused = try run(["peer", "--config", broken.path, "--dry-run"])
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.error.hasPrefix("tutti: config \(broken.path): unknown key 'colour'"), refused.error)
    }

    func testErrorsAreOneLineOnStandardErrorWithAFailingStatus() throws {
        try requireBinary()
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
