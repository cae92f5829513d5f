// Filter-port processors per device period: one iteration is one 64-frame stereo period of a 1 kHz tone through
// one built-in processor, in place, as a filter port's engine thread will run it:
// - `Process-<name>-one-64-frame-stereo-period` for gain (−6 dB), delay (250 ms), eq (one band, +6 dB at
//   1 kHz) and limiter (−6 dBFS ceiling, so it works on every period). The gain changes every 100 periods, so
//   its 10 ms glide is measured too; so does the eq's gain (its coefficients recomputed on the engine thread).
// Allocations must be 0 (Thresholds/); teardown checks that the output is finite.

import Benchmark
import TuttiProcess

#if canImport(Glibc)
import Glibc
#endif

final class ProcessorState {
    var processor: BuiltInProcessor
    let input: UnsafeMutableBufferPointer<Float>
    let period: UnsafeMutableBufferPointer<Float>
    var periods = 0
    /// Every 100 periods, parameter `index` alternates between the two values.
    let change: (index: Int, values: (Double, Double))?

    init(_ specification: String, change: (index: Int, values: (Double, Double))?) {
        processor = BuiltInProcessor.make(try! ProcessorSpecification(parsing: specification), sampleRate: 48_000, channels: 2)
        input = .allocate(capacity: 128)
        period = .allocate(capacity: 128)
        for frame in 0..<64 {
            let value = Float(sin(2 * Double.pi * 1_000 * Double(frame) / 48_000))
            input[2 * frame] = value
            input[2 * frame + 1] = value
        }
        self.change = change
    }

    func runPeriod() {
        _ = period.update(fromContentsOf: input)
        if let change, periods % 100 == 0 {
            processor.set(change.index, to: periods % 200 == 0 ? change.values.0 : change.values.1)
        }
        processor.process(period, frames: 64, channels: 2)
        periods &+= 1
    }

    func verify(_ name: String) {
        precondition(period.allSatisfy(\.isFinite), "\(name): output is not finite")
    }

    deinit {
        input.deallocate()
        period.deallocate()
    }
}

func registerProcessorBenchmarks(_ configuration: Benchmark.Configuration) {
    let cases: [(name: String, specification: String, change: (index: Int, values: (Double, Double))?)] = [
        ("gain", "gain,db=-6", (0, (-12, -6))), ("delay", "delay,ms=250", nil), ("eq", "eq,freq=1000,db=6,q=1", (1, (-6, 6))),
        ("limiter", "limiter,ceiling=-6", nil),
    ]
    for (name, specification, change) in cases {
        let fixture = Fixture<ProcessorState>()
        let benchmarkName = "Process-\(name)-one-64-frame-stereo-period"
        Benchmark(benchmarkName, configuration: configuration) { _ in
            fixture.state!.runPeriod()
        } setup: {
            fixture.state = ProcessorState(specification, change: change)
        } teardown: {
            fixture.state!.verify(benchmarkName)
            fixture.state = nil
        }
    }
}
