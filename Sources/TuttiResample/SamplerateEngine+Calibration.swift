import CSamplerate

extension SamplerateEngine {
    /// What `calibrate` measured.
    struct Calibration: Hashable, Sendable {
        /// `SampleratePosition.lookaheadFrames` at this ratio.
        var lookaheadFrames: Int
        /// Where an impulse's peak comes out, in output frames, beyond the output position of its input position
        /// (about 0: libsamplerate's sinc filters are symmetric and centred on the read position).
        var filterDelayFrames: Double
    }

    /// Measures, on a mono converter of the same kind at the constant `ratio` (output ÷ input), what its output
    /// frames need: input is given one frame at a time and all output taken after each; for each output frame n,
    /// the input given when it came out less ⌊Pₙ⌋ (from `SampleratePosition`). The smallest of these over two
    /// thousand input frames (every phase of the position) is the lookahead: the frames that waited for input came
    /// out exactly when it arrived. An impulse at input frame 1 024 then gives the filter's delay.
    ///
    /// - Throws: `.creationFailed` if libsamplerate fails, or the impulse does not come out.
    /// Control plane only (allocates; about 2 000 `src_process` calls).
    static func calibrate(ratio: Double) throws(ResamplerError) -> Calibration {
        var error: Int32 = 0
        guard let probe = src_new(converter, 1, &error) else {
            throw ResamplerError(.creationFailed, samplerate: error)
        }
        defer { src_delete(probe) }
        let status = src_set_ratio(probe, ratio)
        guard status == 0 else { throw ResamplerError(.creationFailed, samplerate: status) }
        let capacity = 256
        let sink = UnsafeMutableBufferPointer<Float>.allocate(capacity: capacity)
        sink.initialize(repeating: 0)
        defer { sink.deallocate() }
        let feed = UnsafeMutableBufferPointer<Float>.allocate(capacity: 1)
        feed.initialize(repeating: 0)
        defer { feed.deallocate() }

        var model = SampleratePosition(lookaheadFrames: 1, channels: 1, ratio: ratio)
        let impulseAt = 1_024
        let inputFrames = 2_048
        var lookahead = Int.max
        var response: [Float] = []
        response.reserveCapacity(Int(Double(inputFrames) * ratio) + capacity)
        for frame in 0..<inputFrames {
            feed[0] = frame == impulseAt ? 1 : 0
            var pending = 1
            var produced = 0
            repeat {
                var data = SRC_DATA(
                    data_in: UnsafePointer(feed.baseAddress!) + (1 - pending), data_out: sink.baseAddress,
                    input_frames: pending, output_frames: capacity, input_frames_used: 0, output_frames_gen: 0,
                    end_of_input: 0, src_ratio: ratio)
                let status = src_process(probe, &data)
                guard status == 0 else { throw ResamplerError(.creationFailed, samplerate: status) }
                pending -= data.input_frames_used
                produced = data.output_frames_gen
                guard data.input_frames_used > 0 || produced > 0 else {
                    throw ResamplerError(.creationFailed, "calibration: the converter took no input and gave no output")
                }
                model.record(inputFrames: data.input_frames_used, producedFrames: 0, requestedFrames: 0, toward: ratio)
                for index in 0..<produced {
                    lookahead = min(lookahead, model.heldWholeFrames)
                    model.record(inputFrames: 0, producedFrames: 1, requestedFrames: 1, toward: ratio)
                    response.append(sink[index])
                }
            } while pending > 0 || produced == capacity
        }
        // The impulse's input position is impulseAt, output position impulseAt × ratio.
        let expected = Double(impulseAt) * ratio
        let window = max(0, Int(expected) - 64)..<min(response.count, Int(expected) + 64)
        guard lookahead != .max, let peak = interpolatedPeak(of: response, in: window) else {
            throw ResamplerError(.creationFailed, "calibration impulse did not come out")
        }
        return Calibration(lookaheadFrames: lookahead, filterDelayFrames: peak - expected)
    }
}
