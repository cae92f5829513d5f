import TuttiCore
import TuttiEngine
import TuttiSRTP
import TuttiWire

/// What `describe` and `stats` answer. Control plane (the actor).
extension Peer {
    /// The peer, its ports, its live connections (receivers with their stream's state now) and the peers it knows.
    func describe() -> PeerDescription {
        let connections = lifecycle.liveSummaries.map { summary in
            if summary.role == .sending {
                var summary = summary
                summary.muted = sending[summary.id]?.connection.fader.isMuted == true ? true : nil
                summary.srtp = sending[summary.id]?.connection.srtpSuite
                return summary
            }
            guard let entry = receiving[summary.id] else { return summary }
            var current = entry.connection.currentSummary
            current.srtp = entry.connection.verifier?.suite.rawValue
            return current
        }
        let routes = lifecycle.routes.map { route in
            var route = route
            route.muted = fader(ofPort: route.port)?.isMuted == true ? true : nil
            return route
        }
        var description = PeerDescription(
            id: id, name: name, host: Self.hostName, protocolVersion: ControlProtocol.version,
            ports: configuration.ports.map(\.descriptor), connections: connections,
            knownPeers: lifecycle.directory.knownPeers, runningSampleRates: runningSampleRates,
            filters: filterPorts.isEmpty ? nil : filterStates, routes: routes, refusals: refusals)
        description.access = SessionAccess(
            membersOnly: sessionKeys != nil, keyFingerprint: sessionKeys?.current.fingerprint,
            publicReads: sessionKeys != nil && configuration.publicReads)
        return description
    }

    /// What the control channel and the directory turned away since start.
    var refusals: ControlRefusals {
        var refusals = server.refusals
        refusals.peersTurnedAway = lifecycle.directory.refused
        refusals.linkStatesTurnedAway = link?.statesTurnedAway
        refusals.linkMalformed = link?.malformedDatagrams
        return refusals
    }

    /// The rate of every port that runs now (a sender while it streams or a jack port; a receiver while it plays).
    private var runningSampleRates: [String: Int] {
        var rates = [String: Int]()
        for (name, port) in senderPorts { rates[name] = port.activeSampleRate }
        for (name, port) in receiverPorts { rates[name] = port.activeSampleRate }
        for (name, port) in filterPorts { rates[name] = port.activeSampleRate }
        return rates
    }

    /// Every started connection's counters, with its port's device figures.
    func statistics() -> [ConnectionStatistics] {
        let problem = jackProblem
        let sent = sending.values.map { entry in
            var figures = entry.connection.statistics()
            figures.setDevice(entry.port.deviceFigures, isJACK: entry.port.isJACK)
            if entry.port.isJACK { figures.deviceProblem = problem }
            return figures
        }
        let received = receiving.values.map { entry in
            var figures = entry.connection.statistics()
            figures.setDevice(entry.port.deviceFigures, isJACK: entry.port.isJACK)
            figures.strayDatagrams = entry.port.strayDatagrams
            if entry.port.isJACK { figures.deviceProblem = problem }
            return figures
        }
        return (sent + received).sorted { $0.id.rawValue < $1.id.rawValue }
    }
}

extension ConnectionStatistics {
    /// The port's device clock figures: overruns always, wake-ups only for a paced clock (JACK keeps its own).
    fileprivate mutating func setDevice(_ device: DeviceClockFigures, isJACK: Bool) {
        deviceOverruns = device.overruns
        guard !isJACK else { return }
        deviceLateWakes = device.lateWakes
        deviceWorstWakeMilliseconds = device.worstWakeLatenessMilliseconds
    }
}
