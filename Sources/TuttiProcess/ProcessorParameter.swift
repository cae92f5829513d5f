/// One parameter of a processor, as `tutti set` and `tutti ls` show it: its name, unit, range and default.
/// A value; thread-safe: yes (any thread).
public struct ProcessorParameter: Hashable, Sendable, Codable, CustomStringConvertible {
    /// What `set` names it by (`db`, `freq`, …).
    public var name: String
    /// What it means, in a few words.
    public var title: String
    /// "dB", "Hz", "ms" or "" for plain numbers.
    public var unit: String
    public var range: ClosedRange<Double>
    public var defaultValue: Double

    public init(name: String, title: String, unit: String, range: ClosedRange<Double>, defaultValue: Double) {
        self.name = name
        self.title = title
        self.unit = unit
        self.range = range
        self.defaultValue = defaultValue
    }

    /// `db=-6 dB (gain, -96…24 dB)`-style, for listings.
    public var description: String {
        let unit = self.unit.isEmpty ? "" : " \(self.unit)"
        return
            "\(name) (\(title), \(Self.format(range.lowerBound))…\(Self.format(range.upperBound))\(unit), default \(Self.format(defaultValue)))"
    }

    /// A number without a needless ".0".
    static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }
}

/// Why a processor or a parameter value was refused, in one line for the user. A value; thread-safe: yes.
public struct ProcessorError: Error, Hashable, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
