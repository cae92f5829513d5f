#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import Foundation
import TuttiIO

/// A failure the user should read as one line on stderr (exit status 1).
struct CLIError: Error, CustomStringConvertible {
    var message: String
    init(_ message: String) { self.message = message }
    var description: String { message }
}

/// Writes one line to standard error.
func printError(_ line: String) {
    let text = line + "\n"
    _ = text.withCString { system_write(2, $0, strlen($0)) }
}

/// Runs a command body, turning a `CLIError` into one line on stderr and exit status 1.
func reportingErrors(_ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch let error as CLIError {
        printError("tutti: \(error.message)")
        throw ExitCode.failure
    }
}

/// `reportingErrors(_:)` for a command that never waits (no async work).
func reportingErrorsSynchronously(_ body: () throws -> Void) throws {
    do {
        try body()
    } catch let error as CLIError {
        printError("tutti: \(error.message)")
        throw ExitCode.failure
    }
}

/// As `reportingErrors(_:)`; with `json`, a failure also prints the command's JSON object for it
/// (`failure(message)`) on standard output, so a script reads one shape whatever happened.
func reportingErrors<Failure: Encodable>(json: Bool, as failure: (String) -> Failure, _ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch let error as CLIError {
        if json { printJSON(failure(error.message)) }
        printError("tutti: \(error.message)")
        throw ExitCode.failure
    }
}

/// Prints `value` as one line of JSON (sorted keys).
func printJSON(_ value: some Encodable) {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    guard let data = try? encoder.encode(value) else { return }
    print(String(decoding: data, as: UTF8.self))
    flushStandardOutput()
}

/// Flushes standard output (for live refreshes through a pipe).
func flushStandardOutput() {
    system_fflush(nil)
}

/// Formats a number with a fixed number of decimals.
func fixed(_ value: Double, _ decimals: Int = 2) -> String {
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let rounded = (value * scale).rounded() / scale
    var text = "\(rounded)"
    if let dot = text.firstIndex(of: ".") {
        let fraction = text[text.index(after: dot)...]
        if fraction.count < decimals { text += String(repeating: "0", count: decimals - fraction.count) }
        if decimals == 0 { text = String(text[..<dot]) }
    } else if decimals > 0 {
        text += "." + String(repeating: "0", count: decimals)
    }
    return text
}

/// Pads `text` to `width` columns (left-aligned).
func pad(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
}
