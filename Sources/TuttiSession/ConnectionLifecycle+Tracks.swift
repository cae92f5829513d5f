import TuttiCore
import TuttiWire

/// The tracks of separate-mode receiver ports (`mode=separate,tracks=N`): each receiving connection takes the
/// track of its pipelines (`TrackAssignment`), so a pipeline that reconnects, after a network cut or a restart
/// of any peer on its way, lands on the track it had; a port whose tracks all play is full.
extension ConnectionLifecycle {
    /// The key of a connection's track: the IDs of the pipelines it brings to `destination` (its source's
    /// chains extended to the port), sorted. A filter that mixes two chains is one track. Pure.
    static func trackKey(upstream: [Pipeline], destination: PortReference) -> String {
        upstream.map { $0.extended(to: destination).id }.sorted().joined(separator: "+")
    }

    /// Gives a new connection to separate-mode port `name` (of `tracks` tracks) its track, or the one-line
    /// refusal when every track plays another pipeline. Thread-safe: a value.
    mutating func takeTrack(port name: String, tracks: Int, upstream: [Pipeline], destination: PortReference) -> Result<
        Int, ControlFailure
    > {
        var assignment = trackAssignments[name] ?? TrackAssignment(trackCount: tracks)
        defer { trackAssignments[name] = assignment }
        let key = Self.trackKey(upstream: upstream, destination: destination)
        if let track = assignment.take(key) { return .success(track) }
        let playing = receiving.values.filter { $0.holdsTrack && $0.plan.port == name }
            .sorted { ($0.plan.summary.track ?? 0) < ($1.plan.summary.track ?? 0) }
            .map { "track \(($0.plan.summary.track ?? 0) + 1): \($0.plan.summary.source)" }
        return .failure(
            ControlFailure(
                .busy,
                "\(destination) has \(tracks) track\(tracks == 1 ? "" : "s") and each plays a pipeline now (\(playing.joined(separator: ", "))); "
                    + "disconnect one first, or give the port more (tracks=N)"))
    }

    /// Frees the track a receiving connection holds (once: when it starts closing, or is discarded). Thread-safe:
    /// a value.
    mutating func freeTrack(of id: ConnectionID) {
        guard let entry = receiving[id], entry.holdsTrack, let track = entry.plan.summary.track else { return }
        receiving[id]?.holdsTrack = false
        trackAssignments[entry.plan.port]?.release(track)
    }
}
