#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Clock-drift compensation for a receiver: once per device period it takes the jitter buffer's level and
/// returns the resampling correction that holds that level at its target while the sender's clock and the
/// receiver's drift apart, plus its estimate of the drift.
///
/// **Ratio convention.** `update` returns the *correction*: input frames consumed per output frame, divided by
/// the nominal ratio (input rate ÷ output rate), i.e. what `Resampler.setCorrection` takes. Above 1 the receiver
/// consumes faster: the sender's clock is fast. At equilibrium the correction equals 1 + drift, where a sender
/// whose clock runs at (1 + drift) × the receiver's produces (1 + drift) frames per receiver frame.
///
/// **Loop.** The level error e = level − target (frames) is low-passed (first order, time constant
/// `levelTimeConstant`), then a PI controller maps it to the correction: c = 1 + Kp·ē + I, with I += Ki·ē·T per
/// period T. The buffer integrates the mismatch (dL/dt = rate × (drift − (c − 1))), so the closed loop is second
/// order, s² + 2ζω s + ω² with ω = 1 / `loopTimeConstant`, ζ = `damping`: Kp = 2ζω / rate (per frame of
/// error), Ki = ω² / rate (per frame-second). The integral I is the drift estimate: at equilibrium the level
/// error is 0 and the correction is all integral.
///
/// **Time constants (defaults, for 64-frame periods at 48 kHz).** Level low-pass 1 s (averages arrival
/// jitter); loop time constant 3 s, critically damped (ζ = 1): neither the level nor the estimate oscillates or
/// overshoots (the low-pass adds a pole at 3× the loop frequency, which keeps it so). Against a sudden
/// 200 ppm drift (from a standing start) the level deviates by at most about 15 frames (after about 3 s), the
/// estimate is within 2 % after about 19 s and within 1 ppm after about 25 s. A level offset (a new target, a
/// start away from it) is removed with one undershoot of about a third of it (the integral gathered while
/// draining the excess must be given back; any PI loop does this) and no further swing. One frame of (filtered)
/// error is worth 13.9 ppm of proportional correction.
///
/// **Clamping.** The correction and the integral stay within ±`maximumCorrectionPPM`; the integral stops
/// (conditional integration) while the output is saturated in the direction of the error, so a drift beyond
/// the range does not wind it up.
///
/// **Level input.** `bufferedFrames` of a jitter buffer moves in whole packets: sampled at the reads it is a
/// sawtooth, one packet high, whose slow walk is the drift. Either feed it directly (the low-pass averages
/// the sawtooth; the correction then wobbles by up to a few hundred ppm, slowly and inaudibly, and the
/// estimate by some tens) or, better, remove the sawtooth with `interpolatedLevel` using the time since the
/// newest packet arrived: then the correction stays within about ±15 ppm of the drift with 0.25 ms of
/// arrival jitter (±3 ppm without). The target is the same for both: both are centred on the raw level's mean.
///
/// Pure and deterministic (same inputs, same outputs; no clock, no randomness). Realtime-safe: yes (no
/// allocation, lock or log; `init` computes the gains). Thread-safe: no (a value owned by the device thread).
public struct DriftController: Hashable, Sendable {
    /// Loop parameters.
    public struct Configuration: Hashable, Sendable {
        /// Frames per second of the level's clock (the receiver's device rate).
        public var sampleRate: Int
        /// Frames between two `update` calls (the device period).
        public var periodFrames: Int
        /// Time constant of the level's first-order low-pass, in seconds.
        public var levelTimeConstant: Double
        /// 1 / ω of the closed loop, in seconds: larger is slower and smoother.
        public var loopTimeConstant: Double
        /// ζ of the closed loop: 1 is critically damped; below 1 the level overshoots.
        public var damping: Double
        /// Largest correction either way, in ppm.
        public var maximumCorrectionPPM: Double

        /// Defaults as documented on `DriftController`.
        public init(
            sampleRate: Int, periodFrames: Int, levelTimeConstant: Double = 1, loopTimeConstant: Double = 3,
            damping: Double = 1, maximumCorrectionPPM: Double = 1_000
        ) {
            self.sampleRate = sampleRate
            self.periodFrames = periodFrames
            self.levelTimeConstant = levelTimeConstant
            self.loopTimeConstant = loopTimeConstant
            self.damping = damping
            self.maximumCorrectionPPM = maximumCorrectionPPM
        }
    }

    /// The parameters it was built with.
    public let configuration: Configuration
    /// Low-pass coefficient per update: 1 − exp(−T / levelTimeConstant).
    private let smoothing: Double
    /// Correction per frame of filtered error.
    private let proportionalGain: Double
    /// Integral increment per frame of filtered error, per update.
    private let integralGain: Double
    private let limit: Double
    /// Low-passed level error, in frames.
    public private(set) var filteredError: Double = 0
    /// The integral path: the drift estimate, as a fraction (200 ppm = 0.0002).
    private var integral: Double
    /// The correction returned by the last `update` (1 before the first).
    public private(set) var correction: Double

    /// The sender's clock relative to the receiver's, in ppm (positive: the sender is fast), as estimated so far.
    /// Realtime-safe: yes.
    public var driftEstimatePPM: Double { integral * 1e6 }

    /// - Parameters:
    ///   - configuration: rates and time constants (all positive).
    ///   - initialDriftPPM: a drift known in advance (e.g. from the last session with this peer); 0 otherwise.
    /// Allocates nothing; control plane or device thread.
    public init(_ configuration: Configuration, initialDriftPPM: Double = 0) {
        precondition(configuration.sampleRate > 0 && configuration.periodFrames > 0)
        precondition(configuration.levelTimeConstant > 0 && configuration.loopTimeConstant > 0)
        precondition(configuration.damping > 0 && configuration.maximumCorrectionPPM > 0)
        self.configuration = configuration
        let rate = Double(configuration.sampleRate)
        let period = Double(configuration.periodFrames) / rate
        let omega = 1 / configuration.loopTimeConstant
        smoothing = 1 - exp(-period / configuration.levelTimeConstant)
        proportionalGain = 2 * configuration.damping * omega / rate
        integralGain = omega * omega / rate * period
        limit = configuration.maximumCorrectionPPM * 1e-6
        integral = min(max(initialDriftPPM * 1e-6, -limit), limit)
        correction = 1 + integral
    }

    /// One period's step: takes the buffer's level and its target (frames, the same measure) and returns the
    /// correction for the next period (see the type's documentation), within 1 ± `maximumCorrectionPPM` × 10⁻⁶.
    /// - Precondition: `level` and `target` are finite.
    /// Realtime-safe: yes. Device thread.
    @discardableResult
    @_noLocks @_noAllocation
    public mutating func update(level: Double, target: Double) -> Double {
        precondition(level.isFinite && target.isFinite)
        filteredError += smoothing * (level - target - filteredError)
        let proportional = proportionalGain * filteredError
        let nextIntegral = min(max(integral + integralGain * filteredError, -limit), limit)
        let output = proportional + nextIntegral
        let saturatedWithError = (output > limit && filteredError > 0) || (output < -limit && filteredError < 0)
        if !saturatedWithError { integral = nextIntegral }
        correction = 1 + min(max(proportional + integral, -limit), limit)
        return correction
    }

    /// Forgets the level history (after the stream re-anchored) and restarts from a drift estimate, by default
    /// the current one. Realtime-safe: yes.
    public mutating func reset(driftPPM: Double? = nil) {
        if let driftPPM { integral = min(max(driftPPM * 1e-6, -limit), limit) }
        filteredError = 0
        correction = 1 + integral
    }

    /// A jitter-buffer level without the packet sawtooth: the frames buffered at the read plus the frames the
    /// sender has produced since the newest packet arrived, less half a packet, so that its mean is the mean of
    /// `bufferedFrames` and the same target serves both.
    /// - Parameters:
    ///   - bufferedFrames: the level at the read (`JitterBufferStatistics.bufferedFrames`).
    ///   - framesSinceNewestArrival: receiver frames from the arrival of the newest packet (highest timestamp)
    ///     to the read.
    ///   - packetFrames: frames per packet.
    /// Realtime-safe: yes.
    public static func interpolatedLevel(bufferedFrames: Int, framesSinceNewestArrival: Double, packetFrames: Int)
        -> Double
    {
        Double(bufferedFrames) + framesSinceNewestArrival - Double(packetFrames) / 2
    }
}
