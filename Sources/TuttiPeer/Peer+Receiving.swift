import TuttiCore
import TuttiEngine
import TuttiSRTP
import TuttiSession
import TuttiWire

/// The receiving side's engine work: what the receiver ports can take now, starting and stopping a receiving
/// connection on its port, and watching what its stream does. Control plane (the actor).
extension Peer {
    /// What each receiver port can take now, by name (a port already playing takes new streams at its rate).
    var receiverPortsNow: [String: ConnectionLifecycle.PortNow] {
        var ports = receiverPorts.mapValues { port in
            ConnectionLifecycle.PortNow(
                currentRates: [], activeSampleRate: port.activeSampleRate, clock: port.configuration.isJACK ? "jack" : "system")
        }
        for (name, port) in filterPorts {
            ports[name] = ConnectionLifecycle.PortNow(currentRates: [], activeSampleRate: port.activeSampleRate, clock: "system")
        }
        return ports
    }

    /// The receiver or filter port `name` plays into.
    func receivingPort(_ name: String) -> ReceivingPort? {
        if let port = receiverPorts[name] { return .receiver(port) }
        return filterPorts[name].map { .filter($0) }
    }

    /// Makes the connection's stream receiver and adds it to its port (its media socket, its device clock);
    /// feeds `.started` with the UDP port the sender sends to, or `.startFailed`.
    func startReceiving(_ plan: ConnectionLifecycle.ReceivePlan) async {
        let id = plan.summary.id
        guard let port = receivingPort(plan.port) else {
            step(.startFailed(id, .receiving, message: "no receiver port \(plan.port)"))
            return
        }
        let connection: ReceiveConnection
        do {
            connection = try ReceiveConnection(
                summary: plan.summary, ssrc: plan.ssrc, payloadType: plan.payloadType, peerEndpoint: plan.senderEndpoint,
                captureClock: plan.captureClock, maxPeriodFrames: configuration.periodFrames,
                signalLossTimeout: configuration.signalLossTimeout, concealment: configuration.concealment,
                outputSampleRate: plan.deviceRate, driftCompensation: configuration.driftCompensation, remoteClock: plan.remoteClock,
                mediaKey: incomingMediaKeys.removeValue(forKey: id))
            try await port.add(connection)
        } catch {
            step(.startFailed(id, .receiving, message: error.message))
            return
        }
        receiving[id] = (connection, port)
        step(.started(id, .receiving, mediaPort: connection.mediaPort ?? 0))
    }

    /// Where a receiving connection's stream arrives (its media socket's UDP port) and the SSRC that names
    /// it there, while it runs: for tests that send it what a stranger would.
    package func mediaStream(of id: ConnectionID) -> (port: UInt16, ssrc: UInt32)? {
        guard let connection = receiving[id]?.connection, let port = connection.mediaPort else { return nil }
        return (port, connection.receiver.ssrc)
    }

    /// Takes a receiving connection off its port, and logs why it ended, its final figures and the take it
    /// closed (when it was the take's last connection).
    func stopReceiving(_ id: ConnectionID, reason: String) async {
        guard let entry = receiving.removeValue(forKey: id) else { return }
        observations[id] = nil
        let take = await entry.port.remove(entry.connection)
        let final = entry.connection.statistics()
        let summary = entry.connection.summary
        logger.info(
            "connection \(id) (\(summary.source) → \(summary.destination)) \(reason); final: received \(final.packetsReceived), lost \(final.packetsLost), late \(final.packetsLate), duplicated \(final.packetsDuplicated), reordered \(final.packetsReordered), invalid \(final.packetsInvalid), concealed \(final.concealedFrames) frames, underruns \(final.underruns), pending \(final.packetsPending), FEC-recovered \(final.fecRecoveredFrames) frames"
        )
        if let take, take.path != nil {
            logger.info(
                "receiver \(entry.port.name): take \(take.paths.joined(separator: ", ")) closed, \((take.seconds * 10).rounded() / 10) s\(take.failure.map { " (\($0))" } ?? "")"
            )
        }
    }

    /// Feeds what each receiving stream does now, when it changed. A port's output failure is fed once per
    /// failure, by the first of its connections to see it.
    func observeReceivers() {
        for id in receiving.keys.sorted(by: { $0.rawValue < $1.rawValue }) {
            guard let connection = receiving[id]?.connection else { continue }
            let observation: ConnectionLifecycle.MediaObservation
            switch connection.state {
            case .buffering: observation = .buffering
            case .playing: observation = .playing
            case .lost: observation = .lost
            case .failed:
                if case .outputFailed = observations[id] { continue }
                guard let reason = connection.sinkFailure?.claimReport() else { continue }
                observation = .outputFailed(reason: reason)
            }
            guard observations[id] != observation else { continue }
            observations[id] = observation
            step(.observed(id, observation))
        }
    }
}
