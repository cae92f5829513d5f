import TuttiCore
import TuttiWire

/// The pipelines through this peer's ports and the graph's rules: which chains reach each port (offers carry
/// them, `UpstreamNotice`s keep them current downstream), no connection that closes a loop, none from a peer to
/// itself unless the destination port allows it, and a warning when a receiver that plays out takes a chain
/// from a live input on its own host.
extension ConnectionLifecycle {
    /// Every chain that reaches this peer's port `name` now, each once, in a stable order: a sender's is itself
    /// alone; a filter's or a receiver's, every chain into it through its receiving connections that are not
    /// closing, extended by it. Thread-safe: a value.
    package func pipelines(reaching name: String) -> [Pipeline] {
        let port = PortReference(peer: identity.name, port: name)
        guard let descriptor = identity.ports.first(where: { $0.name == name }) else { return [] }
        if descriptor.kind == .sender {
            return [Pipeline(origin: port, live: descriptor.isLive, originHost: identity.host.isEmpty ? nil : identity.host)]
        }
        var chains: [String: Pipeline] = [:]
        for entry in receiving.values where !entry.isClosing && entry.plan.port == name {
            for chain in entry.upstream where chain.ports.count < Pipeline.maxLength {
                let extended = chain.extended(to: port)
                chains[extended.id] = extended
            }
        }
        return chains.values.sorted { ($0.description, $0.id) < ($1.description, $1.id) }.prefix(Pipeline.maxCount).map { $0 }
    }

    /// The refusal of a connection from `source` (reached by the chains `upstream`) to `destination` that would
    /// close a loop: the destination is the source, or already feeds it. Thread-safe: any thread.
    static func loopRefusal(upstream: [Pipeline], source: PortReference, destination: PortReference) -> ControlFailure? {
        if samePort(source, destination) {
            return ControlFailure(.cycle, "\(source) → \(destination): a port cannot feed itself")
        }
        guard let chain = upstream.first(where: { $0.passes(destination) }) else { return nil }
        return ControlFailure(
            .cycle, "\(source) → \(destination) would close a loop: \(destination) already feeds \(source) (\(chain))")
    }

    /// The refusal of a connection from `source` to `destination` on this same peer when the destination port
    /// does not allow it (`allows-self`); nil for another peer, an unknown port (refused as such elsewhere), or
    /// a port that allows it.
    func selfConnectionRefusal(source: PortReference, destination: PortReference) -> ControlFailure? {
        guard Self.samePeer(destination.peer, identity.name), let port = identity.ports.first(where: { $0.name == destination.port }),
            port.kind != .sender,
            !port.takesSelfConnections
        else { return nil }
        return ControlFailure(
            .selfConnection,
            "\(source) → \(destination): both ports are on peer \(identity.name); \(destination) takes its own peer's audio "
                + "only with allows-self (e.g. --\(port.kind == .filter ? "filter" : "receiver") \(port.name)=…,allows-self)")
    }

    /// The feedback warning for receiver port `name` taking `pipelines` (the chains reaching its new source): one
    /// line naming the first chain from a live input on this host, when the port plays out; nil otherwise.
    func feedbackWarning(port name: String, pipelines: [Pipeline]) -> String? {
        guard identity.playingOut.contains(name), !identity.host.isEmpty,
            let chain = pipelines.first(where: { $0.live == true && $0.originHost == identity.host })
        else { return nil }
        let reaching = chain.extended(to: PortReference(peer: identity.name, port: name))
        return "feedback: \(reaching) plays the live input \(chain.origin) out on its own host \(identity.host)"
    }

    /// Each port's sources, destinations, pipelines and feedback warnings now, in the order of the ports.
    /// Thread-safe: a value.
    package var routes: [PortRoutes] {
        identity.ports.map { port in
            let sources = receiving.values.filter { $0.isLive && $0.plan.port == port.name }.map(\.plan.summary.source)
            let destinations = sending.values.compactMap { entry -> PortReference? in
                guard case .live = entry.phase, entry.port.name == port.name else { return nil }
                return entry.destination
            }
            let pipelines = pipelines(reaching: port.name)
            var warnings: [String] = []
            if port.kind == .receiver, identity.playingOut.contains(port.name) {
                for entry in receiving.values where entry.isLive && entry.plan.port == port.name {
                    if let warning = feedbackWarning(port: port.name, pipelines: entry.upstream), !warnings.contains(warning) {
                        warnings.append(warning)
                    }
                }
            }
            return PortRoutes(
                port: port.name, sources: Self.sorted(sources), destinations: Self.sorted(destinations), pipelines: pipelines,
                warnings: warnings.isEmpty ? nil : warnings.sorted())
        }
    }

    private static func sorted(_ references: [PortReference]) -> [PortReference] {
        Array(Set(references)).sorted { ($0.peer.lowercased(), $0.port) < ($1.peer.lowercased(), $1.port) }
    }

    /// A sender's peer says the chains reaching a connection's source changed: kept for `describe` and passed
    /// on downstream (by `announceUpstreamChanges`); a chain that passes the connection's own destination means
    /// two connects raced into a loop, which this connection breaks (closed, its sender told).
    mutating func upstream(_ notice: UpstreamNotice) -> [Action] {
        guard var entry = receiving[notice.connectionID], !entry.isClosing else { return [] }
        let destination = entry.plan.summary.destination
        if let refusal = Self.loopRefusal(upstream: notice.upstream, source: entry.plan.summary.source, destination: destination) {
            // As a teardown would: a receiver still starting is stopped once started (its offer answered then).
            return endReceiving(entry.id, Ending(reason: "closed: \(refusal.message)", notice: refusal.message))
        }
        entry.upstream = notice.upstream
        receiving[notice.connectionID] = entry
        if let warning = feedbackWarning(port: entry.plan.port, pipelines: notice.upstream), entry.isLive {
            return [.report(.feedback(port: entry.plan.port, warning: warning))]
        }
        return []
    }

    /// The notices owed after a step: every live connection from a filter port whose chains changed since its
    /// receiver was last told (a source of the filter connected or went) gets the chains now.
    mutating func announceUpstreamChanges() -> [Action] {
        var actions: [Action] = []
        for id in sending.keys.sorted(by: { $0.rawValue < $1.rawValue }) {
            guard let entry = sending[id], entry.port.kind == .filter, case .live = entry.phase, let reached = entry.reached,
                let announced = entry.announced
            else { continue }
            let now = pipelines(reaching: entry.port.name)
            guard now != announced else { continue }
            sending[id]?.announced = now
            actions.append(.announce(UpstreamNotice(connectionID: id, upstream: now), to: [reached]))
        }
        return actions
    }
}
