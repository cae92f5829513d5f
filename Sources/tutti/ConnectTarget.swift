import ArgumentParser
import TuttiWire

/// Where `tutti connect` streams to, and what `tutti disconnect` names: a receiver port on a Tutti peer
/// (`PEER:PORT`, resolved once the peers are found) or a standard RTP receiver (`rtp://HOST:PORT`, a
/// numeric address: never a DNS name).
enum ConnectTarget: CustomStringConvertible {
    case port(PortArgument)
    case rtp(RTPDestination)

    /// Parses either form; a bad value is a one-line `ValidationError` (an rtp:// URL says what is wrong).
    init(parsing text: String) throws(ValidationError) {
        if text.lowercased().hasPrefix("rtp://") {
            do {
                self = .rtp(try RTPDestination(parsing: text))
            } catch {
                throw ValidationError(error.description)
            }
        } else {
            self = .port(try PortArgument(parsing: text))
        }
    }

    var description: String {
        switch self {
        case .port(let argument): argument.description
        case .rtp(let destination): destination.portReference.description
        }
    }
}
