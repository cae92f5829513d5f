import TuttiCore

/// An in-memory datagram network with seeded delay, jitter, loss, duplication and reordering.
///
/// Datagrams are numbered in send order (`index`). Every random decision comes from a `SeededGenerator`, so a
/// run is fully reproducible, and the network records what it did (`dropped`, `duplicated`) so a test can
/// compare a receiver's counters with the truth.
public struct LossyNetwork {
    /// How the network treats datagrams.
    public struct Configuration: Sendable {
        /// Delay every datagram has at least.
        public var baseDelay: Duration
        /// Extra delay, uniformly distributed in `0...jitter`, drawn independently for every copy.
        public var jitter: Duration
        /// Probability that a datagram is dropped.
        public var lossProbability: Double
        /// Probability that a (not dropped) datagram is delivered twice, each copy with its own delay.
        public var duplicationProbability: Double
        /// Probability that a datagram is held back by a further `reorderDelay`, so that later datagrams overtake it.
        public var reorderProbability: Double
        /// The extra hold-back of a reordered datagram.
        public var reorderDelay: Duration
        /// Datagrams with an index below this are delivered exactly once after `baseDelay` (a clean start).
        public var cleanPrefix: Int
        /// Seed of the random decisions.
        public var seed: UInt64

        /// A configuration; by default a clean network with 1 ms of delay.
        public init(
            baseDelay: Duration = .milliseconds(1), jitter: Duration = .zero, lossProbability: Double = 0,
            duplicationProbability: Double = 0, reorderProbability: Double = 0, reorderDelay: Duration = .zero,
            cleanPrefix: Int = 0, seed: UInt64
        ) {
            self.baseDelay = baseDelay
            self.jitter = jitter
            self.lossProbability = lossProbability
            self.duplicationProbability = duplicationProbability
            self.reorderProbability = reorderProbability
            self.reorderDelay = reorderDelay
            self.cleanPrefix = cleanPrefix
            self.seed = seed
        }
    }

    /// One copy of a datagram arriving at the receiver.
    public struct Delivery: Sendable {
        /// Send-order number of the datagram.
        public var index: Int
        /// The datagram, unchanged.
        public var bytes: [UInt8]
        /// When it was handed to the network.
        public var sent: HostTime
        /// When it reaches the receiver.
        public var arrival: HostTime
        /// Whether this is the second copy of a duplicated datagram.
        public var isExtraCopy: Bool
    }

    /// How this network treats datagrams.
    public let configuration: Configuration
    /// Indices of the datagrams the network dropped, in send order.
    public private(set) var dropped: [Int] = []
    /// Indices of the datagrams the network delivered twice, in send order.
    public private(set) var duplicated: [Int] = []
    /// Indices of the datagrams the network held back by `reorderDelay`.
    public private(set) var heldBack: [Int] = []
    /// Datagrams sent so far.
    public private(set) var sentCount = 0

    private var generator: SeededGenerator
    private var inFlight: [Delivery] = []

    /// A network whose every random decision follows `configuration.seed`.
    public init(_ configuration: Configuration) {
        self.configuration = configuration
        generator = SeededGenerator(seed: configuration.seed)
    }

    /// Hands `bytes` to the network at `time`.
    public mutating func send(_ bytes: [UInt8], at time: HostTime) {
        let index = sentCount
        sentCount += 1
        if index < configuration.cleanPrefix {
            enqueue(Delivery(index: index, bytes: bytes, sent: time, arrival: time + configuration.baseDelay, isExtraCopy: false))
            return
        }
        if Double.random(in: 0..<1, using: &generator) < configuration.lossProbability {
            dropped.append(index)
            return
        }
        var extra = Duration.zero
        if Double.random(in: 0..<1, using: &generator) < configuration.reorderProbability {
            heldBack.append(index)
            extra = configuration.reorderDelay
        }
        enqueue(Delivery(index: index, bytes: bytes, sent: time, arrival: time + randomDelay() + extra, isExtraCopy: false))
        if Double.random(in: 0..<1, using: &generator) < configuration.duplicationProbability {
            duplicated.append(index)
            enqueue(Delivery(index: index, bytes: bytes, sent: time, arrival: time + randomDelay(), isExtraCopy: true))
        }
    }

    /// Removes and returns every copy that has arrived by `time`, in arrival order (ties in queueing order).
    public mutating func deliver(upTo time: HostTime) -> [Delivery] {
        let ready = inFlight.filter { $0.arrival <= time }
        inFlight.removeAll { $0.arrival <= time }
        return ready
    }

    /// Copies still in flight.
    public var pending: Int { inFlight.count }

    private mutating func randomDelay() -> Duration {
        let jitterNanoseconds = configuration.jitter.nanosecondsClamped
        let extra = jitterNanoseconds > 0 ? Int64.random(in: 0...jitterNanoseconds, using: &generator) : 0
        return configuration.baseDelay + .nanoseconds(extra)
    }

    private mutating func enqueue(_ delivery: Delivery) {
        // Keep `inFlight` sorted by arrival, stable for equal arrivals.
        let position = inFlight.firstIndex { $0.arrival > delivery.arrival } ?? inFlight.endIndex
        inFlight.insert(delivery, at: position)
    }
}
