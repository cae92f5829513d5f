import TuttiAnalysis
import TuttiCore
import TuttiResample
import TuttiStream
import TuttiTesting
import TuttiWire
import XCTest

/// A sender whose clock runs ±200 ppm off the receiver's: 64-frame packets leave on the sender's clock and arrive
/// (1 ms later, plus up to 0.25 ms of uniform jitter) into the receiver's buffer; the receiver reads 64-frame
/// periods on its own clock through a variable-ratio resampler steered by `DriftController`.
///
/// **Why two runs.** One hour of audio through the real jitter buffer and libsoxr is 2.7 million periods: about
/// a minute in a debug build, too slow for a unit test. So the hour runs through the exact frame accounting the
/// resampler uses to decide how much input to take (`ResamplerFrameAccount`, the same code `Resampler` runs) and
/// an exact model of the jitter buffer's level (frames received up to the newest packet, minus frames read: what
/// `JitterBuffer.statistics.bufferedFrames` reports), in about 3 s. That the model is exact is checked by the
/// second run: two minutes of a 1 kHz tone through the real `Packetizer`, `JitterBuffer`, `Resampler` (libsoxr)
/// and controller, where every period must come out complete (no resampler shortfall: the accounting holds), the
/// buffer never runs dry, and `ToneAnalysis` finds the tone at 1 kHz × (1 + drift), with no gap and no click.
/// The two minutes run twice: through libsoxr (`.variableRatio`) and through libsamplerate
/// (`.lowLatencyVariableRatio`, about 20 frames of resampler latency instead of about 290).
///
/// The controller is fed `DriftController.interpolatedLevel` (the level plus the frames since the newest
/// packet arrived), as a receiver that stamps arrivals can; a third run feeds it the raw, packet-quantized level.
/// Settling: the bounds are checked from 15 s on.
final class DriftCompensationTests: XCTestCase {
    static let rate = 48_000
    static let periodFrames = 64
    static let packetFrames = 64
    static let target = 240
    static let settleSeconds = 15
    /// Network delay and the jitter added to it, in frames (1 ms, up to 0.25 ms).
    static let delayFrames = 48.0
    static let jitterFrames = 12.0

    /// When packet `index` (frames index·64 ..< index·64 + 64 of the sender's clock) reaches the receiver, in
    /// receiver frames: the sender's frame s is captured at receiver time s ÷ (1 + drift); the packet leaves when
    /// its last frame is captured.
    struct Arrivals {
        let drift: Double
        var random: SeededGenerator

        init(driftPPM: Double, seed: UInt64) {
            drift = driftPPM * 1e-6
            random = SeededGenerator(seed: seed)
        }

        mutating func arrival(ofPacket index: Int) -> Double {
            let jitter = Double(random.next() >> 11) / Double(1 << 53) * DriftCompensationTests.jitterFrames
            return Double((index + 1) * DriftCompensationTests.packetFrames) / (1 + drift)
                + DriftCompensationTests.delayFrames + jitter
        }
    }

    struct Outcome {
        var minLevel = Int.max
        var maxLevel = Int.min
        var underruns = 0
        var overruns = 0
        var finalEstimatePPM = 0.0
        /// Mean of the estimate over the last tenth of the run.
        var meanEstimatePPM = 0.0
        /// Periods read and packets received (the run's length, and the drift it really simulated).
        var periods = 0
        var packets = 0
        /// Range of the correction after settling, in ppm.
        var minCorrectionPPM = Double.infinity
        var maxCorrectionPPM = -Double.infinity
    }

    /// The frame-accounting model (see the type's documentation) for `seconds` of streaming.
    func runModel(driftPPM: Double, seconds: Int, interpolated: Bool = true, seed: UInt64) -> Outcome {
        let rate = Self.rate
        let period = Self.periodFrames
        let capacityFrames = JitterBuffer(format: streamFormat).capacity * Self.packetFrames
        var arrivals = Arrivals(driftPPM: driftPPM, seed: seed)
        var controller = DriftController(.init(sampleRate: rate, periodFrames: period))
        var account = ResamplerFrameAccount(leadFrames: 300)
        var outcome = Outcome()
        var packets = 0
        var nextArrival = arrivals.arrival(ofPacket: 0)
        var newestArrival = 0.0
        // The jitter buffer anchors on the first packet (timeline 0) with its play head `target` before its end.
        var playHead = Self.packetFrames - Self.target
        var correction = 1.0
        let periods = seconds * rate / period
        let settled = Self.settleSeconds * rate / period
        var estimateSum = 0.0
        for index in 0..<periods {
            let now = Double(index * period)
            while nextArrival <= now {
                packets += 1
                newestArrival = nextArrival
                nextArrival = arrivals.arrival(ofPacket: packets)
            }
            guard packets > 0 else { continue }
            let level = packets * Self.packetFrames - playHead
            let needed = account.inputFramesNeeded(forOutputFrames: period, ratio: correction)
            if needed >= level { outcome.underruns += 1 }
            if level > capacityFrames - Self.packetFrames { outcome.overruns += 1 }
            playHead += needed
            account.record(inputFrames: needed, outputFrames: period, ratio: correction)
            if index >= settled {
                outcome.minLevel = min(outcome.minLevel, level)
                outcome.maxLevel = max(outcome.maxLevel, level)
                outcome.minCorrectionPPM = min(outcome.minCorrectionPPM, (correction - 1) * 1e6)
                outcome.maxCorrectionPPM = max(outcome.maxCorrectionPPM, (correction - 1) * 1e6)
            }
            let measured =
                interpolated
                ? DriftController.interpolatedLevel(
                    bufferedFrames: level, framesSinceNewestArrival: now - newestArrival,
                    packetFrames: Self.packetFrames)
                : Double(level)
            correction = controller.update(level: measured, target: Double(Self.target))
            if index >= periods - periods / 10 { estimateSum += controller.driftEstimatePPM }
        }
        outcome.periods = periods
        outcome.packets = packets
        outcome.finalEstimatePPM = controller.driftEstimatePPM
        outcome.meanEstimatePPM = estimateSum / Double(periods / 10)
        return outcome
    }

    var streamFormat: StreamFormat {
        StreamFormat(
            sampleRate: Self.rate, channels: 2, sampleFormat: .l24, packetFrames: Self.packetFrames,
            targetLatencyFrames: Self.target)
    }

    func checkHour(driftPPM: Double, file: StaticString = #filePath, line: UInt = #line) {
        let outcome = runModel(driftPPM: driftPPM, seconds: 3_600, seed: 42)
        print(
            "one hour at \(driftPPM) ppm (model): level \(outcome.minLevel)...\(outcome.maxLevel) after "
                + "\(Self.settleSeconds) s (target \(Self.target)); estimate \(outcome.finalEstimatePPM) ppm "
                + "(error \(outcome.finalEstimatePPM - driftPPM)), last 6 min mean \(outcome.meanEstimatePPM) "
                + "(error \(outcome.meanEstimatePPM - driftPPM)); correction "
                + "\(outcome.minCorrectionPPM)...\(outcome.maxCorrectionPPM) ppm")
        // An hour of the receiver's clock, and (1 + drift) hours of the sender's in packets.
        XCTAssertEqual(outcome.periods, 2_700_000, file: file, line: line)
        XCTAssertEqual(Double(outcome.packets), 2_700_000 * (1 + driftPPM * 1e-6), accuracy: 2, file: file, line: line)
        XCTAssertEqual(outcome.underruns, 0, file: file, line: line)
        XCTAssertEqual(outcome.overruns, 0, file: file, line: line)
        XCTAssertGreaterThanOrEqual(outcome.minLevel, Self.target - Self.packetFrames, file: file, line: line)
        XCTAssertLessThanOrEqual(outcome.maxLevel, Self.target + Self.packetFrames, file: file, line: line)
        XCTAssertEqual(outcome.finalEstimatePPM, driftPPM, accuracy: 5, file: file, line: line)
        XCTAssertEqual(outcome.meanEstimatePPM, driftPPM, accuracy: 0.5, file: file, line: line)
    }

    func testOneHourSenderFastBy200ppm() {
        checkHour(driftPPM: 200)
    }

    func testOneHourSenderSlowBy200ppm() {
        checkHour(driftPPM: -200)
    }

    /// The raw, packet-quantized level (no arrival times): the loop still holds the buffer within a packet of
    /// target; the estimate is coarser. Ten minutes.
    func testRawPacketLevelStillHoldsTheBuffer() {
        for drift in [200.0, -200.0] {
            let outcome = runModel(driftPPM: drift, seconds: 600, interpolated: false, seed: 7)
            print(
                "ten minutes at \(drift) ppm, raw level: level \(outcome.minLevel)...\(outcome.maxLevel); estimate "
                    + "\(outcome.finalEstimatePPM), last minute mean \(outcome.meanEstimatePPM); correction "
                    + "\(outcome.minCorrectionPPM)...\(outcome.maxCorrectionPPM) ppm")
            XCTAssertEqual(outcome.underruns, 0)
            XCTAssertGreaterThanOrEqual(outcome.minLevel, Self.target - Self.packetFrames)
            XCTAssertLessThanOrEqual(outcome.maxLevel, Self.target + Self.packetFrames)
            XCTAssertEqual(outcome.meanEstimatePPM, drift, accuracy: 3)
        }
    }

    /// Two minutes of real audio (see the type's documentation) through a resampler in `mode`.
    func checkRealAudio(
        driftPPM: Double, mode: Resampler.Mode = .variableRatio(maximumCorrectionPPM: 1_000),
        file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let format = streamFormat
        let channels = format.channels
        let period = Self.periodFrames
        var arrivals = Arrivals(driftPPM: driftPPM, seed: 99)
        var jitterBuffer = JitterBuffer(format: format)
        var packetizer = Packetizer(
            format: format, payloadType: 96, ssrc: 0x5EED, initialSequenceNumber: 65_000,
            initialTimestamp: 4_000_000_000)
        var tone = ToneGenerator(frequency: 1_000, amplitude: 0.5, sampleRate: Self.rate)
        var resampler = try Resampler(
            inputRate: Self.rate, outputRate: Self.rate, channels: channels, maximumOutputFrames: period, mode: mode)
        var controller = DriftController(.init(sampleRate: Self.rate, periodFrames: period))
        let senderPeriod = UnsafeMutableBufferPointer<Float>.allocate(capacity: Self.packetFrames * channels)
        let input = UnsafeMutableBufferPointer<Float>.allocate(capacity: resampler.maximumInputFrames * channels)
        let output = UnsafeMutableBufferPointer<Float>.allocate(capacity: period * channels)
        defer {
            senderPeriod.deallocate()
            input.deallocate()
            output.deallocate()
        }
        let seconds = 120
        let periods = seconds * Self.rate / period
        var recording: [Float] = []
        recording.reserveCapacity(periods * period)
        var packets = 0
        var nextArrival = arrivals.arrival(ofPacket: 0)
        var newestArrival = 0.0
        var correction = 1.0
        var minLevel = Int.max
        var maxLevel = Int.min
        let settled = Self.settleSeconds * Self.rate / period
        for index in 0..<periods {
            let now = Double(index * period)
            while nextArrival <= now {
                let arrival = HostTime(nanoseconds: Int64(nextArrival * 1e9 / Double(Self.rate)))
                tone.render(into: senderPeriod, frames: Self.packetFrames, channels: channels)
                let captured = Int64(
                    Double(packets * Self.packetFrames) / (1 + driftPPM * 1e-6) * 1e9 / Double(Self.rate))
                packetizer.append(UnsafeBufferPointer(senderPeriod), frames: Self.packetFrames, captureTime: captured) {
                    datagram in
                    guard let view = try? RTPPacketView.decode(datagram) else { return XCTFail("undecodable packet") }
                    let payload = UnsafeRawBufferPointer(
                        rebasing: datagram[view.payloadOffset..<(view.payloadOffset + view.payloadCount)])
                    _ = jitterBuffer.insert(
                        sequenceNumber: view.header.sequenceNumber, timestamp: view.header.timestamp,
                        captureTime: view.header.captureTime, arrival: arrival, payload: payload)
                }
                packets += 1
                newestArrival = nextArrival
                nextArrival = arrivals.arrival(ofPacket: packets)
            }
            try resampler.setCorrection(correction, transitionFrames: period)
            let needed = resampler.inputFramesNeeded(forOutputFrames: period)
            jitterBuffer.read(
                into: input, frames: needed, now: HostTime(frames: Int64(index * period), sampleRate: Self.rate),
                captureClockNow: .min)
            try resampler.process(
                input: UnsafeBufferPointer(input), inputFrames: needed, output: output, outputFrames: period)
            for frame in 0..<period { recording.append(output[frame * channels]) }
            guard jitterBuffer.state == .playing || jitterBuffer.state == .buffering else { continue }
            let level = jitterBuffer.statistics.bufferedFrames
            if index >= settled {
                minLevel = min(minLevel, level)
                maxLevel = max(maxLevel, level)
            }
            correction = controller.update(
                level: DriftController.interpolatedLevel(
                    bufferedFrames: level, framesSinceNewestArrival: now - newestArrival,
                    packetFrames: Self.packetFrames),
                target: Double(Self.target))
        }
        let statistics = jitterBuffer.statistics
        let report = ToneAnalysis.analyze(recording, sampleRate: Self.rate)
        // Once settled the output pitch is the sender's: 1 kHz on its clock is 1 kHz × (1 + drift) on ours.
        let lastMinute = ToneAnalysis.analyze(Array(recording.suffix(60 * Self.rate)), sampleRate: Self.rate)
        print(
            "two minutes at \(driftPPM) ppm through \(resampler.engine) (delay \(resampler.delayFrames) frames): level "
                + "\(minLevel)...\(maxLevel) after \(Self.settleSeconds) s; "
                + "estimate \(controller.driftEstimatePPM) ppm (error \(controller.driftEstimatePPM - driftPPM)); tone "
                + "\(report.frequency) Hz, last minute \(lastMinute.frequency) Hz (expected "
                + "\(1_000 * (1 + driftPPM * 1e-6))), \(report.discontinuities) "
                + "discontinuities, \(report.gaps.count) gaps; resampler shortfall \(resampler.shortfallFrames)")
        XCTAssertEqual(statistics.underruns, 0, file: file, line: line)
        XCTAssertEqual(statistics.concealedFrames, 0, file: file, line: line)
        XCTAssertEqual(statistics.lost + statistics.late + statistics.invalid, 0, file: file, line: line)
        XCTAssertEqual(resampler.shortfallFrames, 0, file: file, line: line)
        XCTAssertGreaterThanOrEqual(minLevel, Self.target - Self.packetFrames, file: file, line: line)
        XCTAssertLessThanOrEqual(maxLevel, Self.target + Self.packetFrames, file: file, line: line)
        XCTAssertEqual(controller.driftEstimatePPM, driftPPM, accuracy: 5, file: file, line: line)
        XCTAssertEqual(report.frequency, 1_000 * (1 + driftPPM * 1e-6), accuracy: 0.02, file: file, line: line)
        XCTAssertEqual(lastMinute.frequency, 1_000 * (1 + driftPPM * 1e-6), accuracy: 0.002, file: file, line: line)
        XCTAssertEqual(report.gaps, [], file: file, line: line)
        XCTAssertEqual(report.discontinuities, 0, file: file, line: line)
        // The tone plays from the first packet (after target latency and the resampler's lead) to the end.
        XCTAssertLessThan(
            report.activeStart ?? .max, Self.target + Int(resampler.leadFrames) + 4 * period, file: file, line: line)
        XCTAssertEqual(report.activeEnd, recording.count - 1, file: file, line: line)
    }

    func testTwoMinutesThroughSoxrSenderFastBy200ppm() throws {
        try checkRealAudio(driftPPM: 200)
    }

    func testTwoMinutesThroughSoxrSenderSlowBy200ppm() throws {
        try checkRealAudio(driftPPM: -200)
    }

    func testTwoMinutesThroughLowLatencySamplerateSenderFastBy200ppm() throws {
        try checkRealAudio(driftPPM: 200, mode: .lowLatencyVariableRatio(maximumCorrectionPPM: 1_000))
    }

    func testTwoMinutesThroughLowLatencySamplerateSenderSlowBy200ppm() throws {
        try checkRealAudio(driftPPM: -200, mode: .lowLatencyVariableRatio(maximumCorrectionPPM: 1_000))
    }
}
