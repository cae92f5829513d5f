/// A processor and its parameter values as the user writes them: `gain,db=-6`, `eq,freq=250,db=-3,q=1.4`,
/// `limiter`, or a hosted LV2 plug-in, `lv2,uri=URI,PARAM=VALUE…` (its parameters are its control ports, read
/// by the host that loads it). Every parameter name and every value is checked against its range, so a port is
/// never made with a value the processor would not take. A value; thread-safe: yes (any thread).
public struct ProcessorSpecification: Hashable, Sendable, Codable, CustomStringConvertible {
    /// A built-in processor's name, or `lv2`.
    public private(set) var name: String
    /// The LV2 plug-in's URI, for `lv2`.
    public private(set) var uri: String?
    /// The processor's parameters, in order.
    public private(set) var parameters: [ProcessorParameter]
    /// Every parameter's value, in the processor's order (defaults where not given).
    public private(set) var values: [Double]

    /// An LV2 plug-in with its control ports' defaults (`parameters`, from the plug-in's description).
    public init(lv2 uri: String, parameters: [ProcessorParameter]) {
        name = "lv2"
        self.uri = uri
        self.parameters = parameters
        values = parameters.map(\.defaultValue)
    }

    /// An application's own processing (the engine's `AudioBlock`): no parameters; described as `app:NAME`.
    public init(application name: String) {
        self.name = "app:\(name)"
        uri = nil
        parameters = []
        values = []
    }

    /// Parses `NAME[,PARAM=VALUE…]`.
    ///
    /// - Throws: `ProcessorError`, one line: an unknown processor (naming those there are), an unknown
    ///   parameter (naming the processor's), a value that is not a number or out of its range (naming it).
    public init(parsing text: String) throws(ProcessorError) {
        let fields = text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        let name = Self.trimmed(fields[0]).lowercased()
        guard let parameters = BuiltInProcessor.parameters(of: name) else {
            throw ProcessorError(
                "unknown processor '\(fields[0])': the built-in ones are \(BuiltInProcessor.names.joined(separator: ", "))")
        }
        self.name = name
        self.parameters = parameters
        values = parameters.map(\.defaultValue)
        for field in fields.dropFirst() {
            let pair = field.split(separator: "=", maxSplits: 1).map { Self.trimmed(Substring($0)) }
            guard pair.count == 2 else {
                throw ProcessorError("'\(field)' is not PARAMETER=VALUE (\(name) takes \(parameters.map(\.name).joined(separator: ", ")))")
            }
            try set(pair[0], to: pair[1])
        }
    }

    static func trimmed<S: StringProtocol>(_ text: S) -> String {
        String(text.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }

    /// Sets one parameter from the user's text (for `tutti set`); returns its index.
    ///
    /// - Throws: `ProcessorError`: an unknown parameter, or a value that is not a number or out of range.
    @discardableResult
    public mutating func set(_ parameter: String, to text: String) throws(ProcessorError) -> Int {
        let parameters = self.parameters
        guard let index = parameters.firstIndex(where: { $0.name == parameter.lowercased() }) else {
            throw ProcessorError(
                "\(name) has no parameter '\(parameter)': it takes \(parameters.map(\.name).joined(separator: ", "))")
        }
        let descriptor = parameters[index]
        guard let value = Double(text), value.isFinite else {
            throw ProcessorError("\(name) \(descriptor.name) must be a number (got '\(text)')")
        }
        guard descriptor.range.contains(value) else {
            let unit = descriptor.unit.isEmpty ? "" : " \(descriptor.unit)"
            throw ProcessorError(
                "\(name) \(descriptor.name) must be between \(ProcessorParameter.format(descriptor.range.lowerBound)) and \(ProcessorParameter.format(descriptor.range.upperBound))\(unit) (got \(text))"
            )
        }
        values[index] = value
        return index
    }

    /// Frames by which a built-in processor's output lags its input at `sampleRate` (its processing latency); 0 for an
    /// LV2 plug-in, which reports its own once it runs.
    public func latencyFrames(sampleRate: Int) -> Int {
        name == BuiltInProcessor.Kind.limiter.rawValue ? LimiterProcessor.lookaheadFrames(sampleRate: sampleRate) : 0
    }

    /// A parameter's value by name (its default if the name is not one of this processor's).
    public func value(of parameter: String) -> Double {
        guard let index = parameters.firstIndex(where: { $0.name == parameter }) else { return 0 }
        return values[index]
    }

    /// `gain,db=-6` (`lv2,uri=URI,gain=-6`): every parameter, as `init(parsing:)` (or the CLI's `--filter`) reads
    /// it back.
    public var description: String {
        ([name] + (uri.map { ["uri=\($0)"] } ?? []) + zip(parameters, values).map { "\($0.name)=\(ProcessorParameter.format($1))" })
            .joined(separator: ",")
    }
}
