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
        guard bytes.count >= 12, bytes[0..<4].elementsEqual("RIFF".utf8) || bytes[0..<4].elementsEqual("RF64".utf8),
            bytes[8..<12].elementsEqual("WAVE".utf8)
        else {
            throw WAVError(path: path, reason: "not a RIFF/WAVE or RF64 file")
        }
        var offset = 12
        var format: (tag: Int, channels: Int, rate: Int, bits: Int)?
        /// RF64's data size, from its ds64 chunk (the data chunk's own field reads 0xFFFFFFFF).
        var dataSize64: Int?
        while offset + 8 <= bytes.count {
            let id = String(decoding: bytes[offset..<(offset + 4)], as: UTF8.self)
            var size = u32(offset + 4)
            let body = offset + 8
            if id == "fmt " {
                guard size >= 16, body + 16 <= bytes.count else { throw WAVError(path: path, reason: "short fmt chunk") }
                var tag = u16(body)
                if tag == 0xFFFE, size >= 26 { tag = u16(body + 24) }  // WAVE_FORMAT_EXTENSIBLE sub-format
                format = (tag, u16(body + 2), u32(body + 4), u16(body + 14))
            } else if id == "ds64" {
                guard size >= 28, body + 28 <= bytes.count else { throw WAVError(path: path, reason: "short ds64 chunk") }
                dataSize64 = u32(body + 8) | u32(body + 12) << 32
            } else if id == "data" {
                guard let format else { throw WAVError(path: path, reason: "data chunk before fmt chunk") }
                if size == 0xFFFF_FFFF, let dataSize64 { size = dataSize64 }
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

/// Writes a WAV file incrementally, with a header that never claims audio the file does not hold.
///
/// - Every write goes straight to the file (`write(2)`, no stdio buffer), so what the kernel took is known.
///   A write that fails or falls short (a full disk: ENOSPC; a file size limit: EFBIG; a failing device: EIO)
///   throws a `SystemError` with its errno, and the file is cut back to the last whole frame written, so the
///   bytes after the header are exactly `frames` frames.
/// - The header's sizes are rewritten in place by `flush()` (every second or so) and by `close()`, so a
///   recording cut short by a crash is a valid file up to the last flush (and a reader that trusts the file's
///   length, as most do for a take cut short, gets every frame written).
/// - Beyond 4 GiB the file becomes RF64 (EBU Tech 3306): the 36-byte `JUNK` chunk reserved after `WAVE`
///   turns into the `ds64` chunk that holds the 64-bit sizes, and the 32-bit fields read 0xFFFFFFFF. Files
///   under 4 GiB stay plain RIFF/WAVE that every reader knows (the JUNK chunk is skipped).
///
/// Thread-safe: no; a file-writer thread owns it (never the device thread: it does blocking I/O).
package final class WAVWriter {
    package let path: String
    package let sampleRate: Int
    package let channels: Int
    package let encoding: WAVEncoding
    private var descriptor: Int32 = -1
    /// Audio bytes the file holds after its header, always whole frames.
    private var dataBytes = 0
    private var scratch = [UInt8]()
    /// The RIFF size above which the header is RF64 (4 GiB − 1; tests lower it to see the switch).
    private let riffLimit: Int

    /// The header's length: RIFF and WAVE (12), the JUNK/ds64 chunk (8 + 28), fmt (8 + 16), data's (8).
    package static let headerBytes = 80

    /// Creates the file (0644, before the umask) and writes a header for zero frames.
    ///
    /// - Parameters:
    ///   - replacing: whether an existing file at `path` is truncated (`true`) or refused with errno `EEXIST`
    ///     (`false`: the file is created exclusively, `O_EXCL`, so no recording is overwritten).
    ///   - riffLimit: the RIFF size beyond which the file is RF64 (tests only).
    /// - Throws: the `SystemError` of `open` or of writing the header.
    package init(
        path: String, sampleRate: Int, channels: Int, encoding: WAVEncoding, replacing: Bool = true, riffLimit: Int = 0xFFFF_FFFF
    ) throws(SystemError) {
        let flags = O_WRONLY | O_CREAT | O_CLOEXEC | (replacing ? O_TRUNC : O_EXCL)
        let descriptor = system_open(path, flags, 0o644)
        guard descriptor >= 0 else { throw .current("create \(path)") }
        self.path = path
        self.sampleRate = sampleRate
        self.channels = channels
        self.encoding = encoding
        self.riffLimit = riffLimit
        self.descriptor = descriptor
        do throws(SystemError) {
            try writeHeader()
            // The header went in with pwrite, which leaves the write position at 0: audio starts after it.
            guard system_lseek(descriptor, off_t(Self.headerBytes), SEEK_SET) == off_t(Self.headerBytes) else {
                throw .current("seek in \(path)")
            }
        } catch {
            _ = system_close(descriptor)
            self.descriptor = -1
            throw error
        }
    }

    deinit { try? close() }

    /// Frames the file holds (whole frames of `channels` samples).
    package var frames: Int { dataBytes / frameBytes }

    /// Whether the header is RF64 now (the file grew beyond 4 GiB).
    package var isRF64: Bool { Self.headerBytes - 8 + dataBytes > riffLimit }

    private var frameBytes: Int { channels * encoding.bytesPerSample }

    /// Appends interleaved samples (clamped to [-1, 1]), whole frames.
    ///
    /// - Throws: the `SystemError` of `write` when the bytes could not all be written; the file then ends at
    ///   the last whole frame written (what did not fit is not in it, nor counted).
    package func write(_ samples: UnsafeBufferPointer<Float>) throws(SystemError) {
        guard descriptor >= 0 else { return }
        let total = samples.count * encoding.bytesPerSample
        if scratch.count < total { scratch = [UInt8](repeating: 0, count: total) }
        scratch.withUnsafeMutableBytes { encoding.encode(samples, into: $0) }
        var done = 0
        var failure: SystemError?
        while done < total {
            let count = scratch.withUnsafeBytes { system_write(descriptor, $0.baseAddress! + done, total - done) }
            if count > 0 {
                done += count
            } else if count < 0, system_errno == EINTR {
                continue
            } else {
                failure = count < 0 ? .current("write \(path)") : SystemError("write \(path)", errno: ENOSPC)
                break
            }
        }
        let whole = done - done % frameBytes
        if let failure {
            // A frame cut in two is cut back, so the file ends on a frame and its header can say so.
            if whole != done { _ = system_ftruncate(descriptor, off_t(Self.headerBytes + dataBytes + whole)) }
            dataBytes += whole
            _ = system_lseek(descriptor, off_t(Self.headerBytes + dataBytes), SEEK_SET)
            try? writeHeader()
            throw failure
        }
        dataBytes += whole
    }

    /// Rewrites the header with the current sizes.
    ///
    /// - Throws: the `SystemError` of writing the header.
    package func flush() throws(SystemError) {
        try writeHeader()
    }

    /// Finalises the header and closes the file (also when finalising fails). Idempotent.
    ///
    /// - Throws: the `SystemError` of the header's last rewrite or of `close`.
    package func close() throws(SystemError) {
        guard descriptor >= 0 else { return }
        var failure: SystemError?
        do { try writeHeader() } catch { failure = error }
        if system_close(descriptor) != 0, failure == nil { failure = .current("close \(path)") }
        descriptor = -1
        if let failure { throw failure }
    }

    /// Closes the file and removes it: a file created for a take that could not start after all (another of
    /// its files already existed). Control plane or the writer thread that owns it.
    package func discard() {
        if descriptor >= 0 { _ = system_close(descriptor) }
        descriptor = -1
        _ = system_unlink(path)
    }

    /// The header for the current size, written at offset 0 (`pwrite`: the write position stays at the end).
    private func writeHeader() throws(SystemError) {
        guard descriptor >= 0 else { return }
        let header = Self.header(
            dataBytes: dataBytes, sampleRate: sampleRate, channels: channels, encoding: encoding, riffLimit: riffLimit)
        let written = header.withUnsafeBytes { system_pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        if written != header.count { throw written < 0 ? .current("write \(path)") : SystemError("write \(path)", errno: ENOSPC) }
    }

    /// The 80-byte header of a file holding `dataBytes` of audio: RIFF with a JUNK chunk, or RF64 with ds64.
    package static func header(dataBytes: Int, sampleRate: Int, channels: Int, encoding: WAVEncoding, riffLimit: Int = 0xFFFF_FFFF)
        -> [UInt8]
    {
        var header = [UInt8]()
        header.reserveCapacity(headerBytes)
        func append32(_ value: Int) { for byte in 0..<4 { header.append(UInt8(value >> (8 * byte) & 0xFF)) } }
        func append64(_ value: Int) { for byte in 0..<8 { header.append(UInt8(value >> (8 * byte) & 0xFF)) } }
        func append16(_ value: Int) { for byte in 0..<2 { header.append(UInt8(value >> (8 * byte) & 0xFF)) } }
        let width = encoding.bitsPerSample / 8
        let riffSize = headerBytes - 8 + dataBytes
        let rf64 = riffSize > riffLimit
        header += Array((rf64 ? "RF64" : "RIFF").utf8)
        append32(rf64 ? 0xFFFF_FFFF : riffSize)
        header += Array("WAVE".utf8)
        header += Array((rf64 ? "ds64" : "JUNK").utf8)
        append32(28)
        if rf64 {
            append64(riffSize)
            append64(dataBytes)
            append64(dataBytes / max(1, channels * width))
            append32(0)  // no table of other chunks' sizes
        } else {
            header += [UInt8](repeating: 0, count: 28)
        }
        header += Array("fmt ".utf8)
        append32(16)
        append16(encoding == .float32 ? 3 : 1)
        append16(channels)
        append32(sampleRate)
        append32(sampleRate * channels * width)
        append16(channels * width)
        append16(encoding.bitsPerSample)
        header += Array("data".utf8)
        append32(rf64 ? 0xFFFF_FFFF : dataBytes)
        return header
    }
}
