/// "Did you mean" for names typed by hand: the candidate closest to what was typed, if it is close
/// enough to be a slip (an edit distance of at most a third of the longer name, and at most 3; letter
/// case ignored). Pure.
enum NearMiss {
    /// The closest of `candidates` to `typed`, or nil when none is near (or `typed` is one of them).
    static func suggestion(for typed: String, among candidates: [String]) -> String? {
        let lowered = typed.lowercased()
        var best: (name: String, distance: Int)?
        for candidate in candidates {
            let distance = editDistance(lowered, candidate.lowercased())
            guard distance > 0 else { return nil }
            let limit = min(3, max(1, max(typed.count, candidate.count) / 3))
            guard distance <= limit else { continue }
            if best == nil || distance < best!.distance { best = (candidate, distance) }
        }
        return best?.name
    }

    /// ` (did you mean 'NAME'?)`, or "" when nothing is near.
    static func hint(for typed: String, among candidates: [String]) -> String {
        suggestion(for: typed, among: candidates).map { " (did you mean '\($0)'?)" } ?? ""
    }

    /// Edit distance over characters, where an insertion, a deletion, a substitution and a swap of two
    /// neighbours ("stgae" for "stage") each count one (optimal string alignment).
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var beforePrevious = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], beforePrevious[j - 2] + 1)
                }
            }
            (beforePrevious, previous, current) = (previous, current, beforePrevious)
        }
        return previous[b.count]
    }
}
