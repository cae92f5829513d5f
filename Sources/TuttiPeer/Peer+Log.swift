import TuttiCore
import TuttiSession
import TuttiWire

/// How the peer's log words the lifecycle's events (the lines users and the lab tests read). Control plane
/// (the actor).
extension Peer {
    func report(_ event: LifecycleEvent) {
        switch event {
        case .refused(let source, let destination, let failure):
            logger.info("refused \(source) → \(destination): \(failure.message)")
        case .alreadyConnected(let summary):
            logger.info("connect \(summary.source) → \(summary.destination): already connected [\(summary.id)]")
        case .sending(let plan):
            let summary = plan.summary
            let address = sending[summary.id].map { "\($0.connection.destination)" } ?? "\(plan.mediaHost) port \(plan.mediaPort)"
            // A standard receiver (no peer endpoint) buffers on its own: the target latency is not ours to report.
            let format = plan.peerEndpoint == nil ? summary.format.wireDescription : summary.format.description
            logger.info("connection \(summary.id): \(summary.source) → \(summary.destination) at \(address), \(format)")
        case .receiving(let plan, let mediaPort):
            let summary = plan.summary
            let entry = receiving[summary.id]
            let outputRate = entry?.connection.receiver.outputSampleRate ?? plan.deviceRate
            let conversion = outputRate != summary.format.sampleRate ? ", converted to \(outputRate) Hz" : ""
            let take = entry?.port.takePath.map { ", recording \($0)" } ?? ""
            let track = summary.track.map { ", track \($0 + 1)" } ?? ""
            logger.info(
                "connection \(summary.id): receiving \(summary.source) → \(summary.destination)\(track) on UDP port \(mediaPort), \(summary.format)\(conversion)\(take)"
            )
        case .playing(let summary):
            logger.info("connection \(summary.id) from \(summary.source) playing")
        case .lost(let summary):
            logger.warning(
                "connection \(summary.id) from \(summary.source) lost: no packets for \(configuration.signalLossTimeout), playing silence")
        case .resumed(let summary):
            logger.info("connection \(summary.id) from \(summary.source) resumed")
        case .outputFailed(let port, let reason, let connections):
            let ids = connections.map(\.description)
            logger.error("receiver \(port): \(reason) (connection\(ids.count == 1 ? "" : "s") \(ids.joined(separator: ", ")) failed)")
        case .feedback(let port, let warning):
            logger.warning("receiver \(port): \(warning)")
        case .peerFound(let peer, let saidHello):
            let endpoints = peer.endpoints.map(\.description).joined(separator: ", ")
            logger.info("found peer \(peer.name) at \(endpoints)\(saidHello ? " (it said hello)" : "")")
        case .peerLeft(let name):
            logger.info("peer \(name) left")
        }
    }
}
