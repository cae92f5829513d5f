import TuttiCore

/// Interleaved little-endian PCM as files and pipes carry it (WAV data, `aplay`/`sox` raw streams):
/// signed 16- or 24-bit integers or 32-bit IEEE floats. One place for the byte packing that WAV files,
/// stdin sources and stdout sinks share. Not for the network (RTP is big-endian: `PCMCodec`).
package enum LittleEndianPCM: Hashable, Sendable {
    case int16
    case int24
    case float32

    package var bytesPerSample: Int {
        switch self {
        case .int16: 2
        case .int24: 3
        case .float32: 4
        }
    }

    /// Writes `samples` into `bytes` (which must hold `samples.count * bytesPerSample`), clamping integers.
    package func encode(_ samples: UnsafeBufferPointer<Float>, into bytes: UnsafeMutableRawBufferPointer) {
        precondition(bytes.count >= samples.count * bytesPerSample)
        for (index, sample) in samples.enumerated() {
            let offset = index * bytesPerSample
            switch self {
            case .int16:
                let value = UInt16(bitPattern: Int16(SampleQuantization.integer(sample, scale: 32_768, maximum: 32_767)))
                bytes[offset] = UInt8(value & 0xFF)
                bytes[offset + 1] = UInt8(value >> 8)
            case .int24:
                let value = UInt32(bitPattern: SampleQuantization.integer(sample, scale: 8_388_608, maximum: 8_388_607))
                bytes[offset] = UInt8(value & 0xFF)
                bytes[offset + 1] = UInt8(value >> 8 & 0xFF)
                bytes[offset + 2] = UInt8(value >> 16 & 0xFF)
            case .float32:
                let value = sample.bitPattern
                for byte in 0..<4 { bytes[offset + byte] = UInt8(value >> (8 * byte) & 0xFF) }
            }
        }
    }

    /// Reads `samples.count` samples from `bytes` (which must hold that many).
    package func decode(_ bytes: UnsafeRawBufferPointer, into samples: UnsafeMutableBufferPointer<Float>) {
        precondition(bytes.count >= samples.count * bytesPerSample)
        for index in 0..<samples.count {
            let offset = index * bytesPerSample
            switch self {
            case .int16:
                samples[index] = Float(Int16(bitPattern: UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8)) / 32_768
            case .int24:
                let raw = UInt32(bytes[offset]) << 8 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 24
                samples[index] = Float(Int32(bitPattern: raw) >> 8) / 8_388_608
            case .float32:
                samples[index] = Float(bitPattern: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self).littleEndian)
            }
        }
    }
}
