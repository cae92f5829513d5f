#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A program left running in the background while a test drives it (a `tutti peer`, a private `jackd`),
/// its standard output and error going to a log file the test reads. Terminated (SIGTERM) when released
/// while still running, so a failing test leaves no process behind.
///
/// Thread-safe: no; use it from the one test task that started it.
public final class BackgroundProcess {
    /// The log file: the program's standard output and error.
    public let logPath: String
    private let process: Process

    /// Starts `executable` with `arguments` and `environment` added to this process's.
    /// Throws when the program cannot be started (not found, not executable) or the log cannot be created.
    public init(_ executable: String, _ arguments: [String], logPath: String, environment: [String: String] = [:]) throws {
        self.logPath = logPath
        guard FileManager.default.createFile(atPath: logPath, contents: nil), let log = FileHandle(forWritingAtPath: logPath)
        else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: logPath]) }
        process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = TestSession.childEnvironment(environment)
        process.standardOutput = log
        process.standardError = log
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    deinit {
        if process.isRunning { process.terminate() }
    }

    /// Whether the program still runs.
    public var isRunning: Bool { process.isRunning }

    /// What the program has written so far (empty when the log cannot be read).
    public var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Sends `signal` (e.g. `SIGTERM`) to the program.
    public func send(_ signal: Int32) {
        if process.isRunning { kill(process.processIdentifier, signal) }
    }

    /// Its exit status once it has ended, or `nil` when it still runs after `timeout`.
    public func exitStatus(within timeout: Duration) async throws -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            guard ContinuousClock.now < deadline else { return nil }
            try await Task.sleep(for: .milliseconds(50))
        }
        return process.terminationStatus
    }

    /// The first match of `pattern`'s first capture group in the log, waiting up to `timeout` for it.
    public func waitForLog(_ pattern: String, timeout: Duration) async throws -> String? {
        let expression = try NSRegularExpression(pattern: pattern)
        let deadline = ContinuousClock.now + timeout
        while true {
            let text = log
            if let match = expression.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)),
                let range = Range(match.range(at: match.numberOfRanges > 1 ? 1 : 0), in: text)
            {
                return String(text[range])
            }
            guard ContinuousClock.now < deadline, process.isRunning else { return nil }
            try await Task.sleep(for: .milliseconds(50))
        }
    }
}

/// The full path of the program `name` on `PATH`, or `nil` when it is not installed.
///
/// Thread-safe: yes.
public func executablePath(_ name: String) -> String? {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    return path.split(separator: ":").map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
}
