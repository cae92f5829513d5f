import Foundation

/// Signals and measurements for the processor tests: interleaved buffers, tones, levels.
enum Signal {
    /// `frames` interleaved frames of a sine of `frequency` at `amplitude` on every channel.
    static func tone(frequency: Double, amplitude: Float, frames: Int, channels: Int, sampleRate: Int = 48_000) -> [Float] {
        var samples = [Float](repeating: 0, count: frames * channels)
        for frame in 0..<frames {
            let value = amplitude * Float(sin(2 * Double.pi * frequency * Double(frame) / Double(sampleRate)))
            for channel in 0..<channels { samples[frame * channels + channel] = value }
        }
        return samples
    }

    /// The RMS of one channel over `frames` (a range of frames).
    static func rms(_ samples: [Float], channel: Int, channels: Int, frames: Range<Int>) -> Double {
        var sum = 0.0
        for frame in frames { sum += Double(samples[frame * channels + channel]) * Double(samples[frame * channels + channel]) }
        return (sum / Double(frames.count)).squareRoot()
    }

    static func decibels(_ ratio: Double) -> Double { 20 * log10(ratio) }

    /// Runs `process` over `samples` in periods of `period` frames, as the engine would.
    static func inPeriods(
        _ samples: inout [Float], channels: Int, period: Int,
        _ process: (UnsafeMutableBufferPointer<Float>, Int) -> Void
    ) {
        let frames = samples.count / channels
        samples.withUnsafeMutableBufferPointer { buffer in
            var start = 0
            while start < frames {
                let count = min(period, frames - start)
                let slice = UnsafeMutableBufferPointer(rebasing: buffer[(start * channels)..<((start + count) * channels)])
                process(slice, count)
                start += count
            }
        }
    }
}
