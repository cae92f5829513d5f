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
        guard let bytes = payload.baseAddress, let input = samples.baseAddress else { return }
        let count = samples.count
        switch format {
        case .l16:
            for index in 0..<count {
                let value = SampleQuantization.integer(input[index], scale: 32_768, maximum: 32_767)
                bytes.storeBytes(of: UInt16(truncatingIfNeeded: value).bigEndian, toByteOffset: index &* 2, as: UInt16.self)
            }
        case .l24:
            // One 4-byte big-endian store a sample: its fourth byte is the next sample's first, which the next
            // store writes; the last sample's three bytes go one by one (the payload may end right after them).
            var index = 0
            while index &+ 1 < count {
                let value = SampleQuantization.integer(input[index], scale: 8_388_608, maximum: 8_388_607)
                bytes.storeBytes(of: (UInt32(bitPattern: value) << 8).bigEndian, toByteOffset: index &* 3, as: UInt32.self)
                index &+= 1
            }
            if index < count {
                let value = SampleQuantization.integer(input[index], scale: 8_388_608, maximum: 8_388_607)
                let offset = index &* 3
                bytes.storeBytes(of: UInt8(truncatingIfNeeded: value >> 16), toByteOffset: offset, as: UInt8.self)
                bytes.storeBytes(of: UInt8(truncatingIfNeeded: value >> 8), toByteOffset: offset &+ 1, as: UInt8.self)
                bytes.storeBytes(of: UInt8(truncatingIfNeeded: value), toByteOffset: offset &+ 2, as: UInt8.self)
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
        guard let bytes = payload.baseAddress, let output = samples.baseAddress else { return }
        let count = samples.count
        switch format {
        case .l16:
            for index in 0..<count {
                let value = Int16(bitPattern: UInt16(bigEndian: bytes.loadUnaligned(fromByteOffset: index &* 2, as: UInt16.self)))
                output[index] = Float(value) * (1 / 32_768)
            }
        case .l24:
            // One 4-byte big-endian load a sample (its fourth byte, the next sample's first, masked off); the last
            // sample's three bytes one by one (the payload may end right after them).
            var index = 0
            while index &+ 1 < count {
                let word = UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: index &* 3, as: UInt32.self))
                output[index] = Float(Int32(bitPattern: word & 0xFFFF_FF00) >> 8) * (1 / 8_388_608)
                index &+= 1
            }
            if index < count {
                let offset = index &* 3
                let unsigned =
                    UInt32(bytes.load(fromByteOffset: offset, as: UInt8.self)) << 24
                    | UInt32(bytes.load(fromByteOffset: offset &+ 1, as: UInt8.self)) << 16
                    | UInt32(bytes.load(fromByteOffset: offset &+ 2, as: UInt8.self)) << 8
                output[index] = Float(Int32(bitPattern: unsigned) >> 8) * (1 / 8_388_608)  // sign-extend 24 → 32 bits
            }
        case .opus:
            preconditionFailure("an Opus stream's payload is not PCM: use OpusDecoder")
        }
    }
}
