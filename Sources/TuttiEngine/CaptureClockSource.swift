import TuttiClock
import TuttiCore
import TuttiIO
import TuttiWire

/// Converts a device period's monotonic time to the clock that capture times are counted on: the Link
/// session's ghost time when the peer runs the shared beat clock, else the wall clock.
///
/// Realtime-safe: `captureTime(of:)`, `now(on:at:)` (a lock-free snapshot read, or three clock reads and a
/// relaxed atomic). Thread-safe: yes.
public struct CaptureClockSource: Sendable {
    public let link: LinkService?
    /// The wall clock's offset from the monotonic one, proof against a preemption between the reads.
    public let wallClockOffset: WallClockOffset

    /// Capture times on `link`'s ghost time, or on the wall clock when `link` is nil. Any thread.
    public init(link: LinkService?, wallClockOffset: WallClockOffset = WallClockOffset()) {
        self.link = link
        self.wallClockOffset = wallClockOffset
    }

    /// The clock this peer stamps its captures with.
    public var kind: CaptureClock { link == nil ? .realtime : .linkGhost }

    /// `hostTime` (monotonic) on this peer's capture clock, in nanoseconds.
    @inline(__always)
    public func captureTime(of hostTime: HostTime) -> Int64 {
        now(on: kind, at: hostTime)
    }

    /// `hostTime` (monotonic) on `clock`, in nanoseconds; `Int64.min` when this peer cannot read that clock
    /// (a stream timed on Link ghost time while this peer has no Link session).
    @inline(__always)
    public func now(on clock: CaptureClock, at hostTime: HostTime) -> Int64 {
        switch clock {
        case .realtime:
            return hostTime.nanoseconds + wallClockOffset.current()
        case .linkGhost:
            guard let link else { return .min }
            let microseconds = hostTime.nanoseconds / 1000
            let ghost = link.snapshot.clock.ghostTime(atHostTime: microseconds)
            return ghost * 1000 + hostTime.nanoseconds % 1000
        }
    }
}
