import Synchronization

/// The streams a receiver plays on one device clock that come from one remote device clock (one sender
/// peer's paced clocks, or its JACK server): their drift is one drift, so it is estimated once.
///
/// The first member that plays leads: its `DriftController` steers its own buffer and publishes the
/// correction; every other member applies that correction to its resampler instead of estimating its own,
/// so the streams of one remote device keep one ratio, and with it their alignment to each other. When the
/// leader leaves (its receiver goes), the next member to play takes over, starting from the published
/// estimate. A member whose own buffer strays more than `tolerancePackets` packets from its setpoint under
/// the shared correction (its stream does not come from that clock after all) leaves the group for good and
/// steers itself.
///
/// Thread rules: made and handed to receivers (`StreamReceiver.joinDriftGroup`) on the control plane; read
/// and written by the members' device threads (relaxed atomics: each value stands alone). Realtime-safe: yes.
public final class DriftGroup: Sendable {
    /// How far (packets) a member's buffer may stray from its setpoint under the shared correction.
    public static let tolerancePackets = 2
    /// The leading member's token (0: none).
    let leader = Atomic<Int>(0)
    /// The leader's last correction (stream frames per output frame, near 1) and drift estimate (ppm).
    let correctionBits = Atomic<UInt64>(1.0.bitPattern)
    let estimateBits = Atomic<UInt64>(0.0.bitPattern)
    /// Whether some leader has published a correction yet.
    let published = Atomic<Bool>(false)

    public init() {}

    /// The correction the leader applies now, or nil before any leader has published. Any thread.
    public var correction: Double? {
        published.load(ordering: .relaxed) ? Double(bitPattern: correctionBits.load(ordering: .relaxed)) : nil
    }

    /// The leader's drift estimate (ppm). Any thread.
    public var estimatePPM: Double { Double(bitPattern: estimateBits.load(ordering: .relaxed)) }

    /// Whether a member leads now. Any thread.
    public var hasLeader: Bool { leader.load(ordering: .relaxed) != 0 }

    func publish(correction: Double, estimatePPM: Double) {
        correctionBits.store(correction.bitPattern, ordering: .relaxed)
        estimateBits.store(estimatePPM.bitPattern, ordering: .relaxed)
        published.store(true, ordering: .releasing)
    }
}
