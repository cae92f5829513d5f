import TuttiCore

/// Converts between interleaved `Float` samples in [-1, 1] and RFC 3551/3190 L16/L24 payloads
/// (signed, big-endian, interleaved).
///
/// Floats are clamped and rounded to the nearest integer step; decoding an encoded payload and encoding
/// it again gives the same bytes (24-bit integers are exact in `Float`). Realtime-safe: yes.
/// Thread-safe: yes (stateless).
public enum PCMCodec {
    /// Encodes `samples` into `payload`, which must hold `samples.count * format.bytesPerSample` bytes.
    @inlinable
    public static func encode(
        _ samples: UnsafeBufferPointer<Float>, as format: SampleFormat, into payload: UnsafeMutableRawBufferPointer
    ) {
        precondition(payload.count >= samples.count * format.bytesPerSample)
        switch format {
        case .l16:
            for index in 0..<samples.count {
                let value = SampleQuantization.integer(samples[index], scale: 32_768, maximum: 32_767)
                let offset = index &* 2
                payload[offset] = UInt8(truncatingIfNeeded: value >> 8)
                payload[offset &+ 1] = UInt8(truncatingIfNeeded: value)
            }
        case .l24:
            for index in 0..<samples.count {
                let value = SampleQuantization.integer(samples[index], scale: 8_388_608, maximum: 8_388_607)
                let offset = index &* 3
                payload[offset] = UInt8(truncatingIfNeeded: value >> 16)
                payload[offset &+ 1] = UInt8(truncatingIfNeeded: value >> 8)
                payload[offset &+ 2] = UInt8(truncatingIfNeeded: value)
            }
        case .opus:
            preconditionFailure("an Opus stream's payload is not PCM: use OpusEncoder")
        }
    }

    /// Decodes `samples.count` samples from `payload`, which must hold that many samples.
    @inlinable
    public static func decode(
        _ payload: UnsafeRawBufferPointer, as format: SampleFormat, into samples: UnsafeMutableBufferPointer<Float>
    ) {
        precondition(payload.count >= samples.count * format.bytesPerSample)
        switch format {
        case .l16:
            for index in 0..<samples.count {
                let offset = index &* 2
                let value = Int16(bitPattern: UInt16(payload[offset]) << 8 | UInt16(payload[offset &+ 1]))
                samples[index] = Float(value) * (1 / 32_768)
            }
        case .l24:
            for index in 0..<samples.count {
                let offset = index &* 3
                let unsigned =
                    UInt32(payload[offset]) << 24 | UInt32(payload[offset &+ 1]) << 16
                    | UInt32(payload[offset &+ 2]) << 8
                let value = Int32(bitPattern: unsigned) >> 8  // sign-extend 24 → 32 bits
                samples[index] = Float(value) * (1 / 8_388_608)
            }
        case .opus:
            preconditionFailure("an Opus stream's payload is not PCM: use OpusDecoder")
        }
    }
}
