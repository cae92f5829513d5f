import Foundation
import XCTest

/// The `tutti` binary built with the tests (`swift build --build-tests`), next to the test executable.
public enum TuttiBinary {
    public static var path: String {
        Bundle.main.executableURL!.deletingLastPathComponent().appendingPathComponent("tutti").path
    }

    /// The binary for tests that time audio on real clocks (peers whose device threads must keep up): the
    /// release build named by `$TUTTI_TIMED_BIN` (scripts/test sets it, as the lab tests run the release build:
    /// a debug build's device threads are several times slower), else `path`.
    public static var timedPath: String {
        ProcessInfo.processInfo.environment["TUTTI_TIMED_BIN"].flatMap { $0.isEmpty ? nil : $0 } ?? path
    }

    /// The one skip in the CLI tests: only when the `tutti` product was not built (e.g. `swift test
    /// --filter` after a partial build). `make test` (and so CI) builds it with `swift build --build-tests`
    /// first, so CI always runs these tests; the lab tests drive the same binary end to end as well.
    public static func require() throws {
        try XCTSkipUnless(FileManager.default.isExecutableFile(atPath: path), "tutti binary not built at \(path)")
    }

    /// Runs `tutti ARGUMENTS` to its end (terminated after `timeout`), with `environment` added to this
    /// process's.
    public static func run(
        _ arguments: [String], environment: [String: String] = [:], timeout: Duration = .seconds(20)
    ) async throws -> (status: Int32, output: String, error: String) {
        try await runChildProcess(path, arguments, environment: environment, timeout: timeout)
    }
}

/// Runs a program to its end without blocking a concurrency thread (tests that also run in-process peers
/// need those threads): its exit status, standard output and standard error. The process is terminated
/// after `timeout`. `environment` is added to this process's and the test session's (`TestSession`).
public func runChildProcess(
    _ executable: String, _ arguments: [String], environment: [String: String] = [:], timeout: Duration
) async throws -> (status: Int32, output: String, error: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.environment = TestSession.childEnvironment(environment)
    let output = Pipe()
    let error = Pipe()
    process.standardOutput = output
    process.standardError = error
    process.standardInput = FileHandle.nullDevice
    let finished = AsyncStream<Void>.makeStream()
    process.terminationHandler = { _ in finished.continuation.finish() }
    try process.run()
    let watchdog = Task {
        try await Task.sleep(for: timeout)
        process.terminate()
    }
    // Drain the pipes while the child runs, so a chatty child never blocks on a full pipe.
    async let standardOutput = Task.detached { output.fileHandleForReading.readDataToEndOfFile() }.value
    async let standardError = Task.detached { error.fileHandleForReading.readDataToEndOfFile() }.value
    for await _ in finished.stream {}
    watchdog.cancel()
    return (
        process.terminationStatus, String(decoding: await standardOutput, as: UTF8.self),
        String(decoding: await standardError, as: UTF8.self)
    )
}

extension XCTestCase {
    /// The `tutti` binary (`TuttiBinary.path`).
    public var binary: URL { URL(fileURLWithPath: TuttiBinary.path) }

    /// Skips only when the binary was not built (`TuttiBinary.require`).
    public func requireBinary() throws { try TuttiBinary.require() }

    /// `XCTUnwrap` for a value that takes an `await` to get (named as XCTest names its assertions).
    // swift-format-ignore: AlwaysUseLowerCamelCase
    public func XCTUnwrapAsync<T>(
        _ value: @autoclosure () async throws -> T?, file: StaticString = #filePath, line: UInt = #line
    ) async throws -> T {
        let got = try await value()
        return try XCTUnwrap(got, file: file, line: line)
    }
}
