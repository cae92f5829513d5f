import Synchronization
import TuttiCore
import TuttiDiscovery
import TuttiWire

/// A peer of the session as a client sees it: where to reach it and, once asked, what it has.
public struct SessionPeer: Sendable {
    public var name: String
    public var endpoints: [ControlEndpoint]
    /// The peer's own answer to `describe` (nil if it did not answer).
    public var description: PeerDescription?
    /// Why it did not answer.
    public var problem: String?
}

/// Finds the peers of a session for a client (the CLI, or an app that controls a session): through
/// DNS-SD, plus any endpoints named explicitly, then asks each to describe itself.
/// Control plane (async).
public enum PeerBrowser {
    /// - Parameters:
    ///   - explicit: endpoints to ask directly (`--peer HOST:PORT`).
    ///   - useDiscovery: browse `_tutti._udp` through Avahi.
    ///   - wait: how long to browse at most.
    ///   - wanted: peer names to look for; browsing ends as soon as all are found (empty: browse for `wait`).
    /// - Returns: the peers found, sorted by name, and a one-line note when discovery was unavailable.
    public static func find(
        explicit: [ControlEndpoint], useDiscovery: Bool, wait: Duration = .milliseconds(1500), wanted: [String] = [],
        credentials: ControlCredentials? = nil
    ) async -> (peers: [SessionPeer], note: String?) {
        let found = Mutex<[String: [ControlEndpoint]]>([:])
        let problem = Mutex<String?>(nil)
        var discovery: ServiceDiscovery?
        if useDiscovery {
            do {
                discovery = try ServiceDiscovery(serviceType: "_tutti._udp") { event in
                    switch event {
                    case .serviceFound(let service):
                        found.withLock {
                            $0[service.instanceName] = service.addresses.map { ControlEndpoint(host: $0, port: service.port) }
                        }
                    case .serviceRemoved(let name):
                        _ = found.withLock { $0.removeValue(forKey: name) }
                    case .daemonUnavailable(let reason):
                        problem.withLock { $0 = reason }
                    default: break
                    }
                }
                discovery?.startBrowsing()
            } catch {
                problem.withLock { $0 = "\(error)" }
            }
        }
        if discovery != nil {
            let clock = ContinuousClock()
            let deadline = clock.now + wait
            // Give the browser a moment even when nothing is wanted by name, then stop early once all are in.
            while clock.now < deadline {
                try? await Task.sleep(for: .milliseconds(50))
                if problem.withLock({ $0 }) != nil { break }
                let names = found.withLock { Set($0.keys.map { $0.lowercased() }) }
                if !wanted.isEmpty, wanted.allSatisfy({ names.contains($0.lowercased()) }) { break }
            }
            discovery?.stop()
        }

        var candidates = found.withLock { $0 }.map { SessionPeer(name: $0.key, endpoints: $0.value) }
        candidates += explicit.map { SessionPeer(name: $0.description, endpoints: [$0]) }
        var described = await describeAll(candidates, credentials: credentials)
        // One hop further: peers that the answering peers know (they browse all the time, and hear a new
        // peer's hello before Avahi has finished probing its name) but this browse did not find.
        let answered = Set(described.compactMap { $0.description?.id })
        var introduced = [PeerID: SessionPeer]()
        for peer in described {
            for known in peer.description?.knownPeers ?? [] {
                guard let id = known.id, !answered.contains(id), !known.endpoints.isEmpty else { continue }
                introduced[id] = SessionPeer(name: known.name, endpoints: known.endpoints)
            }
        }
        // Hearsay: only the ones that answer are listed.
        described += await describeAll(Array(introduced.values), credentials: credentials).filter { $0.description != nil }
        // The same peer may be both discovered and named explicitly: keep one entry per peer ID.
        var seen = Set<String>()
        var unique = [SessionPeer]()
        for peer in described.sorted(by: { $0.name < $1.name }) {
            let key = peer.description?.id.rawValue ?? peer.name
            if seen.insert(key).inserted { unique.append(peer) }
        }
        let note = problem.withLock { $0 }.map {
            "avahi-daemon is not reachable (\($0)): start it with 'sudo systemctl start avahi-daemon', or name peers with --peer HOST:PORT"
        }
        return (unique, note)
    }

    /// Asks every candidate to describe itself, concurrently.
    private static func describeAll(_ candidates: [SessionPeer], credentials: ControlCredentials?) async -> [SessionPeer] {
        await withTaskGroup(of: SessionPeer.self) { group in
            for candidate in candidates {
                group.addTask {
                    var peer = candidate
                    do throws(ControlFailure) {
                        let (response, reached) = try await ControlClient.send(
                            .describe, toAnyOf: candidate.endpoints, timeout: .seconds(2), credentials: credentials)
                        if case .description(let description) = response {
                            peer.description = description
                            peer.name = description.name
                            peer.endpoints = [reached] + candidate.endpoints.filter { $0 != reached }
                        } else if case .failure(let failure) = response {
                            peer.problem = failure.message
                        } else {
                            peer.problem = "answered describe with \(response.typeName)"
                        }
                    } catch {
                        peer.problem = error.message
                    }
                    return peer
                }
            }
            var all = [SessionPeer]()
            for await peer in group { all.append(peer) }
            return all
        }
    }
}
