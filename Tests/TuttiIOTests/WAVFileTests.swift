#if canImport(Glibc)
import Glibc
#endif
import TuttiIO
import XCTest

/// WAV files as receivers write them and senders and `tutti analyze` read them.
final class WAVFileTests: XCTestCase {
    private func temporaryPath(_ name: String) -> String {
        "/tmp/tutti-wav-tests-\(getpid())-\(name)"
    }

    private func bytes(of path: String) -> [UInt8] {
        guard let file = fopen(path, "rb") else { return [] }
        defer { fclose(file) }
        var result = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = fread(&chunk, 1, chunk.count, file)
            if count <= 0 { break }
            result += chunk[0..<count]
        }
        return result
    }

    private func write(_ bytes: [UInt8], to path: String) {
        let file = fopen(path, "wb")!
        fwrite(bytes, 1, bytes.count, file)
        fclose(file)
    }

    func testEveryEncodingRoundTripsExactlyOnItsGrid() throws {
        let encodings: [(WAVEncoding, Float)] = [(.int16, 32_768), (.int24, 8_388_608), (.float32, 16_777_216)]
        for (encoding, scale) in encodings {
            let path = temporaryPath("\(encoding)")
            defer { unlink(path) }
            // Values on the encoding's grid, including both ends of the range.
            let samples: [Float] = [-1, -0.5, 0, 1 / scale, 0.25, (scale - 1) / scale]
            let writer = try WAVWriter(path: path, sampleRate: 44_100, channels: 2, encoding: encoding)
            try samples.withUnsafeBufferPointer { try writer.write($0) }
            try writer.close()
            let audio = try WAVAudio.read(path: path)
            XCTAssertEqual(audio.sampleRate, 44_100)
            XCTAssertEqual(audio.channels, 2)
            XCTAssertEqual(audio.encoding, encoding)
            XCTAssertEqual(audio.samples, samples, "\(encoding)")
            XCTAssertEqual(audio.channel(1), [samples[1], samples[3], samples[5]])
        }
    }

    func testOutOfRangeSamplesAreClampedNotWrapped() throws {
        let path = temporaryPath("clamp")
        defer { unlink(path) }
        let writer = try WAVWriter(path: path, sampleRate: 48_000, channels: 1, encoding: .int16)
        try [Float(1.5), -3, .nan].withUnsafeBufferPointer { try writer.write($0) }
        try writer.close()
        XCTAssertEqual(try WAVAudio.read(path: path).samples, [32_767 / 32_768, -1, 0])
    }

    func testAFileCutShortIsReadUpToItsLastFlush() throws {
        let path = temporaryPath("flush")
        defer { unlink(path) }
        let writer = try WAVWriter(path: path, sampleRate: 48_000, channels: 1, encoding: .int24)
        try [Float(0.5), 0.25].withUnsafeBufferPointer { try writer.write($0) }
        try writer.flush()
        // A crash now leaves valid sizes for what was flushed.
        XCTAssertEqual(try WAVAudio.read(path: path).samples, [0.5, 0.25])
        try writer.close()
        // A data chunk whose size was never written (0) is read to the end of the file.
        var raw = bytes(of: path)
        raw[40...43] = [0, 0, 0, 0]
        write(raw, to: path)
        XCTAssertEqual(try WAVAudio.read(path: path).samples, [0.5, 0.25])
    }

    func testMalformedFilesAreTypedErrors() throws {
        let path = temporaryPath("bad")
        defer { unlink(path) }
        let cases: [([UInt8], String)] = [
            ([], "not a RIFF/WAVE or RF64 file"),
            (Array("RIFF\0\0\0\0WAVX".utf8), "not a RIFF/WAVE or RF64 file"),
            (Array("RIFF\0\0\0\0WAVE".utf8), "no data chunk"),
            (Array("RIFF\0\0\0\0WAVEdata\u{4}\0\0\0abcd".utf8), "data chunk before fmt chunk"),
            (Array("RIFF\0\0\0\0WAVEfmt \u{4}\0\0\0abcd".utf8), "short fmt chunk"),
        ]
        for (content, reason) in cases {
            write(content, to: path)
            XCTAssertThrowsError(try WAVAudio.read(path: path)) { error in
                XCTAssertEqual((error as? WAVError)?.reason, reason)
            }
        }
        // 8-bit PCM is not supported: said so, with the format.
        let writer = try WAVWriter(path: path, sampleRate: 8_000, channels: 1, encoding: .int16)
        try writer.close()
        var raw = bytes(of: path)
        raw[70] = 8  // bits per sample, in the fmt chunk after RIFF/WAVE (12), JUNK (36) and fmt's own 8 and 14
        write(raw, to: path)
        XCTAssertThrowsError(try WAVAudio.read(path: path)) { error in
            XCTAssertEqual((error as? WAVError)?.reason, "unsupported encoding (format 1, 8 bits)")
        }
        XCTAssertThrowsError(try WAVAudio.read(path: "/nonexistent/x.wav")) { error in
            XCTAssertEqual((error as? WAVError)?.reason, "No such file or directory")
        }
    }
}
