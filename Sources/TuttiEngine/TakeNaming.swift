/// The file names of a WAV receiver's takes. Take 1 is the configured path (`foh.wav`); take n ≥ 2 puts
/// `-n` before the extension (`foh-2.wav`, `foh-3.wav`…; a path without an extension gets `foh-2`). The
/// extension is what follows the last dot of the file name, unless that dot starts the name (`.wav` has
/// none), and a dot in a directory name never counts (`takes.d/foh` → `takes.d/foh-2`).
///
/// A recorder never overwrites a file: the port creates each take exclusively and, when a name is taken
/// (an earlier run's take, or any other file), moves on to the next number (`candidates(after:)`).
/// Pure value type; any thread.
package struct TakeNaming: Hashable, Sendable {
    /// The configured path: take 1's file.
    package let path: String

    /// How many numbers `candidates(after:)` tries before giving up (a directory with 10 000 takes of one
    /// port is a mistake, not a session).
    package static let maximumTakes = 10_000

    /// The file of take `number` (1-based).
    package func path(ofTake number: Int) -> String {
        precondition(number >= 1, "takes are numbered from 1")
        guard number > 1 else { return path }
        let nameStart = path.lastIndex(of: "/").map { path.index(after: $0) } ?? path.startIndex
        if let dot = path[nameStart...].lastIndex(of: "."), dot != nameStart {
            return "\(path[..<dot])-\(number)\(path[dot...])"
        }
        return "\(path)-\(number)"
    }

    /// The file of track `track` (1-based) of take `number`, for a port that writes a file per track: `-trackN`
    /// before the extension of the take's file (`foh-track1.wav`, `foh-2-track1.wav`).
    package func path(ofTake number: Int, track: Int) -> String {
        precondition(track >= 1, "tracks are numbered from 1")
        let take = path(ofTake: number)
        let nameStart = take.lastIndex(of: "/").map { take.index(after: $0) } ?? take.startIndex
        if let dot = take[nameStart...].lastIndex(of: "."), dot != nameStart {
            return "\(take[..<dot])-track\(track)\(take[dot...])"
        }
        return "\(take)-track\(track)"
    }

    /// The directory the takes go to: the path up to its last `/` ("." for a bare name, "/" at the root).
    package var directory: String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let head = path[..<slash]
        return head.isEmpty ? "/" : String(head)
    }

    /// Whether the path names a directory rather than a file (empty, or ending in `/`, `.` or `..`).
    package var isDirectoryPath: Bool {
        let name = path.lastIndex(of: "/").map { path[path.index(after: $0)...] } ?? path[...]
        return name.isEmpty || name == "." || name == ".."
    }

    /// The take numbers to try, in order, for the take after take `last` (0: none yet): `last + 1` up to
    /// `maximumTakes`.
    package func candidates(after last: Int) -> ClosedRange<Int> {
        let first = min(last + 1, Self.maximumTakes)
        return first...Self.maximumTakes
    }
}
