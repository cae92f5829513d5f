import TuttiCodec
import TuttiCore
import TuttiStream
import XCTest

/// Opus through the jitter buffer: packets are decoded in stream order as the play head reaches them; a
/// lost packet is recovered from the next packet's FEC when the stream carries it, else concealed by the
/// decoder; a packet that does not decode is counted invalid and concealed.
final class OpusJitterBufferTests: XCTestCase {
    /// Encodes `packets` packets of a 1 kHz stereo tone and plays them through a jitter buffer, skipping
    /// `dropped` and replacing `corrupted` with garbage; returns the counters and the left channel.
    private func play(
        settings: OpusSettings, packets: Int, dropped: Set<Int> = [], corrupted: Set<Int> = []
    ) throws -> (statistics: JitterBufferStatistics, left: [Float]) {
        let frames = settings.frameDuration.framesPerChannel
        let format = StreamFormat(
            sampleRate: 48_000, channels: 2, sampleFormat: .opus, packetFrames: frames, targetLatencyFrames: 2 * frames,
            opus: settings)
        var encoder = try OpusEncoder(settings: settings, channels: 2)
        var buffer = JitterBuffer(format: format, codecDelayFrames: encoder.lookaheadFrames)
        var input = [Float](repeating: 0, count: 2 * frames)
        var packet = [UInt8](repeating: 0, count: format.payloadBytes)
        let output = UnsafeMutableBufferPointer<Float>.allocate(capacity: 2 * frames)
        defer { output.deallocate() }
        var left: [Float] = []
        for index in 0...packets {
            if index < packets {
                for frame in 0..<frames {
                    let value = 0.5 * Float(sin(2 * Double.pi * 1000 * Double(index * frames + frame) / 48_000))
                    input[2 * frame] = value
                    input[2 * frame + 1] = value
                }
                var count = try input.withUnsafeBufferPointer { source in
                    try packet.withUnsafeMutableBytes { try encoder.encode(source, into: $0) }
                }
                if corrupted.contains(index) {
                    // A code-3 TOC byte claiming more frames than follow: not a valid Opus packet.
                    packet[0] = 0xFF
                    packet[1] = 0xFF
                    count = 2
                }
                if !dropped.contains(index) {
                    let result = packet.withUnsafeBytes {
                        buffer.insert(
                            sequenceNumber: UInt16(index), timestamp: UInt32(index * frames), captureTime: nil,
                            arrival: HostTime(frames: Int64(index * frames), sampleRate: 48_000),
                            payload: UnsafeRawBufferPointer(rebasing: $0.prefix(count)))
                    }
                    XCTAssertNotEqual(result, .invalid, "packet \(index)")
                }
            }
            buffer.read(
                into: output, frames: frames, now: HostTime(frames: Int64(index * frames), sampleRate: 48_000), captureClockNow: .min)
            for frame in 0..<frames { left.append(output[2 * frame]) }
        }
        return (buffer.statistics, left)
    }

    func testALostPacketIsRecoveredFromTheNextPacketsFEC() throws {
        let settings = OpusSettings(
            frameDuration: .tenMilliseconds, bitrate: 64_000, inBandFEC: true, expectedPacketLossPercent: 20, application: .audio)
        let (statistics, left) = try play(settings: settings, packets: 100, dropped: [50])
        XCTAssertEqual(statistics.lost, 1)
        XCTAssertEqual(statistics.fecRecoveredFrames, 480)
        XCTAssertEqual(statistics.concealedFrames, 0)
        XCTAssertEqual(statistics.invalid, 0)
        // The recovered frame carries the tone (FEC is coarser than the packet, but not silence).
        let recovered = left[(51 * 480)..<(52 * 480)]
        XCTAssertGreaterThan(recovered.map(abs).max()!, 0.3)
    }

    func testWithoutFECTheDecoderConcealsTheLostPacket() throws {
        let (statistics, left) = try play(settings: .lan, packets: 200, dropped: [100, 150, 151])
        XCTAssertEqual(statistics.lost, 3)
        XCTAssertEqual(statistics.concealedFrames, 3 * 240)
        XCTAssertEqual(statistics.fecRecoveredFrames, 0)
        // Concealment continues the tone rather than going silent.
        let concealed = left[(101 * 240)..<(102 * 240)]
        XCTAssertGreaterThan(concealed.map(abs).max()!, 0.2)
    }

    func testAPacketThatDoesNotDecodeIsCountedAndConcealed() throws {
        let (statistics, _) = try play(settings: .lan, packets: 100, corrupted: [40])
        XCTAssertEqual(statistics.invalid, 1)
        XCTAssertEqual(statistics.concealedFrames, 240)
        XCTAssertEqual(statistics.received, 100)
    }
}
