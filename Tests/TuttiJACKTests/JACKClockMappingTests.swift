import TuttiCore
import TuttiJACK
import XCTest

/// JACK time → host time, with injected clock readings and cycle times (no server).
final class JACKClockMappingTests: XCTestCase {
    func testAJACKClockThatIsTheHostClockMeasuresWithinAMicrosecond() {
        // The host clock truncated to microseconds: the reading lies within the host reads, less up to 999 ns.
        let mapping = JACKClockMapping.measure(
            jackMicroseconds: 5_000_123, hostBefore: HostTime(nanoseconds: 5_000_123_400), hostAfter: HostTime(nanoseconds: 5_000_125_900))
        XCTAssertEqual(mapping.offsetNanoseconds, 1_650)
        XCTAssertTrue(mapping.isHostClock)
        XCTAssertEqual(mapping.hostTime(ofJACKMicroseconds: 7_000_000), HostTime(nanoseconds: 7_000_001_650))
    }

    func testARawOrHPETClockIsMappedThroughTheMeasuredOffset() {
        // CLOCK_MONOTONIC_RAW 250 ms behind CLOCK_MONOTONIC (as measured on jackd2 1.9.21), or an HPET epoch.
        let raw = JACKClockMapping.measure(
            jackMicroseconds: 1_000_000_000, hostBefore: HostTime(nanoseconds: 1_000_250_000_000),
            hostAfter: HostTime(nanoseconds: 1_000_250_002_000))
        XCTAssertEqual(raw.offsetNanoseconds, 250_001_000)
        XCTAssertFalse(raw.isHostClock)
        XCTAssertEqual(raw.hostTime(ofJACKMicroseconds: 1_000_000_500), HostTime(nanoseconds: 1_000_250_501_000))
        // A JACK clock ahead of the host clock gives a negative offset.
        let ahead = JACKClockMapping.measure(
            jackMicroseconds: 9_000_000_000, hostBefore: HostTime(nanoseconds: 2_000_000_000), hostAfter: HostTime(nanoseconds: 2_000_000_000))
        XCTAssertEqual(ahead.offsetNanoseconds, 2_000_000_000 - 9_000_000_000_000)
        XCTAssertEqual(ahead.hostTime(ofJACKMicroseconds: 9_000_000_010), HostTime(nanoseconds: 2_000_010_000))
    }

    func testRefiningFollowsASlewSmoothlyAndJumpsOnAStep() {
        var mapping = JACKClockMapping(offsetNanoseconds: 250_000_000)
        // Read noise of ±1 µs moves the mapping by a quarter of it.
        mapping = mapping.refined(by: JACKClockMapping(offsetNanoseconds: 250_000_800))
        XCTAssertEqual(mapping.offsetNanoseconds, 250_000_200)
        // NTP slewing at 500 ppm, measured 4 times a second: the mapping lags by a bounded amount and follows.
        var truth: Int64 = 250_000_200
        for _ in 0..<400 {
            truth += 125_000  // 500 ppm of 250 ms
            mapping = mapping.refined(by: JACKClockMapping(offsetNanoseconds: truth))
        }
        XCTAssertLessThan(abs(truth - mapping.offsetNanoseconds), 1_000_000)
        XCTAssertEqual(truth - mapping.offsetNanoseconds, 375_000, accuracy: 10)  // steady lag: 3 × one step
        // A step (another clock source, a suspended machine) is taken at once.
        mapping = mapping.refined(by: JACKClockMapping(offsetNanoseconds: -5_000_000_000))
        XCTAssertEqual(mapping.offsetNanoseconds, -5_000_000_000)
    }

    func testCycleTimesGiveTheCyclesStartAndEndAsHostTimes() {
        // 64 frames at 48 kHz: 1333 µs, as JACK's DLL filters it.
        let cycle = JACKCycleTimes(currentFrames: 4_800, currentMicroseconds: 10_100_000, nextMicroseconds: 10_101_333, frames: 64)
        let (start, end) = cycle.hostTimes(JACKClockMapping())
        XCTAssertEqual(start, HostTime(nanoseconds: 10_100_000_000))
        XCTAssertEqual(end, HostTime(nanoseconds: 10_101_333_000))
        let shifted = cycle.hostTimes(JACKClockMapping(offsetNanoseconds: -100_000_000))
        XCTAssertEqual(shifted.start, HostTime(nanoseconds: 10_000_000_000))
    }

    func testFramesAreInterpolatedAlongTheFilteredPeriodAsJackFramesToTimeDoes() {
        // A sound card 100 ppm slow: 1024 frames take 21_335 µs instead of 21_333.
        let cycle = JACKCycleTimes(currentFrames: 1_000_000, currentMicroseconds: 50_000_000, nextMicroseconds: 50_021_335, frames: 1024)
        XCTAssertEqual(cycle.microseconds(ofFrame: 1_000_000), 50_000_000)
        XCTAssertEqual(cycle.microseconds(ofFrame: 1_000_512), 50_010_667)
        XCTAssertEqual(cycle.microseconds(ofFrame: 1_001_024), 50_021_335)
        XCTAssertEqual(cycle.microseconds(ofFrame: 1_002_048), 50_042_670)
        XCTAssertEqual(cycle.microseconds(ofFrame: 999_488), 49_989_333)  // before the cycle: extrapolated back
    }

    func testTheFrameCounterWrapsAt2To32() {
        let cycle = JACKCycleTimes(currentFrames: UInt32.max - 31, currentMicroseconds: 1_000_000, nextMicroseconds: 1_001_333, frames: 64)
        // 64 frames on: the counter has wrapped to 32.
        XCTAssertEqual(cycle.microseconds(ofFrame: 32), 1_001_333)
        XCTAssertEqual(cycle.microseconds(ofFrame: UInt32.max - 95), 998_667)  // 64 frames before the cycle
    }

    func testChunksOfOneCycleAbut() {
        let start = HostTime(nanoseconds: 1_000_000_000)
        let end = HostTime(nanoseconds: 1_005_333_000)  // 256 frames
        var previous = start
        for offset in stride(from: 64, through: 256, by: 64) {
            let time = JACKCycleTimes.hostTime(atFrameOffset: offset, frames: 256, start: start, end: end)
            XCTAssertEqual(time.nanoseconds - previous.nanoseconds, 1_333_250)
            previous = time
        }
        XCTAssertEqual(previous, end)
        XCTAssertEqual(JACKCycleTimes.hostTime(atFrameOffset: 0, frames: 0, start: start, end: end), start)
    }

    func testCycleTimesFarFromTheCallbacksWakeUpAreImplausible() {
        let start = HostTime(nanoseconds: 10_000_000_000)
        let end = HostTime(nanoseconds: 10_001_333_000)  // 64 frames at 48 kHz
        func plausible(wake: Int64, end: HostTime = end) -> Bool {
            JACKCycleTimes.isPlausible(start: start, end: end, wake: HostTime(nanoseconds: wake), frames: 64, sampleRate: 48_000)
        }
        XCTAssertTrue(plausible(wake: 10_000_200_000))  // woken 200 µs into the cycle
        XCTAssertFalse(plausible(wake: 9_856_000_000))  // 144 ms before it (a dummy server's timeline ahead)
        XCTAssertFalse(plausible(wake: 10_475_000_000))  // 475 ms after it (fallen behind)
        // The bounds: 1 ms early, two periods and 2 ms late.
        XCTAssertTrue(plausible(wake: 9_999_000_000))
        XCTAssertFalse(plausible(wake: 9_998_999_999))
        XCTAssertTrue(plausible(wake: 10_004_666_666))
        XCTAssertFalse(plausible(wake: 10_004_666_667))
        // A filtered period 22 % long (1627 µs for 1333).
        XCTAssertFalse(plausible(wake: 10_000_100_000, end: HostTime(nanoseconds: 10_001_627_000)))
    }
}
