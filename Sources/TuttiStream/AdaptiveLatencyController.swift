/// Chooses an adaptive jitter buffer's target latency from the network's measured behaviour: the
/// 99th percentile of recent packet lateness, plus the packet itself, a device period and a margin,
/// between a floor and a ceiling set at connect time.
///
/// **Lateness** of a packet is its transit time (arrival minus RTP timestamp, in frames) minus the
/// smallest transit time in the window: how much later than the fastest recent packet it came. A steady
/// clock offset or a slow drift between the two ends cancels out. The window holds the packets of the last
/// `windowDuration` (0.5 s by default: 375 packets of 64 frames, so the 99th percentile is still the 4th
/// largest), so a rise in jitter shows within a few packets, and a fall once the jittery packets have left
/// the window: the target comes down within about a second of the jitter's end, including the end's own
/// stragglers (with a 1 s window, the lab measured 1.1 to 2.1 s, against the 2 s it must settle in).
///
/// Realtime-safe: `observe` and `recommendedTargetFrames` (no allocation, lock or log after `init`; each
/// costs at most a pass over the window, a few hundred to two thousand values). Thread-safe: no (the
/// device thread owns it, inside the jitter buffer).
public struct AdaptiveLatencyController: ~Copyable {
    public let floorFrames: Int
    public let ceilingFrames: Int
    /// Added to the lateness percentile: the packet being played and some slack.
    public let marginFrames: Int
    /// Packets in the window.
    public let windowPackets: Int

    private let transits: UnsafeMutableBufferPointer<Double>
    private let sorted: UnsafeMutableBufferPointer<Double>
    private var next = 0
    private var count = 0

    /// - Parameters:
    ///   - packetFrames: frames per packet; with `sampleRate`, sizes the window.
    ///   - floorFrames / ceilingFrames: the range the target stays in.
    ///   - windowDuration: how far back lateness is remembered.
    /// Control plane (allocates).
    public init(
        sampleRate: Int, packetFrames: Int, floorFrames: Int, ceilingFrames: Int, windowDuration: Duration = .milliseconds(500)
    ) {
        precondition(packetFrames > 0 && floorFrames > 0 && ceilingFrames >= floorFrames)
        self.floorFrames = floorFrames
        self.ceilingFrames = ceilingFrames
        marginFrames = packetFrames + sampleRate / 2000  // the packet itself, and 0.5 ms
        let packetsPerSecond = Double(sampleRate) / Double(packetFrames)
        windowPackets = max(16, min(2048, Int(windowDuration.seconds * packetsPerSecond)))
        transits = .allocate(capacity: windowPackets)
        transits.initialize(repeating: 0)
        sorted = .allocate(capacity: windowPackets)
        sorted.initialize(repeating: 0)
    }

    deinit {
        transits.deallocate()
        sorted.deallocate()
    }

    /// Records one packet's transit: its arrival on the receiver's clock in frames, minus its extended RTP
    /// timestamp. Realtime-safe.
    public mutating func observe(transitFrames: Double) {
        transits[next] = transitFrames
        next = next + 1 == windowPackets ? 0 : next + 1
        count = min(windowPackets, count + 1)
    }

    /// Forgets the window (a new stream or a re-anchored one). Realtime-safe.
    public mutating func reset() {
        next = 0
        count = 0
    }

    /// Packets observed in the window.
    public var observedPackets: Int { count }

    /// The smallest transit in the window and the `fraction` percentile of lateness above it, in frames
    /// (nil with fewer than 16 packets). Realtime-safe (a partial selection over the window).
    public func lateness(percentile fraction: Double = 0.99) -> (minimumTransitFrames: Double, percentileFrames: Double)? {
        guard let minimum = minimumTransitFrames() else { return nil }
        for index in 0..<count { sorted[index] = transits[index] - minimum }
        let rank = min(count - 1, Int((Double(count - 1) * fraction).rounded(.up)))
        return (minimum, select(rank: rank, count: count))
    }

    /// The smallest transit in the window, in frames (nil with fewer than 16 packets). Realtime-safe.
    public func minimumTransitFrames() -> Double? {
        guard count >= 16 else { return nil }
        var minimum = Double.infinity
        for index in 0..<count { minimum = min(minimum, transits[index]) }
        return minimum
    }

    /// The 99th percentile of lateness in the window, in frames (0 with fewer than 16 packets).
    public func latenessPercentileFrames(_ fraction: Double = 0.99) -> Double {
        lateness(percentile: fraction)?.percentileFrames ?? 0
    }

    /// The target for a lateness percentile: the lateness, the margin and one device period (a period is
    /// played from what has arrived when it starts), within the floor and the ceiling.
    public func targetFrames(latenessFrames: Double, periodFrames: Int) -> Int {
        min(ceilingFrames, max(floorFrames, Int(latenessFrames.rounded(.up)) + marginFrames + periodFrames))
    }

    /// The target the buffer should run at now, in frames, for reads of `periodFrames`. Realtime-safe.
    public func recommendedTargetFrames(periodFrames: Int = 0) -> Int {
        targetFrames(latenessFrames: latenessPercentileFrames(), periodFrames: periodFrames)
    }

    /// Quickselect (Hoare partition) of the `rank`-th smallest of `sorted[0..<count]`, in place.
    private func select(rank: Int, count: Int) -> Double {
        var low = 0
        var high = count - 1
        while low < high {
            let pivot = sorted[(low + high) / 2]
            var i = low
            var j = high
            while i <= j {
                while sorted[i] < pivot { i += 1 }
                while sorted[j] > pivot { j -= 1 }
                if i <= j {
                    sorted.swapAt(i, j)
                    i += 1
                    j -= 1
                }
            }
            if rank <= j {
                high = j
            } else if rank >= i {
                low = i
            } else {
                break
            }
        }
        return sorted[rank]
    }
}
