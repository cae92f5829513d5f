import TuttiCore

/// The RFC 3550 (§6.4.1, A.8) interarrival jitter estimator: a running mean of the absolute change in
/// transit time between consecutive packets, with gain 1/16, in RTP timestamp units.
///
/// Realtime-safe: yes. Thread-safe: no (one owner).
public struct InterarrivalJitter: Sendable {
    private var lastTransit: Double?
    /// The current estimate, in timestamp units (frames).
    public private(set) var frames: Double = 0

    public init() {}

    /// Feeds one packet: its arrival in frames on the receiver's clock and its (extended) RTP timestamp.
    @inlinable public mutating func update(arrivalFrames: Double, timestamp: Int64) {
        _update(transit: arrivalFrames - Double(timestamp))
    }

    @usableFromInline mutating func _update(transit: Double) {
        if let lastTransit {
            let difference = abs(transit - lastTransit)
            frames += (difference - frames) / 16
        }
        lastTransit = transit
    }

    /// Forgets the history (after a resynchronisation), keeping nothing from the old stream.
    public mutating func reset() {
        lastTransit = nil
        frames = 0
    }
}
