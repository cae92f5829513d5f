/// One parameter setting as the user wrote it (`db=-6`): checked by the peer against the processor's range.
/// A value; thread-safe: yes.
public struct ParameterSetting: Hashable, Sendable, Codable {
    public var name: String
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// Asks a peer to change parameters of one of its filter ports, live: all of them, in order, or none (the
/// first refused one is named). → `.filter` (the port's processor now) or `.failure`. A value; thread-safe: yes.
public struct SetParametersRequest: Hashable, Sendable, Codable {
    public var port: String
    public var settings: [ParameterSetting]

    public init(port: String, settings: [ParameterSetting]) {
        self.port = port
        self.settings = settings
    }
}

/// A filter port's processor as it is now: what `set` answers and `describe` lists. A value; thread-safe: yes.
public struct FilterState: Hashable, Sendable, Codable, CustomStringConvertible {
    public var port: String
    /// The processor and every parameter's value: `gain,db=-6`.
    public var processor: String
    /// Frames by which its output lags its input at `sampleRate` (its processing latency).
    public var latencyFrames: Int
    /// The rate it runs at now, or the rate `latencyFrames` is counted at while idle.
    public var sampleRate: Int

    public init(port: String, processor: String, latencyFrames: Int, sampleRate: Int) {
        self.port = port
        self.processor = processor
        self.latencyFrames = latencyFrames
        self.sampleRate = sampleRate
    }

    /// `fx: gain,db=-6` (with `, latency 1.5 ms` when it has one).
    public var description: String {
        let latency = latencyFrames == 0 ? "" : ", latency \(Double(latencyFrames * 10_000 / sampleRate) / 10) ms"
        return "\(port): \(processor)\(latency)"
    }
}
