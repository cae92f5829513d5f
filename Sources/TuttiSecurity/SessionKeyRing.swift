/// The session keys a peer holds: the current one, which it offers when it connects, and during a key change
/// the ones it still accepts from members that have not changed yet. The text of a key file: one key per
/// line, the current one first; blank lines and lines starting with `#` are ignored.
///
/// A value; thread-safe: yes.
public struct SessionKeyRing: Hashable, Sendable {
    /// At most this many keys in one ring: a change needs two, a third for a change begun before the last
    /// one ended.
    public static let capacity = 4

    /// Every key held, the current one first. Never empty.
    public let keys: [SessionKey]

    /// - Precondition: `keys` holds 1 to `capacity` keys.
    public init(_ keys: [SessionKey]) {
        precondition((1...Self.capacity).contains(keys.count), "a key ring holds 1 to \(Self.capacity) keys")
        self.keys = keys
    }

    /// The key this peer connects with.
    public var current: SessionKey { keys[0] }

    /// Reads a key file's text.
    ///
    /// - Throws: `SessionKeyRingError`: no key in it, too many, or a line that is not a key (with its number).
    public init(fileText: String) throws(SessionKeyRingError) {
        var keys: [SessionKey] = []
        for (number, line) in fileText.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingSpaces
            guard !trimmed.isEmpty, !trimmed.hasPrefix("#") else { continue }
            do throws(SessionKeyError) {
                let key = try SessionKey(text: trimmed)
                if !keys.contains(key) { keys.append(key) }
            } catch {
                throw .invalidLine(number + 1, error)
            }
        }
        guard !keys.isEmpty else { throw .empty }
        guard keys.count <= Self.capacity else { throw .tooMany(keys.count) }
        self.init(keys)
    }

    /// A key file's text: a comment, then one key per line, the current one first.
    public var fileText: String {
        "# Tutti session key: whoever holds it is a member of the session. The first key is the current one.\n"
            + keys.map { $0.text + "\n" }.joined()
    }
}

/// Why a key file could not be read. A value; thread-safe: yes.
public enum SessionKeyRingError: Error, Hashable, Sendable, CustomStringConvertible {
    case empty
    case tooMany(Int)
    case invalidLine(Int, SessionKeyError)

    public var description: String {
        switch self {
        case .empty: "it holds no session key"
        case .tooMany(let count): "it holds \(count) keys, at most \(SessionKeyRing.capacity) are allowed"
        case .invalidLine(let number, let error): "line \(number): \(error)"
        }
    }
}

extension Substring {
    fileprivate var trimmingSpaces: String {
        String(drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }
}
