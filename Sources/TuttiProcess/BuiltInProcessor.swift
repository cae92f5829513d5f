/// The processors Tutti has built in, by name: `gain`, `delay`, `eq` (one parametric band) and `limiter`.
/// The engine calls the one a filter port runs through a switch on `kind` (no existential), and each
/// processor is mutated where it is stored (no copy, so no copy-on-write and no reference counting per period).
///
/// Realtime-safe: `process` and `set` (no allocation, no lock). Thread-safe: no (the engine thread owns it);
/// `make` and `parameters(of:)` are control plane.
public struct BuiltInProcessor: Sendable {
    public enum Kind: String, Sendable, CaseIterable {
        case gain, delay, eq, limiter
    }

    public let kind: Kind
    private var gain: GainProcessor?
    private var delay: DelayProcessor?
    private var eq: EQBandProcessor?
    private var limiter: LimiterProcessor?

    private init(
        kind: Kind, gain: GainProcessor? = nil, delay: DelayProcessor? = nil, eq: EQBandProcessor? = nil,
        limiter: LimiterProcessor? = nil
    ) {
        self.kind = kind
        self.gain = gain
        self.delay = delay
        self.eq = eq
        self.limiter = limiter
    }

    /// Every built-in processor's name, as `--filter fx=NAME,…` takes it.
    public static let names = Kind.allCases.map(\.rawValue)

    /// The parameters a processor takes, in order; nil for a name that is not built in.
    public static func parameters(of name: String) -> [ProcessorParameter]? {
        switch name {
        case "gain": GainProcessor.parameters
        case "delay": DelayProcessor.parameters
        case "eq": EQBandProcessor.parameters
        case "limiter": LimiterProcessor.parameters
        default: nil
        }
    }

    /// Makes the processor `specification` names for a stream of `channels` at `sampleRate` (control plane:
    /// allocates its state).
    public static func make(_ specification: ProcessorSpecification, sampleRate: Int, channels: Int) -> BuiltInProcessor {
        let value = { (name: String) in specification.value(of: name) }
        switch Kind(rawValue: specification.name) ?? .gain {
        case .gain: return BuiltInProcessor(kind: .gain, gain: GainProcessor(sampleRate: sampleRate, decibels: value("db")))
        case .delay:
            return BuiltInProcessor(
                kind: .delay, delay: DelayProcessor(sampleRate: sampleRate, channels: channels, milliseconds: value("ms")))
        case .eq:
            return BuiltInProcessor(
                kind: .eq,
                eq: EQBandProcessor(
                    sampleRate: sampleRate, channels: channels, frequency: value("freq"), decibels: value("db"), q: value("q")))
        case .limiter:
            return BuiltInProcessor(
                kind: .limiter,
                limiter: LimiterProcessor(
                    sampleRate: sampleRate, channels: channels, ceilingDB: value("ceiling"),
                    releaseMilliseconds: value("release")))
        }
    }

    /// Frames by which the output lags the input (the limiter's lookahead; 0 for the others).
    public var latencyFrames: Int { limiter?.latencyFrames ?? 0 }

    /// Sets parameter `index` (in `parameters(of:)`'s order) to a value already checked against its range.
    public mutating func set(_ index: Int, to value: Double) {
        switch kind {
        case .gain: gain?.set(index, to: value)
        case .delay: delay?.set(index, to: value)
        case .eq: eq?.set(index, to: value)
        case .limiter: limiter?.set(index, to: value)
        }
    }

    /// Processes `frames` interleaved frames of `channels` channels in place.
    public mutating func process(_ samples: UnsafeMutableBufferPointer<Float>, frames: Int, channels: Int) {
        switch kind {
        case .gain: gain?.process(samples, frames: frames, channels: channels)
        case .delay: delay?.process(samples, frames: frames, channels: channels)
        case .eq: eq?.process(samples, frames: frames, channels: channels)
        case .limiter: limiter?.process(samples, frames: frames, channels: channels)
        }
    }
}
