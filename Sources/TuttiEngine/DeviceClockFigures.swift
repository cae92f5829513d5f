/// What a port's paced device clock did while the port ran: periods it skipped because its thread stalled
/// for more than 100 ms (their audio is lost), wake-ups later than half a period (the machine kept the thread
/// from running in time: packets sent late, or played late), and the latest wake-up's lateness. All zero for
/// a port on the JACK cycle (the JACK server keeps its own). Control plane.
public struct DeviceClockFigures: Sendable, Equatable {
    public var overruns: UInt64 = 0
    public var lateWakes: UInt64 = 0
    /// The clock's latest wake-up since the clock was made, in milliseconds after its deadline (0 when none
    /// was later than half a period).
    public var worstWakeLatenessMilliseconds: Double = 0

    public init() {}
}
