import CPCMKernels
import TuttiCore

/// Converts between interleaved `Float` samples in [-1, 1] and RFC 3551/3190 L16/L24 payloads
/// (signed, big-endian, interleaved).
///
/// Floats are clamped and rounded to the nearest integer step; decoding an encoded payload and encoding
/// it again gives the same bytes (24-bit integers are exact in `Float`). Realtime-safe: yes.
/// Thread-safe: yes (stateless).
public enum PCMCodec {
    /// Encodes `samples` into `payload`, which must hold `samples.count * format.bytesPerSample` bytes.
    /// The loops are `CPCMKernels`' (four samples at a time with SSE2 on x86-64).
    public static func encode(
        _ samples: UnsafeBufferPointer<Float>, as format: SampleFormat, into payload: UnsafeMutableRawBufferPointer
    ) {
        precondition(payload.count >= samples.count * format.bytesPerSample)
        guard let bytes = payload.baseAddress, let input = samples.baseAddress else { return }
        switch format {
        case .l16: tutti_pcm_encode_l16(input, samples.count, bytes.assumingMemoryBound(to: UInt8.self))
        case .l24: tutti_pcm_encode_l24(input, samples.count, bytes.assumingMemoryBound(to: UInt8.self))
        case .opus: preconditionFailure("an Opus stream's payload is not PCM: use OpusEncoder")
        }
    }

    /// Decodes `samples.count` samples from `payload`, which must hold that many samples.
    public static func decode(
        _ payload: UnsafeRawBufferPointer, as format: SampleFormat, into samples: UnsafeMutableBufferPointer<Float>
    ) {
        precondition(payload.count >= samples.count * format.bytesPerSample)
        guard let bytes = payload.baseAddress, let output = samples.baseAddress else { return }
        switch format {
        case .l16: tutti_pcm_decode_l16(bytes.assumingMemoryBound(to: UInt8.self), samples.count, output)
        case .l24: tutti_pcm_decode_l24(bytes.assumingMemoryBound(to: UInt8.self), samples.count, output)
        case .opus: preconditionFailure("an Opus stream's payload is not PCM: use OpusDecoder")
        }
    }
}
