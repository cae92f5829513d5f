#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import TuttiCore

/// Sample encodings a WAV file may use.
package typealias WAVEncoding = LittleEndianPCM

extension LittleEndianPCM {
    var bitsPerSample: Int { bytesPerSample * 8 }
}

/// Why a WAV file could not be read.
package struct WAVError: Error, Hashable, Sendable, CustomStringConvertible {
    package var path: String
    package var reason: String
    package var description: String { "\(path): \(reason)" }
}

/// A whole WAV file in memory: interleaved samples in [-1, 1].
package struct WAVAudio: Sendable {
    package var sampleRate: Int
    package var channels: Int
    package var encoding: WAVEncoding
    package var samples: [Float]

    package init(sampleRate: Int, channels: Int, encoding: WAVEncoding, samples: [Float]) {
        self.sampleRate = sampleRate
        self.channels = channels
        self.encoding = encoding
        self.samples = samples
    }

    package var frames: Int { channels > 0 ? samples.count / channels : 0 }

    /// One channel of the file.
    package func channel(_ index: Int) -> [Float] {
        stride(from: index, to: samples.count, by: channels).map { samples[$0] }
    }

    /// Reads a PCM (16/24/32-bit integer) or IEEE float WAV file, including WAVE_FORMAT_EXTENSIBLE.
    /// A data chunk whose size field is unset (a recording cut short) is read to the end of the file.
    package static func read(path: String) throws(WAVError) -> WAVAudio {
        guard let file = system_fopen(path, "rb") else {
            throw WAVError(path: path, reason: String(cString: strerror(errno)))
        }
        defer { system_fclose(file) }
        var bytes = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = system_fread(&chunk, 1, chunk.count, file)
            if count <= 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
        }
        return try parse(bytes, path: path)
    }

    static func parse(_ bytes: [UInt8], path: String) throws(WAVError) -> WAVAudio {
        func u16(_ offset: Int) -> Int { Int(bytes[offset]) | Int(bytes[offset + 1]) << 8 }
        func u32(_ offset: Int) -> Int { u16(offset) | u16(offset + 2) << 16 }
        guard bytes.count >= 12, bytes[0..<4].elementsEqual("RIFF".utf8), bytes[8..<12].elementsEqual("WAVE".utf8) else {
            throw WAVError(path: path, reason: "not a RIFF/WAVE file")
        }
        var offset = 12
        var format: (tag: Int, channels: Int, rate: Int, bits: Int)?
        while offset + 8 <= bytes.count {
            let id = String(decoding: bytes[offset..<(offset + 4)], as: UTF8.self)
            var size = u32(offset + 4)
            let body = offset + 8
            if id == "fmt " {
                guard size >= 16, body + 16 <= bytes.count else { throw WAVError(path: path, reason: "short fmt chunk") }
                var tag = u16(body)
                if tag == 0xFFFE, size >= 26 { tag = u16(body + 24) }  // WAVE_FORMAT_EXTENSIBLE sub-format
                format = (tag, u16(body + 2), u32(body + 4), u16(body + 14))
            } else if id == "data" {
                guard let format else { throw WAVError(path: path, reason: "data chunk before fmt chunk") }
                if size == 0 || size == 0xFFFF_FFFF || body + size > bytes.count { size = bytes.count - body }
                return try decode(bytes[body..<(body + size)], format: format, path: path)
            }
            offset = body + size + (size & 1)
        }
        throw WAVError(path: path, reason: "no data chunk")
    }

    private static func decode(
        _ data: ArraySlice<UInt8>, format: (tag: Int, channels: Int, rate: Int, bits: Int), path: String
    ) throws(WAVError) -> WAVAudio {
        guard format.channels > 0, format.rate > 0 else { throw WAVError(path: path, reason: "bad channel count or rate") }
        let encoding: WAVEncoding
        switch (format.tag, format.bits) {
        case (1, 16): encoding = .int16
        case (1, 24): encoding = .int24
        case (3, 32): encoding = .float32
        default: throw WAVError(path: path, reason: "unsupported encoding (format \(format.tag), \(format.bits) bits)")
        }
        let count = data.count / encoding.bytesPerSample
        var samples = [Float](repeating: 0, count: count - count % format.channels)
        data.withUnsafeBytes { bytes in
            samples.withUnsafeMutableBufferPointer { encoding.decode(bytes, into: $0) }
        }
        return WAVAudio(sampleRate: format.rate, channels: format.channels, encoding: encoding, samples: samples)
    }
}

/// Writes a WAV file incrementally. The header's sizes are rewritten by `flush()` (call it every second
/// or so) and on `close()`, so a recording cut short by a crash is still a valid file up to the last flush.
///
/// Every write reports the system's error (a full disk: ENOSPC; a failing device: EIO) as a `SystemError`
/// with its errno; what failed to be written is not in the file.
///
/// Thread-safe: no; a file-writer thread owns it (never the device thread: it does blocking I/O).
package final class WAVWriter {
    package let path: String
    package let sampleRate: Int
    package let channels: Int
    package let encoding: WAVEncoding
    private var file: UnsafeMutablePointer<FILE>?
    private var dataBytes = 0
    private var scratch = [UInt8]()

    /// Creates the file and writes a header for zero frames.
    ///
    /// - Parameter replacing: whether an existing file at `path` is truncated (`true`) or refused with
    ///   errno `EEXIST` (`false`: the file is created exclusively, `O_EXCL`, so no recording is overwritten).
    /// - Throws: the `SystemError` of `fopen` or of writing the header.
    package init(path: String, sampleRate: Int, channels: Int, encoding: WAVEncoding, replacing: Bool = true) throws(SystemError) {
        guard let file = system_fopen(path, replacing ? "wb" : "wbx") else { throw .current("create \(path)") }
        self.path = path
        self.sampleRate = sampleRate
        self.channels = channels
        self.encoding = encoding
        self.file = file
        try writeHeader()
    }

    deinit { try? close() }

    /// Frames written so far (whole frames of `channels` samples).
    package var frames: Int { dataBytes / (channels * encoding.bytesPerSample) }

    /// Appends interleaved samples (clamped to [-1, 1]).
    ///
    /// - Throws: the `SystemError` of `fwrite` when the bytes could not all be written (they are not counted).
    package func write(_ samples: UnsafeBufferPointer<Float>) throws(SystemError) {
        guard let file else { return }
        let width = encoding.bytesPerSample
        if scratch.count < samples.count * width { scratch = [UInt8](repeating: 0, count: samples.count * width) }
        scratch.withUnsafeMutableBytes { encoding.encode(samples, into: $0) }
        let written = system_fwrite(scratch, 1, samples.count * width, file)
        dataBytes += written - written % width
        if written < samples.count * width { throw .current("write \(path)") }
    }

    /// Rewrites the header with the current sizes and flushes to the OS.
    ///
    /// - Throws: the `SystemError` of writing the header or of `fflush` (e.g. ENOSPC for data still buffered).
    package func flush() throws(SystemError) {
        guard let file else { return }
        if system_fflush(file) != 0 { throw .current("write \(path)") }
        let position = system_ftell(file)
        try writeHeader()
        system_fseek(file, position, SEEK_SET)
        if system_fflush(file) != 0 { throw .current("write \(path)") }
    }

    /// Finalises the header and closes the file (also when finalising fails). Idempotent.
    ///
    /// - Throws: the `SystemError` of the last flush or of `fclose`.
    package func close() throws(SystemError) {
        guard let file else { return }
        var failure: SystemError?
        do { try flush() } catch { failure = error }
        if system_fclose(file) != 0, failure == nil { failure = .current("close \(path)") }
        self.file = nil
        if let failure { throw failure }
    }

    /// Closes the file and removes it: a file created for a take that could not start after all (another of
    /// its files already existed). Control plane or the writer thread that owns it.
    package func discard() {
        if let file { _ = system_fclose(file) }
        file = nil
        _ = system_unlink(path)
    }

    private func writeHeader() throws(SystemError) {
        guard let file else { return }
        system_fseek(file, 0, SEEK_SET)
        var header = [UInt8]()
        func append32(_ value: Int) { for byte in 0..<4 { header.append(UInt8(value >> (8 * byte) & 0xFF)) } }
        func append16(_ value: Int) { for byte in 0..<2 { header.append(UInt8(value >> (8 * byte) & 0xFF)) } }
        let width = encoding.bitsPerSample / 8
        header += Array("RIFF".utf8)
        append32(36 + dataBytes)
        header += Array("WAVEfmt ".utf8)
        append32(16)
        append16(encoding == .float32 ? 3 : 1)
        append16(channels)
        append32(sampleRate)
        append32(sampleRate * channels * width)
        append16(channels * width)
        append16(encoding.bitsPerSample)
        header += Array("data".utf8)
        append32(dataBytes)
        if system_fwrite(header, 1, header.count, file) < header.count { throw .current("write \(path)") }
    }
}
