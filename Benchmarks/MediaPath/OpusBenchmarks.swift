// Opus, one packet per iteration: encode one frame of a stereo 997 Hz tone, then decode that packet, at each
// frame duration Tutti offers (2.5, 5, 10, 20 ms), with Tutti's default settings otherwise (restricted low
// delay, 128 kb/s, complexity 9). Two benchmarks per duration, on the same input:
//
//   Opus-encode+decode-<N>ms-stereo               through TuttiCodec's OpusEncoder/OpusDecoder
//   Opus-raw-libopus-encode+decode-<N>ms-stereo   opus_encode_float/opus_decode_float called directly
//
// so the ratio of the two is the wrappers' overhead. Encoders, decoders and buffers are created in `setup`;
// each iteration takes the next frame of one second of continuous tone (so the codec sees a steady signal,
// not one frame repeated with a seam). Iterations are 2.5–20 ms of audio each, so a figure below the frame
// duration means faster than real time on one core; the time is dominated by libopus (CELT at 48 kHz).

import Benchmark
import COpus
import TuttiCodec
import TuttiCore
import TuttiStream

/// One second of stereo tone, cut into frames of one duration, and the packet and output buffers.
final class OpusInput {
    static let channels = 2
    let duration: OpusSettings.FrameDuration
    let tone: UnsafeMutableBufferPointer<Float>
    let packet: UnsafeMutableRawBufferPointer
    let output: UnsafeMutableBufferPointer<Float>
    var frameIndex = 0

    var samplesPerFrame: Int { duration.framesPerChannel * Self.channels }
    var framesPerSecond: Int { OpusSettings.sampleRate / duration.framesPerChannel }

    init(duration: OpusSettings.FrameDuration) {
        self.duration = duration
        tone = .allocate(capacity: OpusSettings.sampleRate * Self.channels)
        var generator = ToneGenerator(frequency: 997, amplitude: 0.5, sampleRate: OpusSettings.sampleRate)
        generator.render(into: tone, frames: OpusSettings.sampleRate, channels: Self.channels)
        packet = .allocate(byteCount: OpusSettings.maximumPacketBytes, alignment: 16)
        packet.initializeMemory(as: UInt8.self, repeating: 0)
        output = .allocate(capacity: duration.framesPerChannel * Self.channels)
        output.initialize(repeating: 0)
    }

    deinit {
        tone.deallocate()
        packet.deallocate()
        output.deallocate()
    }

    /// The next frame of the tone (wrapping after one second). The tone is 997 Hz, so the wrap is a seam
    /// once a second; both benchmarks of a duration see the same sequence.
    @inline(__always)
    func nextFrame() -> UnsafeBufferPointer<Float> {
        let start = frameIndex * samplesPerFrame
        frameIndex = frameIndex + 1 == framesPerSecond ? 0 : frameIndex + 1
        return UnsafeBufferPointer(rebasing: tone[start..<(start + samplesPerFrame)])
    }
}

/// Tutti's wrappers.
final class OpusWrapperState {
    let input: OpusInput
    var encoder: OpusEncoder
    var decoder: OpusDecoder

    init(duration: OpusSettings.FrameDuration) {
        input = OpusInput(duration: duration)
        encoder = try! OpusEncoder(settings: OpusSettings(frameDuration: duration), channels: OpusInput.channels)
        decoder = try! OpusDecoder(channels: OpusInput.channels)
    }
}

/// libopus called directly, configured like `OpusEncoder` does (through the COpus ctl shims; setup only).
final class OpusRawState {
    let input: OpusInput
    let encoder: OpaquePointer
    let decoder: OpaquePointer

    init(duration: OpusSettings.FrameDuration) {
        input = OpusInput(duration: duration)
        let settings = OpusSettings(frameDuration: duration)
        var status = OPUS_OK
        encoder = opus_encoder_create(
            Int32(OpusSettings.sampleRate), Int32(OpusInput.channels), OPUS_APPLICATION_RESTRICTED_LOWDELAY, &status)!
        precondition(status == OPUS_OK)
        for (request, value) in [
            (OPUS_SET_BITRATE_REQUEST, Int32(settings.bitrate)),
            (OPUS_SET_COMPLEXITY_REQUEST, Int32(settings.complexity)),
            (OPUS_SET_INBAND_FEC_REQUEST, 0), (OPUS_SET_PACKET_LOSS_PERC_REQUEST, 0),
        ] {
            precondition(tutti_opus_encoder_set_int(encoder, request, value) == OPUS_OK)
        }
        decoder = opus_decoder_create(Int32(OpusSettings.sampleRate), Int32(OpusInput.channels), &status)!
        precondition(status == OPUS_OK)
    }

    deinit {
        opus_encoder_destroy(encoder)
        opus_decoder_destroy(decoder)
    }
}

/// Opus encode and decode per packet, next to raw libopus calls.
func registerCodecBenchmarks(_ configuration: Benchmark.Configuration) {
    for duration in OpusSettings.FrameDuration.allCases {
        let frames = duration.framesPerChannel

        let wrapped = Fixture<OpusWrapperState>()
        Benchmark("Opus-encode+decode-\(duration)-stereo", configuration: configuration) { _ in
            let state = wrapped.state!
            let input = state.input
            let length = try! state.encoder.encode(input.nextFrame(), into: input.packet)
            let decoded = try! state.decoder.decode(
                UnsafeRawBufferPointer(rebasing: input.packet[0..<length]), into: input.output)
            if decoded != frames { fatalError("Opus-encode+decode-\(duration)-stereo: decoded \(decoded) frames") }
            blackHole(input.output)
        } setup: {
            let state = OpusWrapperState(duration: duration)
            verifySameWork(state, duration: duration)
            wrapped.state = state
        } teardown: {
            wrapped.state = nil
        }

        let raw = Fixture<OpusRawState>()
        Benchmark("Opus-raw-libopus-encode+decode-\(duration)-stereo", configuration: configuration) { _ in
            let state = raw.state!
            let input = state.input
            let length = opus_encode_float(
                state.encoder, input.nextFrame().baseAddress!, Int32(frames),
                input.packet.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(input.packet.count))
            let decoded = opus_decode_float(
                state.decoder, input.packet.baseAddress!.assumingMemoryBound(to: UInt8.self), length,
                input.output.baseAddress!, Int32(frames), 0)
            if length <= 0 || decoded != frames {
                fatalError("Opus-raw-libopus-encode+decode-\(duration)-stereo: \(length) bytes, \(decoded) frames")
            }
            blackHole(input.output)
        } setup: {
            raw.state = OpusRawState(duration: duration)
        } teardown: {
            raw.state = nil
        }
    }
}

/// Not measured: the wrapper and the raw calls produce the same packets and samples from the same input, so
/// the two benchmarks of a duration do the same work.
private func verifySameWork(_ wrapped: OpusWrapperState, duration: OpusSettings.FrameDuration) {
    let raw = OpusRawState(duration: duration)
    let frames = duration.framesPerChannel
    for _ in 0..<8 {
        let frame = raw.input.nextFrame()
        let length = try! wrapped.encoder.encode(frame, into: wrapped.input.packet)
        let rawLength = opus_encode_float(
            raw.encoder, frame.baseAddress!, Int32(frames),
            raw.input.packet.baseAddress!.assumingMemoryBound(to: UInt8.self),
            Int32(raw.input.packet.count))
        guard Int(rawLength) == length, wrapped.input.packet[0..<length].elementsEqual(raw.input.packet[0..<length])
        else {
            fatalError("Opus \(duration): the wrapper and raw libopus encode differently")
        }
        _ = try! wrapped.decoder.decode(
            UnsafeRawBufferPointer(rebasing: wrapped.input.packet[0..<length]), into: wrapped.input.output)
        _ = opus_decode_float(
            raw.decoder, raw.input.packet.baseAddress!.assumingMemoryBound(to: UInt8.self), rawLength,
            raw.input.output.baseAddress!, Int32(frames), 0)
        guard wrapped.input.output.elementsEqual(raw.input.output) else {
            fatalError("Opus \(duration): the wrapper and raw libopus decode differently")
        }
    }
    // Start the measured wrapper from a fresh stream, like the raw one.
    wrapped.encoder.reset()
    wrapped.decoder.reset()
}
