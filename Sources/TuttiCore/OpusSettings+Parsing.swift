/// Parsing of the settings' fields from user text (CLI options, config files). Pure; thread-safe: yes.
/// Parsing checks the syntax and, for frame durations and applications, the value; numeric ranges are
/// `OpusSettings.validate()`'s job, so a parsed value is still validated once the settings are assembled.
extension OpusSettings {
    /// Parses a bitrate in bits per second: `128000`, `96k`, `96K`, `6.5k`, `96kbps`, `96kb/s`, `128000bps`,
    /// `128000b/s` (whitespace around the number and before the unit is allowed).
    ///
    /// - Throws: `.unparsableBitrate` unless the text is a nonnegative number with one of those units that
    ///   comes to a whole number of bits per second.
    public static func parseBitrate(_ text: String) throws(OpusSettingsError) -> Int {
        var body = Substring(text.lowercased()).trimmingSpaces
        var multiplier = 1
        for (suffix, factor) in [("kbps", 1_000), ("kb/s", 1_000), ("k", 1_000), ("bps", 1), ("b/s", 1)]
        where body.hasSuffix(suffix) {
            body = body.dropLast(suffix.count).trimmingSpaces
            multiplier = factor
            break
        }
        guard let thousandths = parseThousandths(body), thousandths * multiplier % 1_000 == 0 else {
            throw .unparsableBitrate(text)
        }
        return thousandths * multiplier / 1_000
    }

    /// Parses an expected packet loss in percent: `10`, `10%`, `10 %`.
    ///
    /// - Throws: `.unparsablePacketLoss` unless the text is a nonnegative integer, optionally followed by `%`.
    public static func parsePacketLossPercent(_ text: String) throws(OpusSettingsError) -> Int {
        var body = Substring(text).trimmingSpaces
        if body.hasSuffix("%") { body = body.dropLast().trimmingSpaces }
        guard let thousandths = parseThousandths(body), thousandths % 1_000 == 0 else {
            throw .unparsablePacketLoss(text)
        }
        return thousandths / 1_000
    }

    /// Parses a decimal number with at most three decimals (`2.5`, `96`, `0.125`) into thousandths, or nil.
    /// Digits only: no sign, no exponent, at most nine digits before the point.
    static func parseThousandths(_ text: Substring) -> Int? {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let whole = parts[0]
        let fraction = parts.count > 1 ? parts[1] : ""
        guard !whole.isEmpty, whole.count <= 9, fraction.count <= 3, parts.count == 1 || !fraction.isEmpty,
            whole.allSatisfy(\.isASCIIDigit), fraction.allSatisfy(\.isASCIIDigit)
        else { return nil }
        var value = Int(whole)! * 1_000
        var scale = 100
        for digit in fraction {
            value += Int(String(digit))! * scale
            scale /= 10
        }
        return value
    }
}

extension OpusSettings.FrameDuration {
    /// Parses a frame duration in milliseconds: `2.5ms`, `2.5 ms`, `2.5`, `5`, `10ms`, `20`.
    ///
    /// - Throws: `.unparsableFrameDuration` for text that is not a duration, `.unsupportedFrameDuration` for a
    ///   duration Tutti does not use (e.g. `40ms`; Opus also has 40, 60, 80, 100 and 120 ms packets).
    public init(parsing text: String) throws(OpusSettingsError) {
        var body = Substring(text.lowercased()).trimmingSpaces
        if body.hasSuffix("ms") { body = body.dropLast(2).trimmingSpaces }
        guard let thousandths = OpusSettings.parseThousandths(body) else { throw .unparsableFrameDuration(text) }
        guard let match = Self.allCases.first(where: { $0.framesPerChannel * 1_000 == thousandths * 48 }) else {
            throw .unsupportedFrameDuration(text)
        }
        self = match
    }
}

extension OpusSettings.Application {
    /// Parses an application: `lowdelay` (also `low-delay`, `restricted-lowdelay`), `audio` (also `music`),
    /// `voip` (also `voice`); case-insensitive.
    ///
    /// - Throws: `.unparsableApplication` for anything else.
    public init(parsing text: String) throws(OpusSettingsError) {
        switch Substring(text.lowercased()).trimmingSpaces {
        case "lowdelay", "low-delay", "restricted-lowdelay", "restricted-low-delay": self = .restrictedLowDelay
        case "audio", "music": self = .audio
        case "voip", "voice": self = .voip
        default: throw .unparsableApplication(text)
        }
    }
}

extension Substring {
    /// Without leading and trailing spaces and tabs.
    fileprivate var trimmingSpaces: Substring {
        var result = self
        while let first = result.first, first == " " || first == "\t" { result = result.dropFirst() }
        while let last = result.last, last == " " || last == "\t" { result = result.dropLast() }
        return result
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isWholeNumber }
}
