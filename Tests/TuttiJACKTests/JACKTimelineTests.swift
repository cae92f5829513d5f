import TuttiCore
import TuttiJACK
import XCTest

/// The JACK client's timeline with injected frame counters and cycle starts (no server, no clock): what a
/// jitter buffer's drift compensation sees through it when the server is steady, jittery, slow, stalls,
/// or when the client misses cycles.
final class JACKTimelineTests: XCTestCase {
    static let rate = 48_000
    static let frames = 64
    /// Exact nanoseconds of `count` frames at 48 kHz.
    static func nanoseconds(frames count: Int64) -> Int64 { count * 1_000_000_000 / Int64(rate) }

    /// A server's cycles: cycle `n` starts at `start(n)` with the frame counter at `counter(n)`; the client
    /// wakes `wakeDelay` later. Returns the timeline's answers.
    final class Server {
        var timeline = JACKTimeline(sampleRate: JACKTimelineTests.rate)
        var cycles: [JACKTimeline.Cycle] = []

        func run(counter: UInt32, start: Int64, wakeDelay: Int64 = 30_000) -> JACKTimeline.Cycle {
            let cycle = timeline.advance(
                frameCounter: counter, cycleStart: HostTime(nanoseconds: start), wake: HostTime(nanoseconds: start + wakeDelay),
                frames: JACKTimelineTests.frames, sampleRate: JACKTimelineTests.rate)
            cycles.append(cycle)
            return cycle
        }
    }

    func testSteadyJitteryCyclesGiveTheExactTimelineWithinMicroseconds() {
        // Cycle starts jitter by up to ±100 µs (a deterministic pattern); the fitted start of every cycle after
        // the first second stays within 10 µs of the true one, and consecutive cycles abut within 2 µs (the
        // line moves a little with each new observation).
        let server = Server()
        let origin: Int64 = 5_000_000_000
        for n in 0..<2_000 {
            let frame = Int64(n * Self.frames)
            let jitter = Int64((n * 7_919) % 201 - 100) * 1_000
            let cycle = server.run(counter: UInt32(1_000 + frame), start: origin + Self.nanoseconds(frames: frame) + jitter)
            XCTAssertEqual(cycle.skippedFrames, 0)
            XCTAssertFalse(cycle.late)
            if n >= 750 {
                XCTAssertEqual(
                    Double(cycle.start.nanoseconds), Double(origin + Self.nanoseconds(frames: frame)), accuracy: 10_000, "cycle \(n)")
            }
            if n >= 750 {
                XCTAssertEqual(Double(server.cycles[n - 1].end.nanoseconds), Double(cycle.start.nanoseconds), accuracy: 2_000)
            }
        }
        XCTAssertEqual(server.timeline.missedCycles, 0)
        XCTAssertEqual(server.timeline.stalls, 0)
        XCTAssertEqual(server.timeline.rebases, 0)
    }

    func testAServerRunningSlowIsFollowedAtItsRealRate() {
        // 1,000 ppm slow (a dummy backend losing time evenly): after the line has settled the host time of each
        // cycle is the real one, not the nominal 1.333 ms apart, so a play head's host time keeps pace with
        // packet arrivals on the host clock.
        let server = Server()
        let period = Double(Self.nanoseconds(frames: Int64(Self.frames))) * 1.001
        for n in 0..<1_500 {
            let start = 1_000_000_000 + Int64((Double(n) * period).rounded())
            let cycle = server.run(counter: UInt32(n * Self.frames), start: start)
            if n >= 600 { XCTAssertEqual(Double(cycle.start.nanoseconds), Double(start), accuracy: 2_000, "cycle \(n)") }
        }
    }

    func testAnEarlyReadOfTheNextCycleIsNotAMissedCycle() {
        // A late callback reads the next cycle's counter (and start), then the following callback reads the
        // same cycle again: the client ran as many callbacks as the server ran cycles, nothing to catch up.
        let server = Server()
        var n = 0
        func start(_ cycle: Int) -> Int64 { 2_000_000_000 + Self.nanoseconds(frames: Int64(cycle * Self.frames)) }
        while n < 100 {
            _ = server.run(counter: UInt32(n * Self.frames), start: start(n))
            n += 1
        }
        let early = server.run(counter: UInt32((n + 1) * Self.frames), start: start(n + 1), wakeDelay: 200_000)
        let again = server.run(counter: UInt32((n + 1) * Self.frames), start: start(n + 1))
        let next = server.run(counter: UInt32((n + 2) * Self.frames), start: start(n + 2))
        XCTAssertEqual([early.skippedFrames, again.skippedFrames, next.skippedFrames], [0, 0, 0])
        // The times run on by the client's own frames: no cycle stamped twice.
        XCTAssertEqual(early.end, again.start)
        XCTAssertEqual(again.end, next.start)
        XCTAssertEqual(Double(next.start.nanoseconds), Double(start(n + 2)), accuracy: 1_000)
        XCTAssertEqual(server.timeline.missedCycles, 0)
    }

    func testAMissedCycleIsCaughtUpOnTheNextCallback() {
        let server = Server()
        func start(_ cycle: Int) -> Int64 { 3_000_000_000 + Self.nanoseconds(frames: Int64(cycle * Self.frames)) }
        for n in 0..<100 { _ = server.run(counter: UInt32(n * Self.frames), start: start(n)) }
        // Cycle 100 never reaches the client; it runs cycle 101, then 102.
        let first = server.run(counter: UInt32(101 * Self.frames), start: start(101))
        XCTAssertEqual(first.skippedFrames, 0, "one cycle ahead once may be an early read")
        let second = server.run(counter: UInt32(102 * Self.frames), start: start(102))
        XCTAssertEqual(second.skippedFrames, Self.frames)
        // The frames after the catch-up are where the server's are: cycle 102's start.
        XCTAssertEqual(Double(second.start.nanoseconds), Double(start(102)), accuracy: 1_000)
        let third = server.run(counter: UInt32(103 * Self.frames), start: start(103))
        XCTAssertEqual(third.skippedFrames, 0)
        XCTAssertEqual(second.end, third.start)
        XCTAssertEqual(server.timeline.missedCycles, 1)
    }

    func testAServerStallIsCaughtUpInWholeCyclesSoTheTimelineStaysOnTheHostClock() {
        // The dummy backend wakes late and re-anchors: every later cycle starts 5.58 ms (4 cycles and 0.25 ms)
        // after where the frame counter puts it. After eight such cycles the timeline counts the 4 whole cycles
        // (256 frames) as frames to catch up, so the client's frames keep their host times: cycle n's audio
        // starts at its real (stalled) time, within the 0.25 ms the line then absorbs, and within 20 µs once it has.
        let server = Server()
        let stall: Int64 = 4 * Self.nanoseconds(frames: 64) + 250_000
        func start(_ cycle: Int) -> Int64 {
            3_000_000_000 + Self.nanoseconds(frames: Int64(cycle * Self.frames)) + (cycle >= 500 ? stall : 0)
        }
        var caughtUp = 0
        for n in 0..<1_600 {
            let cycle = server.run(counter: UInt32(n * Self.frames), start: start(n))
            caughtUp += cycle.skippedFrames
            XCTAssertEqual(cycle.skippedFrames % Self.frames, 0)
            if n > 100 {
                // The caught-up frames run from the previous cycle's end to this one's start.
                let caughtUpStart = cycle.start.nanoseconds - Self.nanoseconds(frames: Int64(cycle.skippedFrames))
                XCTAssertEqual(Double(server.cycles[n - 1].end.nanoseconds), Double(caughtUpStart), accuracy: 20_000, "cycle \(n)")
            }
            if n >= 510 {
                XCTAssertEqual(Double(cycle.start.nanoseconds), Double(start(n)), accuracy: n >= 1_100 ? 20_000 : 300_000, "cycle \(n)")
            }
        }
        XCTAssertEqual(caughtUp, 256)
        XCTAssertEqual(server.timeline.stalls, 1)
        XCTAssertEqual(server.timeline.missedCycles, 0)
        XCTAssertEqual(server.timeline.rebases, 0)
    }

    func testWhatStallsLeaveUnderACycleIsCarriedSoCatchUpsFollowTheLostTime() {
        // Three stalls of 2.4 cycles each (3.2 ms, 1.5 s apart): rounding each alone would catch up 2 + 2 + 2
        // cycles and lose 1.2 cycles for good (a timeline running slow, which a receiver's level estimate turns
        // into a bias); carried over, the catch-ups are 2, 3 and 2 cycles: 7 of the 7.2 lost.
        let server = Server()
        let stall = Int64((2.4 * Double(Self.nanoseconds(frames: 64))).rounded())
        func start(_ cycle: Int) -> Int64 {
            let stalls = Int64([500, 1_600, 2_700].filter { cycle >= $0 }.count)
            return 3_000_000_000 + Self.nanoseconds(frames: Int64(cycle * Self.frames)) + stalls * stall
        }
        var caughtUp: [Int] = []
        for n in 0..<3_400 {
            let cycle = server.run(counter: UInt32(n * Self.frames), start: start(n))
            if cycle.skippedFrames > 0 { caughtUp.append(cycle.skippedFrames) }
        }
        XCTAssertEqual(caughtUp, [128, 192, 128])
        XCTAssertEqual(server.timeline.stalls, 3)
    }

    func testASingleLateCycleIsJitterNotAStall() {
        // One cycle starts 4 ms late, the next ones are back on time (the server caught up without an xrun).
        let server = Server()
        func start(_ cycle: Int) -> Int64 {
            1_000_000_000 + Self.nanoseconds(frames: Int64(cycle * Self.frames)) + (cycle == 300 || cycle == 301 ? 4_000_000 : 0)
        }
        for n in 0..<600 {
            let cycle = server.run(counter: UInt32(n * Self.frames), start: start(n))
            XCTAssertEqual(cycle.skippedFrames, 0)
            if n >= 100 {
                XCTAssertEqual(
                    Double(cycle.start.nanoseconds), Double(1_000_000_000 + Self.nanoseconds(frames: Int64(n * Self.frames))),
                    accuracy: 5_000)
            }
        }
        XCTAssertEqual(server.timeline.stalls, 0)
    }

    func testAStallLongerThanTheCatchUpLimitStartsTheLineAgain() {
        let server = Server()
        func start(_ cycle: Int) -> Int64 {
            1_000_000_000 + Self.nanoseconds(frames: Int64(cycle * Self.frames)) + (cycle >= 200 ? 300_000_000 : 0)
        }
        for n in 0..<400 {
            let cycle = server.run(counter: UInt32(n * Self.frames), start: start(n))
            XCTAssertEqual(cycle.skippedFrames, 0, "300 ms is not caught up")
            if n >= 208 { XCTAssertEqual(Double(cycle.start.nanoseconds), Double(start(n)), accuracy: 50_000, "cycle \(n)") }
        }
        XCTAssertEqual(server.timeline.rebases, 1)
        XCTAssertEqual(server.timeline.stalls, 0)
    }

    func testAFrameCounterJumpWithoutElapsedTimeIsNotCaughtUp() {
        // jackd2's xrun path can add microseconds to the frame counter as if they were frames: the counter jumps
        // 4,992 frames while one cycle's time passes. Nothing is caught up; times go on.
        let server = Server()
        func start(_ cycle: Int) -> Int64 { 1_000_000_000 + Self.nanoseconds(frames: Int64(cycle * Self.frames)) }
        for n in 0..<200 { _ = server.run(counter: UInt32(n * Self.frames), start: start(n)) }
        for n in 200..<260 {
            let cycle = server.run(counter: UInt32(n * Self.frames + 4_992), start: start(n))
            XCTAssertEqual(cycle.skippedFrames, 0)
            XCTAssertEqual(Double(cycle.start.nanoseconds), Double(start(n)), accuracy: 2_000, "cycle \(n)")
        }
        XCTAssertEqual(server.timeline.rebases, 1)
        XCTAssertEqual(server.timeline.missedCycles, 0)
    }

    func testTheFrameCounterWrapsAt32Bits() {
        let server = Server()
        let first = UInt32.max - 63 - 100 * 64
        for n in 0..<300 {
            let cycle = server.run(
                counter: first &+ UInt32(n * Self.frames), start: 1_000_000_000 + Self.nanoseconds(frames: Int64(n * Self.frames)))
            XCTAssertEqual(cycle.skippedFrames, 0)
            XCTAssertEqual(
                Double(cycle.start.nanoseconds), Double(1_000_000_000 + Self.nanoseconds(frames: Int64(n * Self.frames))), accuracy: 1_000)
        }
        XCTAssertEqual(server.timeline.rebases, 0)
    }

    func testLateWakeUpsAreCounted() {
        let server = Server()
        for n in 0..<50 {
            let late = n == 40
            let cycle = server.run(
                counter: UInt32(n * Self.frames), start: 1_000_000_000 + Self.nanoseconds(frames: Int64(n * Self.frames)),
                wakeDelay: late ? 2_500_000 : 50_000)
            XCTAssertEqual(cycle.late, late, "cycle \(n)")
        }
    }

    func testChunksOfACycleAbut() {
        let start = HostTime(nanoseconds: 1_000_000_000)
        let end = HostTime(nanoseconds: 1_005_333_333)
        XCTAssertEqual(JACKTimeline.hostTime(atFrameOffset: 0, frames: 256, start: start, end: end), start)
        XCTAssertEqual(JACKTimeline.hostTime(atFrameOffset: 256, frames: 256, start: start, end: end), end)
        XCTAssertEqual(JACKTimeline.hostTime(atFrameOffset: 128, frames: 256, start: start, end: end).nanoseconds, 1_002_666_666)
        // Before the cycle (frames being caught up) it extrapolates.
        XCTAssertEqual(JACKTimeline.hostTime(atFrameOffset: -64, frames: 256, start: start, end: end).nanoseconds, 998_666_667)
        XCTAssertEqual(JACKTimeline.hostTime(atFrameOffset: 0, frames: 0, start: start, end: end), start)
    }
}
