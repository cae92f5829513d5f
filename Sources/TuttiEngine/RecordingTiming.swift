#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import TuttiIO

/// When a receiver port's recording began: the playout time of its first frame on the host's monotonic
/// clock and on the shared (Link session) clock, so recordings made on different machines can be placed on
/// one timeline. Written once by the device thread (first period), read by the sink's writer thread, which
/// saves it beside a WAV file as `<file>.timing.json`.
package final class RecordingTiming: Sendable {
    private let hostTime = Atomic<Int64>(.min)
    private let sessionTime = Atomic<Int64>(.min)

    /// Device thread: records the first period's times (later calls do nothing). Realtime-safe.
    @inline(__always)
    package func noteFirstPeriod(hostTime host: Int64, sessionTime session: Int64) {
        guard hostTime.load(ordering: .relaxed) == .min else { return }
        sessionTime.store(session, ordering: .relaxed)
        hostTime.store(host, ordering: .releasing)
    }

    /// Writer thread: saves the timing beside `path` once known. Returns whether it was written.
    package func save(besides path: String, sampleRate: Int) -> Bool {
        let host = hostTime.load(ordering: .acquiring)
        guard host != .min else { return false }
        let session = sessionTime.load(ordering: .relaxed)
        let sessionField = session == .min ? "null" : String(session)
        let json = """
            {"sampleRate":\(sampleRate),"firstFrameHostTimeNs":\(host),"firstFrameSessionTimeNs":\(sessionField)}

            """
        guard let file = system_fopen(path + ".timing.json", "w") else { return false }
        system_fputs(json, file)
        system_fclose(file)
        return true
    }
}
