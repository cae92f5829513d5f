import TuttiCore
import TuttiEngine
import TuttiIO
import TuttiSRTP
import TuttiSession
import TuttiWire

/// The sending side's engine work: what the sender ports can do now, and starting and stopping a sending
/// connection on its port. Control plane (the actor).
extension Peer {
    /// What each sender port can stream at now, by name (a port's device clock runs at one rate for all its
    /// connections).
    var senderPortsNow: [String: ConnectionLifecycle.PortNow] {
        var ports = senderPorts.mapValues { port in
            ConnectionLifecycle.PortNow(currentRates: port.currentRates, clock: port.configuration.isJACK ? "jack" : "system")
        }
        for (name, port) in filterPorts { ports[name] = ConnectionLifecycle.PortNow(currentRates: port.currentRates, clock: "system") }
        return ports
    }

    /// The sender or filter port `name` sends from.
    func sendingPort(_ name: String) -> SendingPort? {
        if let port = senderPorts[name] { return .sender(port) }
        return filterPorts[name].map { .filter($0) }
    }

    /// Opens the connection's destination on its port's media socket and adds it to the port: `.started` or
    /// `.startFailed`. A media host that is not an address literal (the lifecycle passes one only when the
    /// control connection gave none) is resolved off the actor.
    func startSending(_ plan: ConnectionLifecycle.SendPlan) async -> ConnectionLifecycle.Input {
        let address: UDPAddress
        if let numeric = try? UDPAddress(numericHost: plan.mediaHost, port: plan.mediaPort) {
            address = numeric
        } else {
            let resolved = await Task.detached { () -> Result<UDPAddress, SystemError> in
                do throws(SystemError) { return .success(try UDPAddress(host: plan.mediaHost, port: plan.mediaPort)) } catch {
                    return .failure(error)
                }
            }.value
            switch resolved {
            case .success(let found): address = found
            case .failure(let error):
                return .startFailed(plan.summary.id, .sending, message: "cannot resolve \(plan.mediaHost): \(error)")
            }
        }
        let id = plan.summary.id
        guard let port = sendingPort(plan.port) else {
            return .startFailed(id, .sending, message: "no sender port \(plan.port)")
        }
        do {
            let socket = try port.sendingSocket()
            let connection = try SendConnection(
                summary: plan.summary, destination: socket.destination(address), peerEndpoint: plan.peerEndpoint, ssrc: plan.ssrc,
                payloadType: plan.payloadType, maxPeriodFrames: configuration.periodFrames, mediaKey: outgoingMediaKeys[id])
            try await port.add(connection)
            sending[id] = (connection, port)
            return .started(id, .sending, mediaPort: nil)
        } catch {
            return .startFailed(id, .sending, message: error.message)
        }
    }

    /// Takes a sending connection off its port and logs why it ended.
    func stopSending(_ id: ConnectionID, reason: String) async {
        outgoingMediaKeys[id] = nil
        guard let entry = sending.removeValue(forKey: id) else { return }
        await entry.port.remove(entry.connection)
        logger.info("connection \(id) (\(entry.connection.summary.source) → \(entry.connection.summary.destination)) \(reason)")
    }
}
