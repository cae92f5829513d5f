#if canImport(Glibc)
import Glibc
#endif
import Foundation
import TuttiIO
import XCTest

/// The header a WAV writer leaves always matches the bytes on disk: after every flush, after a write that ran
/// out of room halfway through a frame (the file is cut back to the last whole frame), and beyond 4 GiB, where
/// the file turns RF64 (tried here with the switch lowered to a few kilobytes).
final class WAVWriterHeaderTests: XCTestCase {
    private var path = ""

    override func setUp() { path = "/tmp/tutti-wav-header-tests-\(getpid())-\(UInt32.random(in: 0 ... .max)).wav" }
    override func tearDown() { unlink(path) }

    private func bytes() throws -> [UInt8] { [UInt8](try XCTUnwrap(FileManager.default.contents(atPath: path))) }
    private func u32(_ bytes: [UInt8], _ offset: Int) -> Int { (0..<4).reduce(0) { $0 | Int(bytes[offset + $1]) << (8 * $1) } }
    private func u64(_ bytes: [UInt8], _ offset: Int) -> Int { u32(bytes, offset) | u32(bytes, offset + 4) << 32 }
    private func text(_ bytes: [UInt8], _ offset: Int) -> String { String(decoding: bytes[offset..<(offset + 4)], as: UTF8.self) }

    /// Runs `body` with this process's file size limit at `bytes` (as a full disk: writes beyond it fail with
    /// EFBIG, SIGXFSZ ignored), and returns the error it ended with.
    private func underFileSizeLimit(_ bytes: Int, _ body: () throws(SystemError) -> Void) -> SystemError? {
        let previousHandler = signal(SIGXFSZ, SIG_IGN)
        defer { signal(SIGXFSZ, previousHandler) }
        var saved = rlimit()
        getrlimit(Int32(RLIMIT_FSIZE.rawValue), &saved)
        var limited = saved
        limited.rlim_cur = rlim_t(bytes)
        XCTAssertEqual(setrlimit(Int32(RLIMIT_FSIZE.rawValue), &limited), 0)
        defer { XCTAssertEqual(setrlimit(Int32(RLIMIT_FSIZE.rawValue), &saved), 0) }
        do throws(SystemError) { try body() } catch { return error }
        return nil
    }

    private func ramp(_ frames: Int, channels: Int) -> [Float] {
        (0..<(frames * channels)).map { Float($0 % 200) / 200 - 0.5 }
    }

    func testTheHeaderCountsEveryFrameOnDiskAfterEachFlush() throws {
        let writer = try WAVWriter(path: path, sampleRate: 48_000, channels: 2, encoding: .int24)
        for round in 1...3 {
            try ramp(100, channels: 2).withUnsafeBufferPointer { try writer.write($0) }
            try writer.flush()
            let file = try bytes()
            XCTAssertEqual(file.count, WAVWriter.headerBytes + round * 600)
            XCTAssertEqual(text(file, 0), "RIFF")
            XCTAssertEqual(u32(file, 4), file.count - 8)
            XCTAssertEqual(text(file, 12), "JUNK", "room for ds64, should the file pass 4 GiB")
            XCTAssertEqual(text(file, 72), "data")
            XCTAssertEqual(u32(file, 76), round * 600)
        }
        try writer.close()
        XCTAssertEqual(try WAVAudio.read(path: path).samples.count, 600)
    }

    /// A file size limit (as a full disk) stops a write 3 bytes into a frame: the file is cut back to the frame
    /// before, the header says so, and the error is EFBIG.
    func testAWriteThatRunsOutOfRoomMidFrameLeavesWholeFramesAndATrueHeader() throws {
        let writer = try WAVWriter(path: path, sampleRate: 48_000, channels: 2, encoding: .int24)
        let samples = ramp(250, channels: 2)
        let failure = underFileSizeLimit(WAVWriter.headerBytes + 100 * 6 + 3) { () throws(SystemError) in
            try samples.withUnsafeBufferPointer { (samples) throws(SystemError) in try writer.write(samples) }
        }
        XCTAssertEqual(failure?.errno, EFBIG, "\(String(describing: failure))")
        XCTAssertEqual(writer.frames, 100)
        let file = try bytes()
        XCTAssertEqual(file.count, WAVWriter.headerBytes + 600, "cut back to the last whole frame")
        XCTAssertEqual(u32(file, 4), file.count - 8)
        XCTAssertEqual(u32(file, 76), 600)
        try writer.close()
        let audio = try WAVAudio.read(path: path)
        XCTAssertEqual(audio.samples.count, 200)
        let expected = ramp(100, channels: 2)
        XCTAssertLessThan(zip(audio.samples, expected).map { abs($0 - $1) }.max() ?? 1, 1e-6)
    }

    /// The same when the limit falls in a later write of many: the sink writes 4096 samples at a time.
    func testALimitReachedAfterManyWritesLeavesATrueHeader() throws {
        let writer = try WAVWriter(path: path, sampleRate: 48_000, channels: 2, encoding: .int24)
        let chunk = ramp(2048, channels: 2)
        let failure = underFileSizeLimit(300_001) { () throws(SystemError) in
            for _ in 0..<40 {
                try chunk.withUnsafeBufferPointer { (samples) throws(SystemError) in try writer.write(samples) }
                try writer.flush()
            }
        }
        XCTAssertEqual(failure?.errno, EFBIG)
        try writer.close()
        let file = try bytes()
        XCTAssertEqual((file.count - WAVWriter.headerBytes) % 6, 0, "whole frames: \(file.count)")
        XCTAssertEqual(u32(file, 76), file.count - WAVWriter.headerBytes)
        XCTAssertEqual(writer.frames * 6, file.count - WAVWriter.headerBytes)
    }

    /// Beyond the RIFF limit the header turns RF64: ds64 in the JUNK chunk's place with the 64-bit sizes, the
    /// 32-bit fields 0xFFFFFFFF. This reader and ffmpeg read every frame.
    func testBeyondTheLimitTheFileIsRF64AndStillReadsWhole() async throws {
        let writer = try WAVWriter(path: path, sampleRate: 48_000, channels: 2, encoding: .int16, riffLimit: 4_000)
        try ramp(900, channels: 2).withUnsafeBufferPointer { try writer.write($0) }
        try writer.flush()
        XCTAssertFalse(writer.isRF64, "72 + 3600 bytes: still RIFF")
        XCTAssertEqual(text(try bytes(), 0), "RIFF")
        try ramp(600, channels: 2).withUnsafeBufferPointer { try writer.write($0) }
        XCTAssertTrue(writer.isRF64)
        try writer.close()
        let file = try bytes()
        XCTAssertEqual(file.count, WAVWriter.headerBytes + 6_000)
        XCTAssertEqual(text(file, 0), "RF64")
        XCTAssertEqual(u32(file, 4), 0xFFFF_FFFF)
        XCTAssertEqual(text(file, 12), "ds64")
        XCTAssertEqual(u64(file, 20), file.count - 8, "RIFF size")
        XCTAssertEqual(u64(file, 28), 6_000, "data size")
        XCTAssertEqual(u64(file, 36), 1_500, "sample count (frames)")
        XCTAssertEqual(u32(file, 76), 0xFFFF_FFFF)
        let audio = try WAVAudio.read(path: path)
        XCTAssertEqual(audio.samples.count, 3_000)
        // ffmpeg, the reader most users have, takes the RF64 file whole.
        let ffmpeg = "/usr/bin/ffmpeg"
        try XCTSkipUnless(FileManager.default.isExecutableFile(atPath: ffmpeg), "ffmpeg is not installed (scripts/setup installs it)")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ffmpeg)
        process.arguments = ["-v", "error", "-i", path, "-f", "s16le", "-"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let decoded = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        XCTAssertEqual(decoded.count, 6_000, "ffmpeg decodes every frame of the RF64 file")
    }
}
