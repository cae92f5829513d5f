import TuttiCore
import TuttiEngine
import TuttiStream
import TuttiWire

/// Mute and unmute (`tutti mute`), of a port or of one connection from it, with short fades: no click, the
/// stream and its timing untouched (muted audio is sent, or played, as silence). Control plane (the actor).
extension Peer {
    /// The mute of port `name`, whatever its kind.
    func fader(ofPort name: String) -> MuteFader? {
        senderPorts[name]?.fader ?? receiverPorts[name]?.fader ?? filterPorts[name]?.fader
    }

    /// Mutes or unmutes a port (everything it sends, or plays) or every connection from it to `destination`.
    func mute(_ request: MuteRequest) -> ControlResponse {
        let port = PortReference(peer: name, port: request.port)
        let verb = request.muted ? "muted" : "unmuted"
        guard let portFader = fader(ofPort: request.port) else {
            let ports = configuration.ports.map(\.descriptor.name).sorted().joined(separator: ", ")
            return .failure(ControlFailure(.unknownPort, "peer \(name) has no port '\(request.port)' (ports: \(ports.nonEmpty ?? "none"))"))
        }
        guard let destination = request.destination else {
            portFader.isMuted = request.muted
            logger.info("\(verb) \(port)")
            return .muted(MuteState(port: port, connections: [], muted: request.muted))
        }
        let matching = sending.values.filter { entry in
            let summary = entry.connection.summary
            return summary.source.port == request.port && summary.destination.port == destination.port
                && summary.destination.peer.lowercased() == destination.peer.lowercased()
        }
        guard !matching.isEmpty else {
            return .failure(ControlFailure(.notFound, "\(port) is not connected to \(destination)"))
        }
        for entry in matching { entry.connection.fader.isMuted = request.muted }
        let ids = matching.map(\.connection.id).sorted { $0.rawValue < $1.rawValue }
        logger.info("\(verb) \(port) → \(destination) [\(ids.map(\.description).joined(separator: ", "))]")
        return .muted(MuteState(port: port, connections: ids, muted: request.muted))
    }
}
