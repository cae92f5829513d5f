import Foundation
import TuttiCodec
import TuttiCore

/// Signals, a whole-stream encode/decode and error measures for the Opus tests.
enum OpusTestSupport {
    static let sampleRate = 48_000

    /// A steady stereo tone: left at `amplitude`, right at half of it and a quarter period later (so a
    /// swapped or merged channel shows in the error).
    static func tone(frequency: Double = 1_000, amplitude: Double = 0.5, frames: Int, channels: Int = 2) -> [Float] {
        var samples = [Float](repeating: 0, count: frames * channels)
        for frame in 0..<frames {
            let phase = 2 * Double.pi * frequency * Double(frame) / Double(sampleRate)
            for channel in 0..<channels {
                samples[frame * channels + channel] = Float(
                    amplitude / Double(channel + 1) * sin(phase + Double(channel) * .pi / 2))
            }
        }
        return samples
    }

    /// A tone whose pitch glides between 300 and 3,300 Hz three times a second: what a lost packet held
    /// cannot be extrapolated from what came before, so concealment has to guess and FEC has something to
    /// recover. Kept below 4 kHz, inside the SILK layer's band.
    static func glide(frames: Int, channels: Int = 2) -> [Float] {
        var samples = [Float](repeating: 0, count: frames * channels)
        var phase = 0.0
        for frame in 0..<frames {
            let time = Double(frame) / Double(sampleRate)
            phase += 2 * Double.pi * (1_800 + 1_500 * sin(2 * Double.pi * 3 * time)) / Double(sampleRate)
            for channel in 0..<channels {
                samples[frame * channels + channel] = Float(0.4 * sin(phase + Double(channel)))
            }
        }
        return samples
    }

    /// Encodes `signal` packet by packet (a trailing partial frame is dropped).
    static func encode(
        _ signal: [Float], settings: OpusSettings, channels: Int = 2
    ) throws -> (
        packets: [[UInt8]], lookahead: Int
    ) {
        var encoder = try OpusEncoder(settings: settings, channels: channels)
        let count = encoder.samplesPerPacket
        var packet = [UInt8](repeating: 0, count: OpusSettings.maximumPacketBytes)
        var packets = [[UInt8]]()
        for start in stride(from: 0, through: signal.count - count, by: count) {
            let length = try encode(signal[start..<(start + count)], with: &encoder, into: &packet)
            packets.append(Array(packet[0..<length]))
        }
        return (packets, encoder.lookaheadFrames)
    }

    static func encode(
        _ samples: ArraySlice<Float>, with encoder: inout OpusEncoder, into packet: inout [UInt8]
    )
        throws -> Int
    {
        try samples.withUnsafeBufferPointer { source in
            try packet.withUnsafeMutableBytes { bytes in try encoder.encode(source, into: bytes) }
        }
    }

    /// Decodes one packet into a fresh buffer of `capacityFrames`; returns the frames decoded.
    static func decode(
        _ packet: [UInt8], with decoder: inout OpusDecoder, capacityFrames: Int
    ) throws
        -> [Float]
    {
        var samples = [Float](repeating: .nan, count: capacityFrames * decoder.channels)
        let frames = try packet.withUnsafeBytes { bytes in
            try samples.withUnsafeMutableBufferPointer { output in try decoder.decode(bytes, into: output) }
        }
        return Array(samples[0..<(frames * decoder.channels)])
    }

    static func conceal(frames: Int, with decoder: inout OpusDecoder) throws -> [Float] {
        var samples = [Float](repeating: .nan, count: frames * decoder.channels)
        try samples.withUnsafeMutableBufferPointer { output in
            try decoder.concealLoss(frames: frames, into: output)
        }
        return samples
    }

    static func recover(
        frames: Int, from nextPacket: [UInt8], with decoder: inout OpusDecoder
    ) throws
        -> [Float]
    {
        var samples = [Float](repeating: .nan, count: frames * decoder.channels)
        try nextPacket.withUnsafeBytes { bytes in
            try samples.withUnsafeMutableBufferPointer { output in
                try decoder.recoverLoss(frames: frames, fromNextPacket: bytes, into: output)
            }
        }
        return samples
    }

    /// One channel of an interleaved buffer.
    static func channel(_ samples: [Float], _ channel: Int, of channels: Int = 2) -> [Float] {
        stride(from: channel, to: samples.count, by: channels).map { samples[$0] }
    }

    /// 10·log10(Σ reference² / Σ (test − reference)²), in dB.
    static func snr(_ test: ArraySlice<Float>, against reference: ArraySlice<Float>) -> Double {
        precondition(test.count == reference.count)
        var signal = 0.0
        var noise = 0.0
        for (value, expected) in zip(test, reference) {
            signal += Double(expected) * Double(expected)
            noise += Double(value - expected) * Double(value - expected)
        }
        return 10 * log10(signal / max(noise, 1e-30))
    }

    static func rms(_ samples: ArraySlice<Float>) -> Double {
        (samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(samples.count)).squareRoot()
    }

    /// The largest step between consecutive samples: a click shows as a step far above a sine's own
    /// (2π·f/fs·amplitude, 0.065 for 1 kHz at amplitude 0.5).
    static func largestStep(_ samples: ArraySlice<Float>) -> Float {
        zip(samples.dropFirst(), samples).reduce(0) { max($0, abs($1.0 - $1.1)) }
    }

    /// Packet mode from the TOC byte (RFC 6716 §3.1): configurations 0–11 SILK-only, 12–15 hybrid, 16–31
    /// CELT-only.
    enum Mode: Hashable { case silk, hybrid, celt }
    static func mode(of packet: [UInt8]) -> Mode {
        let configuration = packet[0] >> 3
        return configuration < 12 ? .silk : configuration < 16 ? .hybrid : .celt
    }
}
