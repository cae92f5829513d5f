import TuttiCore
import TuttiDiscovery
import TuttiIO
import TuttiSession
import TuttiWire

/// Presence: publishing and browsing through Avahi, and what the peer says of itself. The directory of known
/// peers lives in the lifecycle, which Avahi's news feed. Control plane (the actor).
extension Peer {
    func startDiscovery() {
        guard configuration.discovery else { return }
        do {
            let continuation = discoveryContinuation
            let discovery = try environment.discovery("_tutti._udp") { event in continuation.yield(event) }
            self.discovery = discovery
            discovery.publish(name: configuration.name, port: controlPort, txt: txtRecord())
            discovery.startBrowsing()
        } catch {
            logger.warning("DNS-SD is unavailable (\(error)); find peers with --peer HOST:PORT")
        }
    }

    /// This peer, as `hello` and `bye` announce it.
    var presence: PeerPresence { PeerPresence(id: id, name: name, controlPort: controlPort) }

    private func txtRecord() -> [String: String] {
        var summary = ""
        for port in configuration.ports {
            let entry = port.descriptor.summary
            if summary.utf8.count + entry.utf8.count + 7 > 250 { break }  // a TXT string holds 255 bytes
            summary += summary.isEmpty ? entry : ",\(entry)"
        }
        return ["v": String(ControlProtocol.version), "id": id.rawValue, "ctl": String(controlPort), "ports": summary]
    }

    func discoveryEvent(_ event: DiscoveryEvent) {
        switch event {
        case .published(let name):
            logger.info("published as '\(name)' (_tutti._udp)")
            step(.renamed(to: name))
        case .renamed(let from, let to):
            logger.warning("the name '\(from)' is taken on this network; published as '\(to)'")
            step(.renamed(to: to))
        case .daemonUnavailable(let reason):
            logger.warning(
                "avahi-daemon is not reachable (\(reason)): peers will not find each other automatically. Start it with 'sudo systemctl start avahi-daemon' (or 'avahi-daemon -D'), or name peers with --peer HOST:PORT"
            )
        case .daemonAvailable:
            logger.info("avahi-daemon reachable; publishing and browsing")
        case .serviceFound(let service):
            guard service.txt["id"] != id.rawValue else { return }
            let endpoints = service.addresses.map { ControlEndpoint(host: $0, port: service.port) }
            step(.discovered(KnownPeer(name: service.instanceName, id: service.txt["id"].flatMap(PeerID.init), endpoints: endpoints)))
        case .serviceRemoved(let name):
            step(.vanished(name: name))
        }
    }

    /// This machine's host name, as `describe` reports it.
    static var hostName: String { StateFiles.hostName }
}
