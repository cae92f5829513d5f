import Foundation
import TuttiResample
import XCTest

/// A steady sine, interleaved, the same on every channel, `frames` long.
func tone(frequency: Double, amplitude: Double = 0.5, rate: Int, frames: Int, channels: Int) -> [Float] {
    var samples = [Float](repeating: 0, count: frames * channels)
    let omega = 2 * Double.pi * frequency / Double(rate)
    for frame in 0..<frames {
        let value = Float(amplitude * sin(omega * Double(frame)))
        for channel in 0..<channels { samples[frame * channels + channel] = value }
    }
    return samples
}

/// Rounds to the nearest 24-bit PCM step (what an L24 stream or a 24-bit file carries).
func quantized24(_ samples: [Float]) -> [Float] {
    samples.map { sample in
        let scaled = (Double(sample) * 8_388_608).rounded(.toNearestOrEven)
        return Float(min(max(scaled, -8_388_608), 8_388_607) / 8_388_608)
    }
}

/// One channel of an interleaved signal.
func channel(_ samples: [Float], _ index: Int, of channels: Int) -> [Float] {
    stride(from: index, to: samples.count, by: channels).map { samples[$0] }
}

/// What driving a resampler like a device thread produced.
struct DeviceRun {
    /// Interleaved output of every period, in order.
    var output: [Float] = []
    /// Input frames taken in each period.
    var inputPerPeriod: [Int] = []
    /// Periods whose output was not produced in full by libsoxr.
    var incompletePeriods = 0
}

/// Drives `resampler` as a device thread does: each period of `periodFrames` output frames it asks for
/// `inputFramesNeeded`, takes that many frames from `input` (silence once `input` is used up) and processes them.
/// `correction`, if given, is set before each period (with a transition of `transitionFrames`, by default one
/// period).
func runDevice(
    _ resampler: inout Resampler, input: [Float], periodFrames: Int, outputFrames: Int,
    correction: ((_ period: Int) -> Double)? = nil, transitionFrames: Int? = nil, file: StaticString = #filePath,
    line: UInt = #line
) -> DeviceRun {
    let channels = resampler.channels
    var run = DeviceRun()
    run.output.reserveCapacity(outputFrames * channels + periodFrames * channels)
    var period = [Float](repeating: 0, count: periodFrames * channels)
    var slice = [Float](repeating: 0, count: resampler.maximumInputFrames * channels)
    var position = 0
    var index = 0
    while run.output.count < outputFrames * channels {
        if let correction {
            do {
                try resampler.setCorrection(correction(index), transitionFrames: transitionFrames ?? periodFrames)
            } catch {
                XCTFail("setCorrection: \(error)", file: file, line: line)
            }
        }
        let needed = resampler.inputFramesNeeded(forOutputFrames: periodFrames)
        for sample in 0..<(needed * channels) {
            let source = position * channels + sample
            slice[sample] = source < input.count ? input[source] : 0
        }
        position += needed
        do {
            let result = try slice.withUnsafeBufferPointer { input in
                try period.withUnsafeMutableBufferPointer { output in
                    try resampler.process(input: input, inputFrames: needed, output: output, outputFrames: periodFrames)
                }
            }
            if result.producedFrames != periodFrames { run.incompletePeriods += 1 }
            XCTAssertEqual(result.consumedFrames, needed, file: file, line: line)
        } catch {
            XCTFail("process: \(error)", file: file, line: line)
        }
        run.inputPerPeriod.append(needed)
        run.output += period
        index += 1
    }
    return run
}

/// One `process` call from and into arrays: the first `inputFrames` frames of `input` in, `outputFrames` frames
/// out to the start of `output`.
func process(
    _ resampler: inout Resampler, _ input: [Float], inputFrames: Int, into output: inout [Float], outputFrames: Int
) throws -> Resampler.Result {
    try input.withUnsafeBufferPointer { input in
        try output.withUnsafeMutableBufferPointer { output in
            try resampler.process(input: input, inputFrames: inputFrames, output: output, outputFrames: outputFrames)
        }
    }
}
