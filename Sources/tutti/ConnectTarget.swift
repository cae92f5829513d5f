import ArgumentParser
import TuttiWire

/// Where `tutti connect` streams to, and what `tutti disconnect` names: a receiver port on a Tutti peer
/// (`PEER:PORT`) or a standard RTP receiver (`rtp://HOST:PORT`, a numeric address: never a DNS name).
enum ConnectTarget: CustomStringConvertible {
    case port(PortReference)
    case rtp(RTPDestination)

    /// Parses either form; a bad value is a one-line `ValidationError` (an rtp:// URL says what is wrong).
    init(parsing text: String) throws(ValidationError) {
        if text.lowercased().hasPrefix("rtp://") {
            do {
                self = .rtp(try RTPDestination(parsing: text))
            } catch {
                throw ValidationError(error.description)
            }
        } else if let reference = PortReference(parsing: text) {
            self = .port(reference)
        } else {
            throw ValidationError("'\(text)' is neither PEER:PORT nor rtp://HOST:PORT")
        }
    }

    /// The reference a connection to this target carries (an rtp:// URL in its canonical spelling).
    var reference: PortReference {
        switch self {
        case .port(let reference): reference
        case .rtp(let destination): destination.portReference
        }
    }

    var description: String { reference.description }
}
