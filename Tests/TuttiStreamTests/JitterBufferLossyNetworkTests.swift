import TuttiCore
import TuttiStream
import TuttiTesting
import TuttiWire
import XCTest

/// A whole stream through a seeded lossy network: the buffer's counters must match what the network did, and
/// every output frame must be the exact input frame or concealment.
final class JitterBufferLossyNetworkTests: XCTestCase {
    /// 20 ms target latency: comfortably above the network's worst extra delay (4 ms jitter + 3 ms hold-back).
    let format = StreamFormat(sampleRate: 48_000, channels: 2, sampleFormat: .l24, packetFrames: 64, targetLatencyFrames: 960)
    let period = 32

    func testCountersMatchWhatTheNetworkDid() {
        for seed: UInt64 in [1, 2, 0xDEC0DE] {
            runLossyStream(seed: seed, packetCount: 1_500)
        }
    }

    private func runLossyStream(seed: UInt64, packetCount: Int, file: StaticString = #filePath, line: UInt = #line) {
        let packets = makePackets(format: format, packetCount: packetCount, initialSequenceNumber: 0xFF00, senderPeriod: 40)
        var network = LossyNetwork(
            .init(
                baseDelay: .milliseconds(2), jitter: .milliseconds(4), lossProbability: 0.02, duplicationProbability: 0.01,
                reorderProbability: 0.05, reorderDelay: .milliseconds(3), cleanPrefix: 1, seed: seed))
        for packet in packets {
            network.send(packet.bytes, at: HostTime(frames: packet.sendFrame, sampleRate: 48_000))
        }
        let deliveries = network.deliver(upTo: HostTime(nanoseconds: .max))
        XCTAssertEqual(network.pending, 0)
        // Arrival times in frames, rounded up (so a packet is never seen before it arrived); order is kept.
        let schedule = deliveries.map { delivery in
            Arrival(
                index: delivery.index, bytes: delivery.bytes,
                arrivalFrame: (delivery.arrival.nanoseconds * 48_000 + 999_999_999) / 1_000_000_000)
        }

        // What the network did, as the receiver should see it.
        let dropped = Set(network.dropped)
        let lastDelivered = deliveries.map(\.index).max()!
        let expectedLost = dropped.filter { $0 < lastDelivered }.count  // trailing drops look like the stream's end
        var seen = Set<Int>()
        var highest = -1
        var expectedReordered = 0
        var accepted: [(arrivalFrame: Int64, timestamp: Int64)] = []
        for arrival in schedule where seen.insert(arrival.index).inserted {
            if arrival.index < highest { expectedReordered += 1 }
            highest = max(highest, arrival.index)
            accepted.append((arrival.arrivalFrame, Int64(50_000 + 64 * arrival.index)))
        }
        XCTAssertGreaterThan(dropped.count, 10, "seed \(seed)", file: file, line: line)
        XCTAssertGreaterThan(network.duplicated.count, 5, "seed \(seed)", file: file, line: line)
        XCTAssertGreaterThan(expectedReordered, 20, "seed \(seed)", file: file, line: line)

        var buffer = JitterBuffer(format: format)
        let leadIn = format.targetLatencyFrames - format.packetFrames
        let run = runPlayout(
            &buffer, arrivals: schedule, period: period,
            endFrame: schedule[0].arrivalFrame + Int64(leadIn + packetCount * 64 + 2 * period))
        XCTAssertEqual(run.results.count, deliveries.count, file: file, line: line)

        let statistics = run.final
        XCTAssertEqual(statistics.lost, UInt64(expectedLost), "seed \(seed)", file: file, line: line)
        XCTAssertEqual(statistics.duplicated, UInt64(network.duplicated.count), "seed \(seed)", file: file, line: line)
        XCTAssertEqual(statistics.reordered, UInt64(expectedReordered), "seed \(seed)", file: file, line: line)
        XCTAssertEqual(statistics.late, 0, "seed \(seed)", file: file, line: line)
        XCTAssertEqual(statistics.invalid, 0, "seed \(seed)", file: file, line: line)
        XCTAssertEqual(statistics.received, UInt64(packetCount - dropped.count), "seed \(seed)", file: file, line: line)
        XCTAssertEqual(statistics.resynchronizations, 1, "seed \(seed)", file: file, line: line)
        XCTAssertEqual(statistics.jitterFrames, referenceJitter(accepted, sampleRate: 48_000), accuracy: 1e-6, file: file, line: line)
        // Concealment: the lost packets, plus whatever the reads ran past the last packet.
        let played = leadIn + (lastDelivered + 1) * 64
        XCTAssertEqual(
            Int(statistics.concealedFrames), expectedLost * 64 + run.output.count / 2 - played, "seed \(seed)", file: file, line: line)

        let counts = assertPlayout(
            run.output[...], format: format, fadeFrames: buffer.fadeFrames, leadIn: leadIn, endPacket: packetCount,
            missing: dropped, file: file, line: line)
        XCTAssertEqual(counts.exact + counts.faded, (packetCount - dropped.count) * 64, file: file, line: line)
    }

    func testNetworkIsDeterministicForASeed() {
        func record(seed: UInt64) -> [String] {
            var network = LossyNetwork(
                .init(
                    jitter: .milliseconds(3), lossProbability: 0.1, duplicationProbability: 0.1, reorderProbability: 0.1,
                    reorderDelay: .milliseconds(2), seed: seed))
            for index in 0..<500 { network.send([UInt8(index & 0xFF)], at: HostTime(nanoseconds: Int64(index) * 1_333_333)) }
            return network.deliver(upTo: HostTime(nanoseconds: .max)).map { "\($0.index)@\($0.arrival.nanoseconds)" }
        }
        XCTAssertEqual(record(seed: 9), record(seed: 9))
        XCTAssertNotEqual(record(seed: 9), record(seed: 10))
    }

    func testNetworkDeliversInArrivalOrderAndRecordsWhatItDid() {
        var network = LossyNetwork(
            .init(
                baseDelay: .milliseconds(1), jitter: .milliseconds(5), lossProbability: 0.1, duplicationProbability: 0.1,
                reorderProbability: 0.1, reorderDelay: .milliseconds(4), cleanPrefix: 10, seed: 4))
        for index in 0..<2_000 { network.send([0], at: HostTime(nanoseconds: Int64(index) * 1_000_000)) }
        XCTAssertEqual(network.sentCount, 2_000)
        // Deliver in two installments: nothing arrives twice, nothing early.
        let early = network.deliver(upTo: HostTime(nanoseconds: 1_000_000_000))
        XCTAssertTrue(early.allSatisfy { $0.arrival.nanoseconds <= 1_000_000_000 })
        let late = network.deliver(upTo: HostTime(nanoseconds: .max))
        let all = early + late
        XCTAssertEqual(all.map(\.arrival), all.map(\.arrival).sorted())
        XCTAssertEqual(all.count, 2_000 - network.dropped.count + network.duplicated.count)
        XCTAssertEqual(all.filter(\.isExtraCopy).map(\.index).sorted(), network.duplicated)
        XCTAssertTrue(network.dropped.allSatisfy { $0 >= 10 })
        XCTAssertTrue(all.filter { $0.index < 10 }.allSatisfy { $0.arrival - $0.sent == .milliseconds(1) })
        for delivery in all where !network.heldBack.contains(delivery.index) || delivery.isExtraCopy {
            let delay = delivery.arrival - delivery.sent
            XCTAssertTrue(delay >= .milliseconds(1) && delay <= .milliseconds(6), "\(delay)")
        }
        XCTAssertEqual(Set(network.dropped).intersection(all.map(\.index)), [])
    }
}
