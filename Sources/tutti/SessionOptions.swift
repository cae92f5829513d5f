import ArgumentParser
import TuttiPeer
import TuttiWire

/// How a client command finds the session's peers.
struct SessionOptions: ParsableArguments {
    @Option(
        name: .customLong("peer"),
        help: ArgumentHelp(
            "Also ask the peer whose control channel is at HOST:PORT (repeatable; works without Avahi).", valueName: "HOST:PORT"))
    var peers: [ControlEndpoint] = []

    @Flag(name: .customLong("no-discovery"), help: "Do not browse DNS-SD; use only --peer.")
    var noDiscovery = false

    @Option(help: ArgumentHelp("Seconds to browse for peers.", valueName: "SECONDS"))
    var browse: Double = 1.5

    @OptionGroup var keys: KeyOptions

    func validate() throws {
        if noDiscovery && peers.isEmpty { throw ValidationError("--no-discovery needs at least one --peer HOST:PORT") }
        if !(browse > 0 && browse <= 30) { throw ValidationError("--browse must be between 0 and 30 seconds") }
    }

    /// What this command proves to the peers of a members-only session (nil: it speaks plainly).
    ///
    /// - Throws: a one-line `CLIError` when the key cannot be read.
    func credentials() throws -> ControlCredentials? { try keys.clientCredentials() }

    /// Browses and describes the session's peers, reporting a discovery problem on stderr.
    ///
    /// - Throws: a one-line `CLIError` when the session key cannot be read.
    func findPeers(wanted: [String] = []) async throws -> [SessionPeer] {
        let (peers, note) = await PeerBrowser.find(
            explicit: self.peers, useDiscovery: !noDiscovery, wait: .milliseconds(Int64(browse * 1000)), wanted: wanted,
            credentials: try credentials())
        if let note { printError("note: \(note)") }
        return peers
    }

    /// The peer named `name` (case-insensitive; a peer ID or its first 8 digits also match).
    func peer(named name: String, in peers: [SessionPeer]) throws -> SessionPeer {
        let lowered = name.lowercased()
        if let match = peers.first(where: {
            $0.name.lowercased() == lowered || $0.description?.id.rawValue == lowered
                || ($0.description.map { lowered.count >= 8 && $0.id.rawValue.hasPrefix(lowered) } ?? false)
        }) {
            if let problem = match.problem { throw CLIError("peer \(match.name) does not answer: \(problem)") }
            return match
        }
        // A peer that would not answer (not a member, unreachable) may be the one asked for: say why. Of several,
        // the one whose refusal names the peer asked for, else the first by address (not the first to answer).
        let silentPeers = peers.filter { $0.description == nil && $0.problem != nil }.sorted { $0.name < $1.name }
        if let silent = silentPeers.first(where: { $0.problem?.hasPrefix("peer \(name) ") == true }) ?? silentPeers.first,
            let problem = silent.problem
        {
            let answering = peers.filter { $0.description != nil }.map(\.name).sorted()
            throw CLIError(
                "no peer named '\(name)' answered; \(silent.name) did not: \(problem)"
                    + (answering.isEmpty ? "" : " (answering: \(answering.joined(separator: ", ")))"))
        }
        let names = peers.map(\.name).sorted()
        guard !names.isEmpty else {
            throw CLIError(
                "no peer named '\(name)' found (no peers found; is 'tutti peer' running and avahi-daemon up? or use --peer HOST:PORT)")
        }
        throw CLIError("no peer named '\(name)' found\(NearMiss.hint(for: name, among: names)); found: \(names.joined(separator: ", "))")
    }
}

extension ControlEndpoint: ExpressibleByArgument {
    public init?(argument: String) { self.init(parsing: argument) }
}

extension PortReference: ExpressibleByArgument {
    public init?(argument: String) { self.init(parsing: argument) }
}
