#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import TuttiIO
import XCTest

/// Audio threads take the process's realtime scheduling when it is granted, and only audio threads.
final class RealtimeSchedulingTests: XCTestCase {
    /// The scheduling policy and priority a new `OSThread` runs with.
    private func scheduling(realtime: Bool) -> (policy: Int32, priority: Int32) {
        let policy = Atomic<Int32>(-1)
        let priority = Atomic<Int32>(-1)
        OSThread(name: "tutti-test", realtime: realtime) {
            var current: Int32 = 0
            var parameters = sched_param()
            pthread_getschedparam(pthread_self(), &current, &parameters)
            policy.store(current, ordering: .relaxed)
            priority.store(parameters.sched_priority, ordering: .relaxed)
        }.join()
        return (policy.load(ordering: .relaxed), priority.load(ordering: .relaxed))
    }

    func testAudioThreadsRunAtTheGrantedPriorityAndOthersNormally() {
        defer { RealtimeScheduling.disable() }
        switch RealtimeScheduling.enable(priority: 12) {
        case .granted(let priority):
            XCTAssertEqual(priority, 12)
            let audio = scheduling(realtime: true)
            XCTAssertEqual(audio.policy, SCHED_FIFO)
            XCTAssertEqual(audio.priority, 12)
        case .refused(let reason):
            // Without the right (not root, no rtprio limit) audio threads stay normal, and the reason is given.
            XCTAssertFalse(reason.isEmpty)
            XCTAssertEqual(scheduling(realtime: true).policy, SCHED_OTHER)
        }
        XCTAssertEqual(scheduling(realtime: false).policy, SCHED_OTHER)
        RealtimeScheduling.disable()
        XCTAssertEqual(scheduling(realtime: true).policy, SCHED_OTHER)
    }

    func testARequestAboveTheMaximumIsClamped() {
        defer { RealtimeScheduling.disable() }
        switch RealtimeScheduling.enable(priority: 1000) {
        case .granted(let priority):
            XCTAssertEqual(priority, RealtimeScheduling.maximumPriority)
            XCTAssertEqual(scheduling(realtime: true).priority, RealtimeScheduling.maximumPriority)
        case .refused(let reason):
            XCTAssertFalse(reason.isEmpty)
            XCTAssertEqual(scheduling(realtime: true).policy, SCHED_OTHER)
        }
    }
}
