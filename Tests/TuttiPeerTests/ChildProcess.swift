import Foundation

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
