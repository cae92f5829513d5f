import TuttiCore
import TuttiStream
import TuttiTesting
import TuttiWire
import XCTest

/// Streams from one remote device clock share one drift estimate (`DriftGroup`): one leads, the others
/// apply its correction, a leader that goes hands over, and a stream that does not follow that clock leaves.
final class DriftGroupTests: XCTestCase {
    private let format = StreamFormat(sampleRate: 48_000, channels: 2, sampleFormat: .l24, packetFrames: 64, targetLatencyFrames: 240)
    private let read = 64

    /// One simulated stream: its packets with their arrival times on the receiver's clock, and its receiver.
    private final class Stream {
        let packets: [SentPacket]
        let arrivals: [Int64]
        var receiver: StreamReceiver?
        var next = 0

        /// `jitter`: each packet after the first comes up to that many frames late (seeded by `seed`).
        init(packets: [SentPacket], driftPPM: Double, jitter: Int64 = 0, seed: UInt64 = 1, receiver: StreamReceiver) {
            self.packets = packets
            var generator = SeededGenerator(seed: seed)
            // A sender fast by `driftPPM` sends its frame f at receiver frame f / (1 + drift).
            let sent = packets.map { Int64((Double($0.sendFrame) / (1 + driftPPM * 1e-6)).rounded()) }
            arrivals = sent.enumerated().map { index, frame in
                index == 0 || jitter == 0 ? frame : frame + Int64.random(in: 0...jitter, using: &generator)
            }
            self.receiver = receiver
        }
    }

    private func receiver() -> StreamReceiver {
        StreamReceiver(format: format, ssrc: 0x1234_5678, payloadType: 96, maxPeriodFrames: read, driftCompensation: true)
    }

    /// The receiver clock's next period (frames).
    private var frame: Int64 = 0

    /// Plays `streams` on one receiver clock up to `seconds`; `atFrame` runs once per period before the reads.
    private func play(_ streams: [Stream], seconds: Int, atFrame: (Int64) -> Void = { _ in }) {
        let end = Int64(seconds * format.sampleRate)
        if frame == 0 { frame = streams.map { $0.arrivals[0] }.min()! }
        while frame < end {
            atFrame(frame)
            for stream in streams {
                guard let receiver = stream.receiver else { continue }
                while stream.next < stream.packets.count, stream.arrivals[stream.next] <= frame {
                    stream.packets[stream.next].bytes.withUnsafeBytes { raw in
                        _ = receiver.accept(
                            datagram: raw, arrival: HostTime(frames: stream.arrivals[stream.next], sampleRate: format.sampleRate))
                    }
                    stream.next += 1
                }
                let now = HostTime(frames: frame, sampleRate: format.sampleRate)
                receiver.render(frames: read, now: now, captureClockNow: now.nanoseconds)
            }
            frame += Int64(read)
        }
    }

    private func packets(seconds: Int) -> [SentPacket] {
        makePackets(format: format, packetCount: seconds * format.sampleRate / format.packetFrames + 200, senderPeriod: 64)
    }

    private func assertClean(_ receiver: StreamReceiver, _ name: String, file: StaticString = #filePath, line: UInt = #line) {
        let statistics = receiver.snapshot().statistics
        XCTAssertEqual(statistics.lost, 0, "\(name): lost", file: file, line: line)
        XCTAssertEqual(statistics.late, 0, "\(name): late", file: file, line: line)
        XCTAssertEqual(statistics.underruns, 0, "\(name): underruns", file: file, line: line)
    }

    func testTwoStreamsOfOneClockShareTheLeadersCorrectionAndTheEstimateIsTheClocksDrift() throws {
        let group = DriftGroup()
        let sent = packets(seconds: 40)
        // The same clock, different networks: each stream's own controller would settle on its own ratio.
        let streams = [
            Stream(packets: sent, driftPPM: 300, jitter: 40, seed: 1, receiver: receiver()),
            Stream(packets: sent, driftPPM: 300, jitter: 120, seed: 2, receiver: receiver()),
        ]
        for stream in streams { stream.receiver!.joinDriftGroup(group) }
        play(streams, seconds: 40)

        let receivers = streams.map { $0.receiver! }
        XCTAssertEqual(receivers.filter(\.leadsItsDriftGroup).count, 1, "one leader")
        for (index, receiver) in receivers.enumerated() {
            assertClean(receiver, "stream \(index)")
            let figures = try XCTUnwrap(receiver.driftFigures())
            XCTAssertEqual(figures.partsPerMillion, 300, accuracy: 30, "stream \(index): the clock's drift")
            XCTAssertEqual(receiver.driftGroupLeaves, 0)
        }
        let leader = receivers.first(where: \.leadsItsDriftGroup)!
        let follower = receivers.first(where: { !$0.leadsItsDriftGroup })!
        XCTAssertEqual(receivers.map(\.driftGroupRole).filter { $0 == .leads }.count, 1)
        XCTAssertEqual(receivers.map(\.driftGroupRole).filter { $0 == .follows }.count, receivers.count - 1)
        XCTAssertEqual(
            follower.driftFigures()!.ratio, leader.driftFigures()!.ratio,
            "after the same period, the follower applies exactly the leader's correction")
    }

    func testWhenTheLeaderGoesTheFollowerLeadsOnWithoutADropout() throws {
        let group = DriftGroup()
        let sent = packets(seconds: 40)
        let streams = [
            Stream(packets: sent, driftPPM: -250, receiver: receiver()), Stream(packets: sent, driftPPM: -250, receiver: receiver()),
        ]
        for stream in streams { stream.receiver!.joinDriftGroup(group) }
        var departed = false
        play(streams, seconds: 40) { frame in
            guard !departed, frame >= 20 * 48_000 else { return }
            departed = true
            let leader = streams.first { $0.receiver?.leadsItsDriftGroup == true }!
            leader.receiver = nil  // the connection goes: its receiver is released
            XCTAssertFalse(group.hasLeader, "the leaving leader handed the group on")
        }
        let remaining = try XCTUnwrap(streams.compactMap(\.receiver).first)
        XCTAssertTrue(departed)
        XCTAssertTrue(remaining.leadsItsDriftGroup, "the follower took over")
        assertClean(remaining, "the remaining stream")
        XCTAssertEqual(try XCTUnwrap(remaining.driftFigures()).partsPerMillion, -250, accuracy: 30)
    }

    func testAStreamOfAnotherClockLeavesTheGroupAndHoldsItsOwnBuffer() throws {
        let group = DriftGroup()
        let sent = packets(seconds: 60)
        let leader = Stream(packets: sent, driftPPM: 300, receiver: receiver())
        let stranger = Stream(packets: sent, driftPPM: -300, receiver: receiver())
        leader.receiver!.joinDriftGroup(group)
        play([leader], seconds: 2)  // the leader leads
        stranger.receiver!.joinDriftGroup(group)
        stranger.next = stranger.arrivals.firstIndex { $0 >= frame - 96 } ?? 0  // it starts now
        play([leader, stranger], seconds: 60)

        XCTAssertTrue(leader.receiver!.leadsItsDriftGroup)
        XCTAssertEqual(stranger.receiver!.driftGroupLeaves, 1, "the stranger strayed under the shared correction and left")
        XCTAssertEqual(stranger.receiver!.driftGroupRole, .left)
        XCTAssertEqual(leader.receiver!.driftGroupRole, .leads)
        assertClean(leader.receiver!, "leader")
        assertClean(stranger.receiver!, "stranger")
        XCTAssertEqual(try XCTUnwrap(stranger.receiver!.driftFigures()).partsPerMillion, -300, accuracy: 30, "its own clock's drift")
    }
}
