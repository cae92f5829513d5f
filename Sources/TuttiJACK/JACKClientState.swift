import CJack
import Synchronization
import TuttiCore
import TuttiIO

/// Called once per JACK process cycle for one group of ports, on JACK's realtime thread.
///
/// - `context`: the pointer given to `JACKClient.registerPorts` (the port's own noncopyable state).
/// - `buffers`: one buffer of `frames` samples per channel (`jack_port_get_buffer`): input ports' audio to
///   read, or output ports' buffers to fill completely.
/// - `startNanoseconds`, `endNanoseconds`: host time (`CLOCK_MONOTONIC`) of this cycle's first frame and
///   of the next cycle's first frame, from JACK's filtered cycle times.
///
/// The handler must be realtime-safe: no allocation, lock, I/O or logging; it is a C function pointer, so
/// the call itself involves no existential and no reference counting.
public typealias JACKPeriodHandler = @convention(c) (
    _ context: UnsafeMutableRawPointer?, _ buffers: UnsafePointer<UnsafeMutablePointer<Float>?>?, _ frames: Int,
    _ startNanoseconds: Int64, _ endNanoseconds: Int64
) -> Void

/// One registered group of ports (`NAME_1 … NAME_N`) and the handler that processes them.
/// Written by the control plane before activation; read by the process callback after.
struct JACKPortGroup {
    var ports: UnsafeMutablePointer<OpaquePointer?>
    var buffers: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>
    var channels: Int
    var handler: JACKPeriodHandler
    var context: UnsafeMutableRawPointer
}

/// Everything JACK's threads touch, in one noncopyable struct behind the `UnsafeMutablePointer` passed to
/// libjack as every callback's `arg`. The control plane (`JACKClient`) allocates it before the client opens
/// and frees it only after `jack_client_close` has returned, so no callback ever sees it freed.
///
/// Fields: `client`, `groups` and `groupCount` are written by the control plane before
/// `jack_activate` and only read afterwards (activation orders the writes before the first cycle). The
/// atomics are written by JACK's threads (process, notification) and read by the control plane.
struct JACKClientState: ~Copyable {
    static let groupCapacity = 64
    static let reasonCapacity = 256

    var client: OpaquePointer?
    let groups: UnsafeMutablePointer<JACKPortGroup>
    var groupCount = 0
    /// JACK's clock → host time (`JACKClockMapping.offsetNanoseconds`): written by the control plane, read
    /// by the process callback each cycle.
    let offsetNanoseconds = Atomic<Int64>(0)

    /// Written by JACK's threads: the current rate and buffer size, counters, the shutdown.
    let sampleRate = Atomic<Int>(0)
    let bufferSize = Atomic<Int>(0)
    let cycles = Atomic<UInt64>(0)
    let xruns = Atomic<UInt64>(0)
    /// Cycles whose JACK times were off the callback's wake-up (`JACKCycleTimes.isPlausible`).
    let untrustedCycles = Atomic<UInt64>(0)
    let bufferSizeChanges = Atomic<UInt64>(0)
    let sampleRateChanges = Atomic<UInt64>(0)
    /// Set (releasing) by the shutdown callback after it has copied the reason into `shutdownReason`.
    let shutDown = Atomic<Bool>(false)
    let shutdownReason: UnsafeMutablePointer<CChar>

    init() {
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

    /// One process cycle: the cycle's host times (JACK's, compared with one `CLOCK_MONOTONIC` read), then
    /// each group's buffers and handler. JACK's process thread only. Realtime-safe: yes (libjack's
    /// cycle-time and buffer calls are; the clock read is a vDSO call).
    @inline(__always)
    func process(frames count: jack_nframes_t) {
        let frames = Int(count)
        var currentFrames: jack_nframes_t = 0
        var currentMicroseconds: jack_time_t = 0
        var nextMicroseconds: jack_time_t = 0
        var periodMicroseconds: Float = 0
        let mapping = JACKClockMapping(offsetNanoseconds: offsetNanoseconds.load(ordering: .relaxed))
        let start: HostTime
        let end: HostTime
        if jack_get_cycle_times(client, &currentFrames, &currentMicroseconds, &nextMicroseconds, &periodMicroseconds) == 0 {
            (start, end) = JACKCycleTimes(
                currentFrames: currentFrames, currentMicroseconds: currentMicroseconds, nextMicroseconds: nextMicroseconds,
                frames: frames
            ).hostTimes(mapping)
        } else {
            let first = jack_last_frame_time(client)
            start = mapping.hostTime(ofJACKMicroseconds: jack_frames_to_time(client, first))
            end = mapping.hostTime(ofJACKMicroseconds: jack_frames_to_time(client, first &+ count))
        }
        if !JACKCycleTimes.isPlausible(
            start: start, end: end, wake: MonotonicClock().now(), frames: frames, sampleRate: sampleRate.load(ordering: .relaxed))
        {
            untrustedCycles.add(1, ordering: .relaxed)
        }
        for index in 0..<groupCount {
            let group = groups[index]
            for channel in 0..<group.channels {
                group.buffers[channel] = jack_port_get_buffer(group.ports[channel], count)?.assumingMemoryBound(to: Float.self)
            }
            group.handler(group.context, group.buffers, frames, start.nanoseconds, end.nanoseconds)
        }
        cycles.add(1, ordering: .relaxed)
    }
}
