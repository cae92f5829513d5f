import TuttiCore
import TuttiStream
import TuttiWire
import XCTest

/// Synchronized playout: every receiver plays each frame at its capture time plus a fixed latency on the
/// shared clock, whatever its own network delay and device phase.
final class JitterBufferSynchronizedPlayoutTests: XCTestCase {
    private let rate = 48_000
    private let latency: Int64 = 20_000_000  // 20 ms

    private var format: StreamFormat {
        StreamFormat(
            sampleRate: rate, channels: 1, sampleFormat: .l24, packetFrames: 64, targetLatencyFrames: 960,
            synchronizedLatencyNanoseconds: latency)
    }

    private func nanoseconds(frames: Int64) -> Int64 { frames * 1_000_000_000 / Int64(rate) }

    /// Streams a ramp (sample value = frame index / 2^23) captured from time 0, delivered `delay` ns after
    /// capture, read every `period` frames starting at `readPhase` ns; returns (read time, first frame played)
    /// for every read that played audio.
    private func play(delay: Int64, readPhase: Int64, period: Int = 48, seconds: Int = 2) -> [(time: Int64, frame: Int64, captured: Int64)]
    {
        var buffer = JitterBuffer(format: format)
        var packetizer = Packetizer(
            format: format, payloadType: 96, ssrc: 1, initialSequenceNumber: 65_000, initialTimestamp: 4_294_960_000)
        var datagrams: [(arrival: Int64, bytes: [UInt8])] = []
        let totalFrames = rate * seconds
        var samples = [Float](repeating: 0, count: 64)
        for start in stride(from: 0, to: totalFrames, by: 64) {
            for index in 0..<64 { samples[index] = Float(start + index) / 8_388_608 }
            let captured = nanoseconds(frames: Int64(start))
            samples.withUnsafeBufferPointer { pointer in
                packetizer.append(pointer, frames: 64, captureTime: captured) { datagrams.append((captured + delay, Array($0))) }
            }
        }
        var results: [(Int64, Int64, Int64)] = []
        var next = 0
        let output = UnsafeMutableBufferPointer<Float>.allocate(capacity: period)
        defer { output.deallocate() }
        var time = readPhase
        while time < nanoseconds(frames: Int64(totalFrames)) {
            while next < datagrams.count, datagrams[next].arrival <= time {
                datagrams[next].bytes.withUnsafeBytes { raw in
                    let view = try! RTPPacketView.decode(raw)
                    _ = buffer.insert(
                        sequenceNumber: view.header.sequenceNumber, timestamp: view.header.timestamp,
                        captureTime: view.header.captureTime, arrival: HostTime(nanoseconds: datagrams[next].arrival),
                        payload: UnsafeRawBufferPointer(rebasing: raw[view.payloadOffset..<(view.payloadOffset + view.payloadCount)]))
                }
                next += 1
            }
            let captured = buffer.read(into: output, frames: period, now: HostTime(nanoseconds: time), captureClockNow: time)
            // Past the fade-in, the ramp tells which frame plays.
            if output[period - 1] > 0 {
                let frame = Int64((output[period - 1] * 8_388_608).rounded()) - Int64(period - 1)
                results.append((time, frame, captured))
            }
            time += nanoseconds(frames: Int64(period))
        }
        return results
    }

    func testEachFramePlaysAtItsCaptureTimePlusTheLatency() {
        let reads = play(delay: 3_000_000, readPhase: 0)
        XCTAssertGreaterThan(reads.count, 1_000)
        for (time, frame, captured) in reads.dropFirst() {
            let due = time - latency
            XCTAssertLessThanOrEqual(abs(nanoseconds(frames: frame) - due), nanoseconds(frames: 1), "read at \(time)")
            // Each buffer comes with its capture time (latency compensation).
            XCTAssertLessThanOrEqual(abs(captured - nanoseconds(frames: frame)), 1, "read at \(time)")
        }
    }

    func testTwoReceiversWithDifferentDelaysAndPhasesPlayTheSameFrameTogether() {
        let near = play(delay: 1_000_000, readPhase: 0)
        let far = play(delay: 9_000_000, readPhase: 270_833)  // 13 frames out of phase
        // At any instant, both play the frame captured `latency` earlier: compare through the shared clock.
        func frame(at time: Int64, in reads: [(time: Int64, frame: Int64, captured: Int64)]) -> Double? {
            guard let index = reads.lastIndex(where: { $0.time <= time }), index > 0 else { return nil }
            let read = reads[index]
            return Double(read.frame) + Double(time - read.time) * Double(rate) / 1e9
        }
        var compared = 0
        for time in stride(from: Int64(200_000_000), to: 1_900_000_000, by: 7_000_000) {
            guard let a = frame(at: time, in: near), let b = frame(at: time, in: far) else { continue }
            XCTAssertLessThanOrEqual(abs(a - b), 1.01, "at \(time) ns")
            compared += 1
        }
        XCTAssertGreaterThan(compared, 200)
    }
}
