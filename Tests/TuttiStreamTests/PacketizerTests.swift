import TuttiCodec
import TuttiCore
import TuttiStream
import TuttiWire
import XCTest

/// The sending end: packet boundaries, header fields and capture times, whatever the period size.
final class PacketizerTests: XCTestCase {
    let format = StreamFormat(sampleRate: 48_000, channels: 2, sampleFormat: .l24, packetFrames: 64, targetLatencyFrames: 240)

    private struct Captured {
        var view: RTPPacketView
        var bytes: [UInt8]
        var samples: [Float]
    }

    /// Feeds `totalFrames` of the counter signal in periods of the given sizes (cycled), capturing every datagram.
    private func packetize(
        periods: [Int], totalFrames: Int, initialSequenceNumber: UInt16 = 0, initialTimestamp: UInt32 = 0,
        captureBase: Int64 = 1_000_000_000_000, format: StreamFormat? = nil
    ) -> (packets: [Captured], periodStarts: [Int], final: (sequenceNumber: UInt16, timestamp: UInt32, packetsSent: UInt64)) {
        let format = format ?? self.format
        var packetizer = Packetizer(
            format: format, payloadType: 101, ssrc: 0xABCD_EF01, initialSequenceNumber: initialSequenceNumber,
            initialTimestamp: initialTimestamp)
        var packets: [Captured] = []
        var periodStarts: [Int] = []
        var frame = 0
        var periodIndex = 0
        while frame < totalFrames {
            let count = min(periods[periodIndex % periods.count], totalFrames - frame)
            periodIndex += 1
            periodStarts.append(frame)
            let samples = CounterSignal.samples(frames: frame..<(frame + count), channels: format.channels)
            let captureTime = captureBase + Int64(frame) * 1_000_000_000 / Int64(format.sampleRate)
            samples.withUnsafeBufferPointer { buffer in
                packetizer.append(buffer, frames: count, captureTime: captureTime) { datagram in
                    let view = try! RTPPacketView.decode(datagram)
                    var decoded = [Float](repeating: .nan, count: format.samplesPerPacket)
                    XCTAssertEqual(view.payloadCount, format.payloadBytes)
                    decoded.withUnsafeMutableBufferPointer {
                        PCMCodec.decode(
                            UnsafeRawBufferPointer(rebasing: datagram[view.payloadOffset...]), as: format.sampleFormat, into: $0)
                    }
                    packets.append(Captured(view: view, bytes: Array(datagram), samples: decoded))
                }
            }
            frame += count
        }
        return (packets, periodStarts, (packetizer.sequenceNumber, packetizer.timestamp, packetizer.packetsSent))
    }

    func testSequenceAndTimestampIncrementAcrossWrap() {
        let (packets, _, packetizer) = packetize(
            periods: [64], totalFrames: 64 * 20, initialSequenceNumber: 0xFFF8, initialTimestamp: 0xFFFF_FE00)
        XCTAssertEqual(packets.count, 20)
        for (index, packet) in packets.enumerated() {
            XCTAssertEqual(packet.view.header.sequenceNumber, 0xFFF8 &+ UInt16(index))
            XCTAssertEqual(packet.view.header.timestamp, 0xFFFF_FE00 &+ UInt32(index * 64))
            XCTAssertEqual(packet.view.header.ssrc, 0xABCD_EF01)
            XCTAssertEqual(packet.view.header.payloadType, 101)
            XCTAssertEqual(packet.view.header.marker, index == 0, "marker only on the first packet")
        }
        XCTAssertEqual(packetizer.sequenceNumber, 0xFFF8 &+ 20)
        XCTAssertEqual(packetizer.timestamp, 0xFFFF_FE00 &+ 20 * 64)
        XCTAssertEqual(packetizer.packetsSent, 20)
    }

    func testPeriodsNotAlignedWithPacketsCarryTheExactSignal() {
        for periods in [[48], [100], [7], [64], [1_000], [1, 63, 65, 200, 3]] {
            let (packets, _, packetizer) = packetize(periods: periods, totalFrames: 64 * 31 + 17)
            XCTAssertEqual(packets.count, 31, "\(periods)")
            XCTAssertEqual(packetizer.packetsSent, 31)
            for (index, packet) in packets.enumerated() {
                let expected = CounterSignal.samples(frames: (index * 64)..<((index + 1) * 64), channels: 2)
                XCTAssertEqual(packet.samples, expected, "periods \(periods) packet \(index)")
            }
        }
    }

    func testCaptureTimeIsThatOfEachPacketsFirstFrame() {
        let base: Int64 = 1_000_000_000_000
        for periods in [[48], [100], [7, 90]] {
            let (packets, periodStarts, _) = packetize(periods: periods, totalFrames: 64 * 40, captureBase: base)
            for (index, packet) in packets.enumerated() {
                let firstFrame = index * 64
                // The packet's first frame lies in the last period that started at or before it.
                let periodStart = periodStarts.last { $0 <= firstFrame }!
                let periodCapture = base + Int64(periodStart) * 1_000_000_000 / 48_000
                let expected = periodCapture + Int64(firstFrame - periodStart) * 1_000_000_000 / 48_000
                XCTAssertEqual(packet.view.header.captureTime, expected, "periods \(periods) packet \(index)")
                // Within the two nanosecond truncations (the period's capture time, the offset) of the ideal time.
                XCTAssertEqual(Double(expected - base), Double(firstFrame) * 1e9 / 48_000, accuracy: 2)
            }
        }
    }

    func testNoPacketUntilFullAndDatagramSize() {
        var packetizer = Packetizer(format: format, payloadType: 96, ssrc: 1, initialSequenceNumber: 0, initialTimestamp: 0)
        XCTAssertEqual(packetizer.maxDatagramBytes, 12 + 16 + 64 * 2 * 3)
        var sizes: [Int] = []
        let samples = [Float](repeating: 0.25, count: 63 * 2)
        samples.withUnsafeBufferPointer { buffer in
            packetizer.append(buffer, frames: 63, captureTime: 0) { sizes.append($0.count) }
        }
        XCTAssertEqual(sizes, [])
        XCTAssertEqual(packetizer.packetsSent, 0)
        samples.withUnsafeBufferPointer { buffer in
            packetizer.append(buffer, frames: 1, captureTime: 0) { sizes.append($0.count) }
        }
        XCTAssertEqual(sizes, [packetizer.maxDatagramBytes])
        // Zero frames is a no-op.
        samples.withUnsafeBufferPointer { buffer in
            packetizer.append(buffer, frames: 0, captureTime: 0) { sizes.append($0.count) }
        }
        XCTAssertEqual(sizes.count, 1)
    }

    func testL16MonoPayload() {
        let mono = StreamFormat(sampleRate: 8_000, channels: 1, sampleFormat: .l16, packetFrames: 16, targetLatencyFrames: 64)
        let (packets, _, _) = packetize(periods: [10], totalFrames: 32, format: mono)
        XCTAssertEqual(packets.count, 2)
        XCTAssertEqual(packets[0].view.payloadCount, 32)
        XCTAssertEqual(packets[0].bytes.count, 12 + 16 + 32)
        XCTAssertEqual(packets[1].view.header.timestamp, 16)
        // Capture times at 8 kHz: 125 µs per frame.
        XCTAssertEqual(packets[1].view.header.captureTime! - packets[0].view.header.captureTime!, 16 * 125_000)
    }
}
