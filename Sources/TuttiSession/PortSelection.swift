import TuttiCore
import TuttiWire

/// The refusals that come before format negotiation: the named ports must exist and face the right way.
/// Pure. Thread-safe: yes.
package enum PortSelection {
    /// The sender port that `reference` names among `ports`, or why it cannot send.
    package static func source(_ reference: PortReference, in ports: [PortDescriptor]) -> Result<PortDescriptor, NegotiationRefusal> {
        guard let port = ports.first(where: { $0.name == reference.port }) else {
            return .failure(
                NegotiationRefusal(.unknownPort, "peer \(reference.peer) has no port '\(reference.port)' (ports: \(names(ports)))"))
        }
        guard port.kind == .sender || port.kind == .filter else {
            return .failure(
                NegotiationRefusal(
                    .wrongDirection, "\(reference) is a \(port.kind) port and cannot be a source; give a sender port first"))
        }
        return .success(port)
    }

    /// The receiver port that `reference` names among `ports`, or why it cannot receive.
    package static func destination(_ reference: PortReference, in ports: [PortDescriptor]) -> Result<PortDescriptor, NegotiationRefusal> {
        guard let port = ports.first(where: { $0.name == reference.port }) else {
            return .failure(
                NegotiationRefusal(.unknownPort, "peer \(reference.peer) has no port '\(reference.port)' (ports: \(names(ports)))"))
        }
        guard port.kind == .receiver || port.kind == .filter else {
            return .failure(
                NegotiationRefusal(
                    .wrongDirection, "\(reference) is a \(port.kind) port and cannot receive audio; choose a receiver port"))
        }
        return .success(port)
    }

    private static func names(_ ports: [PortDescriptor]) -> String {
        ports.isEmpty ? "none" : ports.map(\.name).joined(separator: ", ")
    }
}
