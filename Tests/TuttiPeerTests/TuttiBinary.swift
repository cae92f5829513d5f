import Foundation
import XCTest

/// The `tutti` binary built with the tests (`swift build --build-tests`), next to the test executable.
enum TuttiBinary {
    static var path: String {
        Bundle.main.executableURL!.deletingLastPathComponent().appendingPathComponent("tutti").path
    }

    /// The one skip in the CLI tests: only when the `tutti` product was not built (e.g. `swift test
    /// --filter` after a partial build). `make test` (and so CI) builds it with `swift build --build-tests`
    /// first, so CI always runs these tests; the lab tests drive the same binary end to end as well.
    static func require() throws {
        try XCTSkipUnless(FileManager.default.isExecutableFile(atPath: path), "tutti binary not built at \(path)")
    }

    /// Runs `tutti ARGUMENTS` to its end (terminated after `timeout`).
    static func run(_ arguments: [String], timeout: Duration = .seconds(20)) async throws -> (status: Int32, output: String, error: String) {
        try await runChildProcess(path, arguments, timeout: timeout)
    }
}
