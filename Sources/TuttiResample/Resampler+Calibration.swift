extension Resampler {
    /// Calibration of a mono probe that takes its input in a FIFO (libsoxr, speexdsp, zita-resampler): the most
    /// output frames' worth of input it holds back while streaming (`silenceFrames` of silence fed `step` frames at a
    /// time, all output taken after each step), then the filters' own delay: where the peak of an impulse fed next
    /// comes out, relative to its position ÷ `nominalRatio`.
    ///
    /// - Parameter process: gives the probe `count` frames from `feed` (0: none) and returns how many frames it
    ///   wrote to `sink` (at most `capacity`), like one `soxr_process` call.
    /// - Throws: what `process` throws; `.creationFailed` if the impulse does not come out.
    /// Control plane only (allocates).
    static func calibrateHoldAndDelay(
        silenceFrames: Int, nominalRatio: Double, step: Int,
        process: (
            _ feed: UnsafePointer<Float>, _ count: Int, _ sink: UnsafeMutablePointer<Float>, _ capacity: Int
        ) throws(ResamplerError) -> Int
    ) throws(ResamplerError) -> (mostHeld: Double, filterDelay: Double) {
        let capacity = 1 << 15
        let feed = UnsafeMutableBufferPointer<Float>.allocate(capacity: step)
        feed.initialize(repeating: 0)
        defer { feed.deallocate() }
        let sink = UnsafeMutableBufferPointer<Float>.allocate(capacity: capacity)
        sink.initialize(repeating: 0)
        defer { sink.deallocate() }
        var fed = 0
        var produced = 0
        var mostHeld = 0.0
        var response: [Float] = []
        var impulseAt = -1
        var producedBeforeImpulse = 0
        // The silence, then the impulse, then silence until it is well out.
        while impulseAt < 0 || Double(fed - impulseAt) < (mostHeld + 64) * nominalRatio + 64 {
            if impulseAt < 0 && fed >= silenceFrames {
                impulseAt = fed
                producedBeforeImpulse = produced
                feed[0] = 1
            }
            var done = 0
            var count = step
            repeat {
                done = try process(UnsafePointer(feed.baseAddress!), count, sink.baseAddress!, capacity)
                produced += done
                if impulseAt >= 0 { response += sink.prefix(done) }
                count = 0
            } while done == capacity
            feed[0] = 0
            fed += step
            if impulseAt < 0 { mostHeld = max(mostHeld, Double(fed) / nominalRatio - Double(produced)) }
        }
        guard let peak = interpolatedPeak(of: response, in: response.indices) else {
            throw ResamplerError(.creationFailed, "calibration impulse did not come out")
        }
        let filterDelay = Double(producedBeforeImpulse) + peak - Double(impulseAt) / nominalRatio
        return (mostHeld, filterDelay)
    }

    /// speexdsp or zita-resampler for `.nearUnityDrift`, calibrated (on a mono probe fed one frame at a time, at the
    /// nominal ratio) and primed with `lead` output frames' worth of silence: the most the probe held, widened by the
    /// correction range, plus one frame. Control plane only.
    static func makeNearUnity(
        library: NearUnityLibrary, channels: Int, sampleRate: Int, correctionLimit: Double, maximumInputFrames: Int
    ) throws(ResamplerError) -> Backend {
        var probe = try NearUnityEngine(
            library: library, channels: 1, sampleRate: sampleRate, maximumInputFrames: 1 << 15, primingFrames: 0)
        defer { probe.free() }
        let (heldAtMost, filterDelay) = try calibrateHoldAndDelay(silenceFrames: 2_048, nominalRatio: 1, step: 1) {
            (feed, count, sink, capacity) throws(ResamplerError) -> Int in
            try probe.process(input: feed, inputFrames: count, output: sink, outputFrames: capacity)
        }
        let lead = (heldAtMost * (1 + correctionLimit) + 1).rounded(.up)
        let primingFrames = Int(lead)
        let engine = try NearUnityEngine(
            library: library, channels: channels, sampleRate: sampleRate, maximumInputFrames: maximumInputFrames,
            primingFrames: primingFrames)
        return Backend(
            soxr: nil, samplerate: nil, nearUnity: engine,
            account: ResamplerFrameAccount(leadFrames: lead, heldFrames: Double(primingFrames)),
            name: library.name, filterDelayFrames: filterDelay)
    }
}
