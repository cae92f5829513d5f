import TuttiAnalysis
import TuttiCodec
import TuttiCore
import TuttiStream
import XCTest

/// Repetition concealment through the jitter buffer: a 997 Hz tone (not a whole number of frames per
/// period) with packets dropped; gaps are filled from the audio before them, without clicks, counted,
/// and long gaps fade to silence.
final class PacketLossConcealmentTests: XCTestCase {
    private static let format = StreamFormat(
        sampleRate: 48_000, channels: 2, sampleFormat: .l24, packetFrames: 64, targetLatencyFrames: 128)
    private static let frequency = 997.0
    private static let amplitude: Float = 0.5

    private static func tone(frame: Int) -> Float {
        amplitude * Float(sin(2 * Double.pi * frequency * Double(frame) / 48_000))
    }

    /// The tone's own largest sample-to-sample step.
    private static var toneMaxStep: Float { amplitude * Float(2 * sin(Double.pi * frequency / 48_000)) }

    /// Streams `packets` packets of the tone, skipping `dropped`, one packet per 64-frame read; returns the
    /// left channel of the output and the final counters.
    private func play(
        packets: Int, dropped: Set<Int>, concealment: Concealment
    ) -> (left: [Float], statistics: JitterBufferStatistics) {
        let format = Self.format
        var buffer = JitterBuffer(format: format, concealment: concealment)
        var payload = [UInt8](repeating: 0, count: format.payloadBytes)
        var samples = [Float](repeating: 0, count: format.samplesPerPacket)
        let output = UnsafeMutableBufferPointer<Float>.allocate(capacity: format.samplesPerPacket)
        defer { output.deallocate() }
        var left: [Float] = []
        for index in 0...packets {  // the first read is the lead-in; the last plays the last packet
            if index < packets, !dropped.contains(index) {
                for frame in 0..<format.packetFrames {
                    let value = Self.tone(frame: index * format.packetFrames + frame)
                    samples[2 * frame] = value
                    samples[2 * frame + 1] = -value
                }
                samples.withUnsafeBufferPointer { source in
                    payload.withUnsafeMutableBytes { PCMCodec.encode(source, as: .l24, into: $0) }
                }
                let now = HostTime(frames: Int64(index * format.packetFrames), sampleRate: 48_000)
                let result = payload.withUnsafeBytes {
                    buffer.insert(
                        sequenceNumber: UInt16(index), timestamp: UInt32(index * format.packetFrames), captureTime: nil,
                        arrival: now, payload: $0)
                }
                XCTAssertNotEqual(result, .invalid)
            }
            let now = HostTime(frames: Int64(index * format.packetFrames), sampleRate: 48_000)
            buffer.read(into: output, frames: format.packetFrames, now: now, captureClockNow: .min)
            for frame in 0..<format.packetFrames { left.append(output[2 * frame]) }
        }
        return (left, buffer.statistics)
    }

    private func maxStep(_ signal: [Float], in range: Range<Int>) -> Float {
        var largest: Float = 0
        for index in range.dropFirst() { largest = max(largest, abs(signal[index] - signal[index - 1])) }
        return largest
    }

    /// The output frame that plays the tone's first frame: the target latency (two packets) minus the
    /// packet that had arrived by the first read.
    private func start(of signal: [Float]) -> Int { 64 }

    func testShortGapsAreFilledWithoutClicksAndCounted() {
        let dropped: Set<Int> = [40, 90, 91, 150, 151, 152, 153]  // 1, 2 and 4 packets (1.3, 2.7, 5.3 ms)
        let (left, statistics) = play(packets: 240, dropped: dropped, concealment: .repetition)
        XCTAssertEqual(statistics.lost, UInt64(dropped.count))
        XCTAssertEqual(statistics.concealedFrames, UInt64(dropped.count * 64))
        let first = start(of: left)
        let steady = (first + 64)..<(first + 230 * 64)
        let step = maxStep(left, in: steady)
        // A click is a step larger than the tone ever makes (1 % for L24 rounding).
        print("concealment: largest step \(step) vs the tone's \(Self.toneMaxStep)")
        XCTAssertLessThan(step, Self.toneMaxStep * 1.01, "largest step \(step) vs the tone's \(Self.toneMaxStep)")

        // The filled audio stays close to the tone that was lost (silence would leave an error of
        // amplitude/√2 ≈ 0.35 RMS in the gap).
        for packet in dropped {
            let gap = (first + packet * 64)..<(first + packet * 64 + 64)
            var squared: Float = 0
            for index in gap {
                let expected = Self.tone(frame: index - first)
                squared += (left[index] - expected) * (left[index] - expected)
            }
            let rms = (squared / Float(gap.count)).squareRoot()
            XCTAssertLessThan(rms, 0.05, "packet \(packet): RMS error \(rms) in the concealed gap")
        }
    }

    func testSilenceConcealmentLeavesAGapThatRepetitionFills() {
        let dropped: Set<Int> = [100]
        let silent = play(packets: 160, dropped: dropped, concealment: .silence).left
        let repeated = play(packets: 160, dropped: dropped, concealment: .repetition).left
        let first = start(of: repeated)
        let middle = first + 100 * 64 + 32
        XCTAssertEqual(silent[middle], 0, "silence concealment is silent in the middle of the gap")
        XCTAssertEqual(repeated[middle], Self.tone(frame: middle - first), accuracy: 0.05)
    }

    func testLongGapsFadeToSilenceAndAudioResumesWithoutAClick() {
        // 40 packets (53 ms): 20 ms at full level, a 20 ms fade, then silence.
        let dropped = Set(60..<100)
        let (left, statistics) = play(packets: 200, dropped: dropped, concealment: .repetition)
        XCTAssertEqual(statistics.concealedFrames, 40 * 64)
        let first = start(of: left)
        let gapStart = first + 60 * 64
        let silentFrom = gapStart + 960 + 960
        XCTAssertTrue(left[silentFrom..<(first + 100 * 64)].allSatisfy { $0 == 0 }, "the end of a long gap is silence")
        XCTAssertGreaterThan(left[(gapStart + 100)..<(gapStart + 900)].map(abs).max()!, 0.4, "held at full level first")
        let step = maxStep(left, in: (first + 64)..<(first + 190 * 64))
        XCTAssertLessThan(step, Self.toneMaxStep * 1.01, "fade out and fade back in do not click")
    }

    func testAGapAtTheStartOfHistoryIsSilence() {
        var concealer = PacketLossConcealer(channels: 1, sampleRate: 48_000)
        let output = UnsafeMutableBufferPointer<Float>.allocate(capacity: 64)
        defer { output.deallocate() }
        output.initialize(repeating: 1)
        concealer.beginGap()
        concealer.conceal(into: output, at: 0, frames: 64)
        XCTAssertTrue(output.allSatisfy { $0 == 0 })
        XCTAssertTrue(concealer.isSilent)
    }
}
