#if canImport(Glibc)
import Glibc
#endif
import TuttiIO
import XCTest

/// A WAV writer reports the system's errors instead of losing audio silently, and never overwrites a file
/// when asked not to.
final class WAVWriterFailureTests: XCTestCase {
    private func temporaryPath(_ name: String) -> String {
        "/tmp/tutti-wav-failure-tests-\(getpid())-\(name)"
    }

    func testAFullDeviceIsAnErrorWithItsErrno() throws {
        // /dev/full accepts the open and fails every write that reaches it with ENOSPC: here the header's, at once
        // (writes go straight to the file, not into a buffer that fails later).
        XCTAssertThrowsError(try WAVWriter(path: "/dev/full", sampleRate: 48_000, channels: 2, encoding: .int24)) { error in
            XCTAssertEqual((error as? SystemError)?.errno, ENOSPC, "\(error)")
        }
        let path = temporaryPath("closed")
        defer { unlink(path) }
        let writer = try WAVWriter(path: path, sampleRate: 48_000, channels: 2, encoding: .int24)
        try writer.close()
        XCTAssertNoThrow(try writer.close(), "closing a closed writer does nothing")
    }

    func testAnExistingFileIsRefusedUnlessReplacing() throws {
        let path = temporaryPath("existing")
        defer { unlink(path) }
        let first = try WAVWriter(path: path, sampleRate: 48_000, channels: 1, encoding: .int16)
        try [Float(0.5), 0.5].withUnsafeBufferPointer { try first.write($0) }
        try first.close()
        XCTAssertEqual(first.frames, 2)

        XCTAssertThrowsError(try WAVWriter(path: path, sampleRate: 48_000, channels: 1, encoding: .int16, replacing: false)) { error in
            XCTAssertEqual((error as? SystemError)?.errno, EEXIST)
        }
        XCTAssertEqual(try WAVAudio.read(path: path).samples, [0.5, 0.5], "the refused writer left the file alone")
        let replacing = try WAVWriter(path: path, sampleRate: 48_000, channels: 1, encoding: .int16)
        try replacing.close()
        XCTAssertEqual(try WAVAudio.read(path: path).samples, [])
    }

    func testAMissingDirectoryIsAnErrorWithItsErrno() {
        XCTAssertThrowsError(try WAVWriter(path: "/nonexistent-tutti-dir/foh.wav", sampleRate: 48_000, channels: 2, encoding: .int24)) {
            error in
            XCTAssertEqual((error as? SystemError)?.errno, ENOENT)
        }
    }
}
