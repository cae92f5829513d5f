import TuttiClock
import Foundation
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// Audio threads read the session while the network thread publishes it: never a torn snapshot.
final class LinkSnapshotPublisherTests: XCTestCase {
    private static func snapshot(_ k: Int64) -> LinkSnapshot {
        LinkSnapshot(
            clock: LinkSessionClock(
                timeline: Timeline(tempo: Tempo(microsecondsPerBeat: 400_000 + k), beatOrigin: Beats(microBeats: k), timeOrigin: -k),
                ghostTransform: GhostTransform(slope: 1, intercept: 3 * k)),
            startStop: StartStopState(isPlaying: k % 2 == 0, beats: Beats(microBeats: 5 * k), timestamp: 7 * k),
            sessionID: NodeID(rawValue: UInt64(k) &* 0x9E37_79B9), peerCount: Int(k % 64))
    }

    func testReadsAreNeverTornWhileAWriterPublishes() {
        let publisher = LinkSnapshotPublisher(Self.snapshot(0))
        XCTAssertEqual(publisher.read(), Self.snapshot(0))
        let iterations: Int64 = 200_000
        let readers = 2
        let torn = UnsafeMutablePointer<Int>.allocate(capacity: readers)
        let reads = UnsafeMutablePointer<Int>.allocate(capacity: readers)
        torn.initialize(repeating: 0, count: readers)
        reads.initialize(repeating: 0, count: readers)
        defer {
            torn.deallocate()
            reads.deallocate()
        }
        nonisolated(unsafe) let tornCounts = torn
        nonisolated(unsafe) let readCounts = reads
        // Real threads (not a pool sized to the cores, where spinning readers could starve the writer).
        let group = DispatchGroup()
        var threads: [Thread] = []
        for worker in 0...readers {
            group.enter()
            let thread = Thread {
                defer { group.leave() }
                if worker == readers {
                    for k in 1...iterations { publisher.publish(Self.snapshot(k)) }
                    return
                }
                var last: Int64 = 0
                while last < iterations {
                    let value = publisher.read()
                    let k = value.clock.timeline.beatOrigin.microBeats
                    if value != Self.snapshot(k) || k < last { tornCounts[worker] += 1 }
                    last = k
                    readCounts[worker] += 1
                    if readCounts[worker] % 1024 == 0 { sched_yield() }
                }
            }
            threads.append(thread)
        }
        for thread in threads { thread.start() }
        XCTAssertEqual(group.wait(timeout: .now() + 120), .success, "readers and writer finish")
        for reader in 0..<readers {
            XCTAssertEqual(torn[reader], 0, "reader \(reader) saw torn or stale-going-back snapshots")
            XCTAssertGreaterThan(reads[reader], 0)
        }
        XCTAssertEqual(publisher.read(), Self.snapshot(iterations))
    }
}
