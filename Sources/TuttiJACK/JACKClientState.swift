import CJack
import Synchronization
import TuttiCore
import TuttiIO

/// Called once per JACK process cycle for one group of ports, on JACK's realtime thread.
///
/// - `context`: the pointer given to `JACKClient.registerPorts` (the port's own noncopyable state).
/// - `buffers`: one buffer of `frames` samples per channel (`jack_port_get_buffer`): input ports' audio to
///   read, or output ports' buffers to fill completely.
/// - `skippedFrames`: frames of the server's timeline this client missed just before this cycle (it did
///   not run for a cycle of an overloaded server), 0 almost always: catch them up first (a receiver plays
///   and discards them, a sender sends silence), so the streams stay on the server's frame clock. They
///   run from `startNanoseconds` less `skippedFrames` frames to `startNanoseconds`.
/// - `startNanoseconds`, `endNanoseconds`: host time (`CLOCK_MONOTONIC`) of this cycle's first frame and
///   of the next cycle's first frame, from the client's `JACKTimeline`.
///
/// The handler must be realtime-safe: no allocation, lock, I/O or logging; it is a C function pointer, so
/// the call itself involves no existential and no reference counting.
package typealias JACKPeriodHandler =
    @convention(c) (
        _ context: UnsafeMutableRawPointer?, _ buffers: UnsafePointer<UnsafeMutablePointer<Float>?>?, _ frames: Int,
        _ skippedFrames: Int, _ startNanoseconds: Int64, _ endNanoseconds: Int64
    ) -> Void

/// One registered group of ports (`NAME_1 … NAME_N`) and the handler that processes them.
/// Written by the control plane before activation; read by the process callback after.
struct JACKPortGroup {
    var ports: UnsafeMutablePointer<OpaquePointer?>
    var buffers: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>
    var channels: Int
    var direction: JACKPortDirection
    var handler: JACKPeriodHandler
    var context: UnsafeMutableRawPointer
}

/// Everything JACK's threads touch, in one noncopyable struct behind the `UnsafeMutablePointer` passed to
/// libjack as every callback's `arg`. The control plane (`JACKClient`) allocates it before the client opens
/// and frees it only after `jack_client_close` has returned, so no callback ever sees it freed.
///
/// Fields: `client`, `groups` and `groupCount` are written by the control plane before
/// `jack_activate` and only read afterwards (activation orders the writes before the first cycle).
/// `timeline` belongs to the process thread. The atomics are written by JACK's threads (process,
/// notification) and read by the control plane.
struct JACKClientState: ~Copyable {
    static let groupCapacity = 64
    static let reasonCapacity = 256

    var client: OpaquePointer?
    let groups: UnsafeMutablePointer<JACKPortGroup>
    var groupCount = 0
    /// Host times of the frames processed (process thread only).
    var timeline: JACKTimeline

    /// Written by JACK's threads: the current rate and buffer size, counters, the shutdown.
    let sampleRate = Atomic<Int>(0)
    let bufferSize = Atomic<Int>(0)
    let cycles = Atomic<UInt64>(0)
    let xruns = Atomic<UInt64>(0)
    /// Callbacks that woke more than a period plus 1 ms after their cycle started (`JACKTimeline.Cycle.late`).
    let lateCycles = Atomic<UInt64>(0)
    /// Cycles this client missed, server stalls caught up, and restarts of the timeline (`JACKTimeline`).
    let missedCycles = Atomic<UInt64>(0)
    let serverStalls = Atomic<UInt64>(0)
    let timelineRebases = Atomic<UInt64>(0)
    let bufferSizeChanges = Atomic<UInt64>(0)
    let sampleRateChanges = Atomic<UInt64>(0)
    /// Set (releasing) by the shutdown callback after it has copied the reason into `shutdownReason`.
    let shutDown = Atomic<Bool>(false)
    let shutdownReason: UnsafeMutablePointer<CChar>

    init(sampleRate: Int) {
        timeline = JACKTimeline(sampleRate: max(1, sampleRate))
        groups = .allocate(capacity: Self.groupCapacity)
        shutdownReason = .allocate(capacity: Self.reasonCapacity)
        shutdownReason.initialize(repeating: 0, count: Self.reasonCapacity)
    }

    deinit {
        for index in 0..<groupCount {
            groups[index].ports.deallocate()
            groups[index].buffers.deallocate()
        }
        groups.deallocate()
        shutdownReason.deallocate()
    }

    /// One process cycle: when the server started it (this callback's wake-up on `CLOCK_MONOTONIC`, less
    /// the frames since the cycle started), through the timeline to the host times of the frames this
    /// client processes; then each group's buffers and handler, output groups first: libjack copies an
    /// input port's audio from an output port of the same client when the input's buffer is fetched, so a
    /// loop inside the client (b:in_1 → b:back_1) then reads this cycle's audio, as its capture time says,
    /// not the previous cycle's. JACK's process thread only. Realtime-safe: yes (libjack's frame-time and
    /// buffer calls read shared memory; the clock read is a vDSO call).
    @inline(__always)
    mutating func process(frames count: jack_nframes_t) {
        let frames = Int(count)
        let rate = sampleRate.load(ordering: .relaxed)
        let counter = jack_last_frame_time(client)
        let before = MonotonicClock().now()
        let sinceStart = jack_frames_since_cycle_start(client)
        let wake = MonotonicClock().now()
        // The frames since the cycle started are read between two clock reads; a reading the thread was
        // preempted around (over 50 µs between them) or that straddles two cycles is left out.
        // `jack_frames_since_cycle_start` floors, so the start lies half a frame earlier on average.
        let read = before.nanoseconds + (wake.nanoseconds - before.nanoseconds) / 2
        let cycleStart: HostTime? =
            jack_last_frame_time(client) == counter && rate > 0 && wake.nanoseconds - before.nanoseconds <= 50_000
            ? HostTime(nanoseconds: read - (Int64(sinceStart) * 2 + 1) * 500_000_000 / Int64(rate)) : nil
        let missedBefore = timeline.missedCycles
        let stallsBefore = timeline.stalls
        let rebasesBefore = timeline.rebases
        let cycle = timeline.advance(frameCounter: counter, cycleStart: cycleStart, wake: wake, frames: frames, sampleRate: rate)
        if cycle.late { lateCycles.add(1, ordering: .relaxed) }
        if timeline.missedCycles != missedBefore { missedCycles.add(timeline.missedCycles &- missedBefore, ordering: .relaxed) }
        if timeline.stalls != stallsBefore { serverStalls.add(timeline.stalls &- stallsBefore, ordering: .relaxed) }
        if timeline.rebases != rebasesBefore { timelineRebases.add(timeline.rebases &- rebasesBefore, ordering: .relaxed) }
        for pass in 0..<2 {
            let direction: JACKPortDirection = pass == 0 ? .output : .input
            for index in 0..<groupCount where groups[index].direction == direction {
                let group = groups[index]
                for channel in 0..<group.channels {
                    group.buffers[channel] = jack_port_get_buffer(group.ports[channel], count)?.assumingMemoryBound(to: Float.self)
                }
                group.handler(
                    group.context, group.buffers, frames, cycle.skippedFrames, cycle.start.nanoseconds, cycle.end.nanoseconds)
            }
        }
        cycles.add(1, ordering: .relaxed)
    }
}
