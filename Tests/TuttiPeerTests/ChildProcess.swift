import Foundation
import XCTest

/// Runs a program to its end without blocking a concurrency thread (tests that also run in-process peers
/// need those threads): its exit status, standard output and standard error. The process is terminated
/// after `timeout`.
func runChildProcess(_ executable: String, _ arguments: [String], timeout: Duration) async throws -> (status: Int32, output: String, error: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
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
    var binary: URL { URL(fileURLWithPath: TuttiBinary.path) }

    /// Skips only when the binary was not built (`TuttiBinary.require`).
    func requireBinary() throws { try TuttiBinary.require() }
}

/// A program left running (a `tutti peer`), its standard output and error going to `log`. Stop it with
/// `stop()` (SIGTERM, then its exit status).
final class RunningChildProcess: @unchecked Sendable {
    let process = Process()
    let log: URL

    init(_ executable: String, _ arguments: [String], log: URL) throws {
        self.log = log
        // A log that cannot be created makes the FileHandle below throw.
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        try handle.close()
    }

    var pid: Int32 { process.processIdentifier }

    /// What it has written so far.
    var output: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }

    /// Sends SIGTERM and waits for the exit status (SIGKILL after `timeout`).
    @discardableResult
    func stop(timeout: Duration = .seconds(5)) async -> Int32 {
        if process.isRunning { process.terminate() }
        return await waitForExit(timeout: timeout)
    }

    /// Waits for the process to end on its own; kills it after `timeout`.
    func waitForExit(timeout: Duration) async -> Int32 {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while process.isRunning && clock.now < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        return process.terminationStatus
    }
}
