import Foundation
import Synchronization
import TuttiIO
import XCTest

/// A data-plane thread carries its name, as `top -H`, `perf` and `/proc` show it (the kernel keeps 15 bytes).
final class OSThreadTests: XCTestCase {
    func testAThreadIsNamedAfterItsFirst15Bytes() throws {
        let seen = Mutex<String?>(nil)
        let thread = OSThread(name: "tutti-clock-48k-and-more") {
            let comm = try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)
            seen.withLock { $0 = comm?.trimmingCharacters(in: .newlines) }
        }
        thread.join()
        XCTAssertEqual(seen.withLock { $0 }, "tutti-clock-48k")
    }
}
