/// Which track of a separate-mode receiver port (`mode=separate,tracks=N`) each incoming pipeline plays on: one
/// track per pipeline key (the IDs of the pipelines a connection carries), kept for the port's life, so a
/// pipeline that reconnects (after a network cut, a peer's restart) lands on the track it had.
///
/// A new key takes the lowest track no key has had yet; when every track has had one, the track freed longest
/// ago (its key not connected now) is given to the new key, which takes its place for good; when every track
/// is live, there is none (the connection is refused, in one line, by the caller).
///
/// A value; thread-safe: no (the control plane owns it).
package struct TrackAssignment: Sendable {
    /// Tracks the port has (its take's channels are tracks × the port's channels).
    package let trackCount: Int
    /// The key each track was last given (nil: never used).
    package private(set) var owners: [String?]
    /// Tracks playing a live connection now.
    package private(set) var live: Set<Int> = []
    /// Tracks freed, the longest-freed first.
    private var freed: [Int] = []

    package init(trackCount: Int) {
        precondition(trackCount > 0)
        self.trackCount = trackCount
        owners = Array(repeating: nil, count: trackCount)
    }

    /// The track for a connection of `key`, marked live: the key's own track when it has one that is free, else
    /// a new one as the type's comment says; nil when none is free.
    package mutating func take(_ key: String) -> Int? {
        if let own = owners.firstIndex(of: key), !live.contains(own) {
            return claim(own, for: key)
        }
        if let unused = owners.firstIndex(where: { $0 == nil }) {
            return claim(unused, for: key)
        }
        guard let oldest = freed.first(where: { !live.contains($0) }) else { return nil }
        return claim(oldest, for: key)
    }

    /// The connection on `track` ended: the track keeps its key (for a reconnect) and may be reused later.
    package mutating func release(_ track: Int) {
        guard live.remove(track) != nil else { return }
        freed.removeAll { $0 == track }
        freed.append(track)
    }

    private mutating func claim(_ track: Int, for key: String) -> Int {
        owners[track] = key
        live.insert(track)
        freed.removeAll { $0 == track }
        return track
    }
}
