import TuttiAnalysis
import XCTest

/// The benchmark's CPU figure: utime + stime of a /proc/PID/stat line, whatever its command name holds.
final class ProcessStatTests: XCTestCase {
    func testCPUTicksAreUtimePlusStimeNotTheChildrens() {
        // Fields 14–17: utime 47, stime 2, cutime 3, cstime 3 (a process that spun in user space for 0.47 s).
        let line = "15200 (python3) R 15200 15200 13514 0 -1 4194304 2851 6510 2 0 47 2 3 3 20 0 1 0 123 456 789"
        XCTAssertEqual(ProcessStat.cpuTicks(statLine: line), 49)
        // A command name with spaces and parentheses of its own.
        let odd = "7 (tutti peer (h1)) S 1 7 7 0 -1 4194560 10 0 0 0 1200 350 0 0 -2 0 10 0 99 0 0"
        XCTAssertEqual(ProcessStat.cpuTicks(statLine: odd), 1_550)
        XCTAssertNil(ProcessStat.cpuTicks(statLine: "not a stat line"))
        XCTAssertNil(ProcessStat.cpuTicks(statLine: "7 (x) S 1 2"))
    }
}
