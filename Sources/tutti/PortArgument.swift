import ArgumentParser
import TuttiCore
import TuttiPeer
import TuttiWire

/// A port named on the command line, as typed: `PEER:PORT`, or a bare `PEER` (then answered with the
/// peer's ports). Resolved against the session's peers once they are found, so that every mistake is
/// answered in the user's terms: which ports the peer has, "did you mean" for a near miss, and which
/// direction a port goes.
struct PortArgument: CustomStringConvertible {
    var peer: String
    /// nil when only a peer was named.
    var port: String?

    /// Parses `PEER:PORT` (the last colon splits) or `PEER`; a one-line `ValidationError` otherwise.
    init(parsing text: String) throws(ValidationError) {
        guard let colon = text.lastIndex(of: ":") else {
            guard !text.isEmpty else { throw ValidationError("a port is named PEER:PORT, e.g. stage:out") }
            peer = text
            port = nil
            return
        }
        peer = String(text[..<colon])
        let name = String(text[text.index(after: colon)...])
        guard !peer.isEmpty else { throw ValidationError("'\(text)' has no peer name: write PEER:PORT, e.g. stage:out") }
        guard PortDescriptor.isValidName(name) else {
            throw ValidationError("'\(text)': a port name is 1–32 of A–Z a–z 0–9 _ . - (write PEER:PORT, e.g. stage:out)")
        }
        port = name
    }

    var description: String { port.map { "\(peer):\($0)" } ?? peer }

    /// The reference as typed (an empty port when none was given); only for requests that tolerate it.
    var reference: PortReference { PortReference(peer: peer, port: port ?? "") }
}

extension SessionOptions {
    /// The peer and its port of kind `kind` (or a filter port, which is both a source and a destination) that
    /// `argument` names among `peers`.
    ///
    /// - Throws: a one-line `CLIError`: no such peer (with "did you mean" and the peers found), a bare peer
    ///   name (with its ports of that kind), no such port (with "did you mean" and the peer's ports of that
    ///   kind), or a port of the other direction.
    func resolve(_ argument: PortArgument, as kind: PortKind, in peers: [SessionPeer]) throws -> (peer: SessionPeer, port: PortDescriptor) {
        let peer = try self.peer(named: argument.peer, in: peers)
        guard let description = peer.description else { throw CLIError("peer \(peer.name) does not answer") }
        let role = kind == .sender ? "source" : "destination"
        let ofKind = description.ports.filter { $0.kind == kind || $0.kind == .filter }
        let ofKindList = ofKind.isEmpty ? "none" : ofKind.map { "\(peer.name):\($0.name)" }.joined(separator: ", ")
        guard let name = argument.port else {
            throw CLIError("'\(argument.peer)' is a peer; the \(role) is one of its \(kind) ports: \(ofKindList)")
        }
        guard let port = description.ports.first(where: { $0.name == name }) else {
            let hint = NearMiss.hint(for: name, among: ofKind.map(\.name))
            throw CLIError("\(peer.name) has no port '\(name)'\(hint); its \(kind) ports: \(ofKindList)")
        }
        guard port.kind == kind || port.kind == .filter else {
            let others = ofKind.isEmpty ? "(\(peer.name) has none)" : "(\(peer.name)'s: \(ofKindList))"
            throw CLIError("\(peer.name):\(name) is a \(port.kind) port; the \(role) must be a \(kind) port \(others)")
        }
        return (peer, port)
    }
}
