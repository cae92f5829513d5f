/// Samples allocated once, for a processor's history (a delay line, a lookahead); freed when the last
/// processor holding it is gone. Allocate on the control plane; read and write on the engine thread.
final class SampleLine: @unchecked Sendable {
    let samples: UnsafeMutableBufferPointer<Float>

    init(count: Int) {
        samples = .allocate(capacity: max(1, count))
        samples.initialize(repeating: 0)
    }

    deinit { samples.deallocate() }
}
