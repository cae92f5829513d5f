import Foundation
import TuttiTesting

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
        process.environment = TestSession.childEnvironment()
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        try handle.close()
    }

    var pid: Int32 { process.processIdentifier }

    /// What it has written so far.
    var output: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }

    /// The control port a `tutti peer` logs when it starts listening, read from `log` (nil after 5 s).
    static func controlPort(loggedTo log: String) async -> UInt16? {
        for _ in 0..<100 {
            try? await Task.sleep(for: .milliseconds(50))
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            if let range = text.range(of: "listening for control on port ") {
                return UInt16(text[range.upperBound...].prefix { $0.isNumber })
            }
        }
        return nil
    }

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
