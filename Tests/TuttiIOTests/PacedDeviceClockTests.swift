#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import TuttiCore
import TuttiIO
import XCTest

/// A paced clock that wakes late catches up on the missed periods, so its timeline stays whole; only a
/// stall of more than 100 ms makes it skip periods, and it counts them. It also counts its own late
/// wake-ups (later than half a period), and keeps the latest's lateness.
final class PacedDeviceClockTests: XCTestCase {
    /// What the clock's handler records: the period times it was given, and where it stalls.
    private final class Recorder: Sendable {
        let times = Mutex<[Int64]>([])
        let done = Atomic<Bool>(false)
        let periods: Int
        let stallMicroseconds: UInt32

        init(periods: Int, stall: Duration) {
            self.periods = periods
            stallMicroseconds = UInt32(stall.components.seconds * 1_000_000 + stall.components.attoseconds / 1_000_000_000_000)
        }

        static let handler: PacedDeviceClock.Handler = { context, periodTime, _ in
            let recorder = Unmanaged<Recorder>.fromOpaque(context!).takeUnretainedValue()
            let count = recorder.times.withLock { times in
                times.append(periodTime)
                return times.count
            }
            if count == 5 { usleep(recorder.stallMicroseconds) }
            if count >= recorder.periods { recorder.done.store(true, ordering: .relaxed) }
        }
    }

    /// Runs a 1 ms clock until it has called `process` `periods` times, stalling once inside the 5th call
    /// for `stall`; returns the period times it was given (ns), the overruns it counted, and its late wake-ups.
    private func run(periods: Int, stall: Duration) -> (times: [Int64], overruns: UInt64, lateWakes: UInt64, worstLateness: Int64) {
        let recorder = Recorder(periods: periods, stall: stall)
        let clock = PacedDeviceClock(
            name: "tutti-test", sampleRate: 48_000, periodFrames: 48, context: Unmanaged.passUnretained(recorder).toOpaque(),
            process: Recorder.handler)
        clock.start()
        while !recorder.done.load(ordering: .relaxed) { usleep(1_000) }
        clock.stop()
        return (
            recorder.times.withLock { Array($0.prefix(periods)) }, clock.overruns, clock.lateWakes,
            clock.worstWakeLatenessNanoseconds
        )
    }

    func testAShortStallIsCaughtUpWithoutLosingAPeriod() {
        let (times, overruns, lateWakes, worstLateness) = run(periods: 60, stall: .milliseconds(20))
        XCTAssertEqual(overruns, 0)
        let steps = zip(times.dropFirst(), times).map { $0 - $1 }
        XCTAssertEqual(Set(steps), [1_000_000], "every period follows the last by exactly 1 ms of stream time")
        // The periods caught up after the stall woke 19, 18, … ms late: at least 18 of them over half a period.
        XCTAssertGreaterThanOrEqual(lateWakes, 18)
        XCTAssertGreaterThanOrEqual(worstLateness, 19_000_000, "the first period after a 20 ms stall in the one before")
        XCTAssertLessThan(worstLateness, 1_000_000_000)
    }

    func testAStallOfMoreThan100MillisecondsSkipsAndCountsThePeriods() {
        let (times, overruns, _, _) = run(periods: 20, stall: .milliseconds(250))
        XCTAssertGreaterThan(overruns, 100)
        let steps = zip(times.dropFirst(), times).map { $0 - $1 }
        XCTAssertEqual(steps.filter { $0 != 1_000_000 }.count, 1, "one jump in stream time, after the stall")
        XCTAssertEqual(steps.max(), Int64(overruns + 1) * 1_000_000)
    }

    /// A handler that asks, in its 3rd period, for the next to come 12 frames (250 µs) later, and in its 6th
    /// for the next to come 24 frames (500 µs) earlier.
    private final class DelayingRecorder: @unchecked Sendable {
        let times = Mutex<[Int64]>([])
        let done = Atomic<Bool>(false)
        var clock: PacedDeviceClock?

        static let handler: PacedDeviceClock.Handler = { context, periodTime, _ in
            let recorder = Unmanaged<DelayingRecorder>.fromOpaque(context!).takeUnretainedValue()
            let count = recorder.times.withLock { times in
                times.append(periodTime)
                return times.count
            }
            if count == 3 { recorder.clock?.moveNextPeriod(byFrames: 12) }
            if count == 6 { recorder.clock?.moveNextPeriod(byFrames: -24) }
            if count >= 10 { recorder.done.store(true, ordering: .relaxed) }
        }
    }

    func testAMoveShiftsEveryLaterPeriodByExactlyThatManyFrames() {
        let recorder = DelayingRecorder()
        let clock = PacedDeviceClock(
            name: "tutti-test", sampleRate: 48_000, periodFrames: 48, context: Unmanaged.passUnretained(recorder).toOpaque(),
            process: DelayingRecorder.handler)
        recorder.clock = clock
        clock.start()
        while !recorder.done.load(ordering: .relaxed) { usleep(1_000) }
        clock.stop()
        recorder.clock = nil
        let times = recorder.times.withLock { Array($0.prefix(10)) }
        let steps = zip(times.dropFirst(), times).map { $0 - $1 }
        XCTAssertEqual(
            steps, [1_000_000, 1_000_000, 1_250_000, 1_000_000, 1_000_000, 500_000, 1_000_000, 1_000_000, 1_000_000],
            "one period 12 frames longer, a later one 24 shorter")
    }
}
