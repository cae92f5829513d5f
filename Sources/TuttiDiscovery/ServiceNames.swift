/// Rules for DNS-SD instance names. Pure functions: call them on any thread.
enum ServiceNames {
    /// The longest instance name DNS-SD allows, in UTF-8 bytes (one DNS label).
    static let maximumLength = 63
    /// The name used when the caller passes an empty one.
    static let fallbackName = "Tutti"

    /// Makes `name` publishable instead of failing: NUL characters are dropped, an empty name
    /// becomes ``fallbackName``, and a name longer than 63 UTF-8 bytes is cut at the last whole
    /// character that fits.
    static func sanitize(_ name: String) -> String {
        var result = ""
        var length = 0
        for character in name where character != "\0" {
            let size = String(character).utf8.count
            guard length + size <= maximumLength else { break }
            result.append(character)
            length += size
        }
        return result.isEmpty ? fallbackName : result
    }
}
