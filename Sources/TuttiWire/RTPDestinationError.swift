/// Why `rtp://HOST:PORT` was refused; `description` is one line for the user. A value; thread-safe: yes.
public enum RTPDestinationError: Error, Hashable, Sendable, CustomStringConvertible {
    case notAnRTPURL(String)
    case malformed(String)
    case missingPort(String)
    case badPort(String)
    case unbracketedIPv6(String)
    /// A host name: it would need DNS, which Tutti never uses for media destinations.
    case hostName(String)
    case zonedAddress(String)
    case unspecifiedAddress(String)
    case multicastAddress(String)

    public var description: String {
        switch self {
        case .notAnRTPURL(let text): "'\(text)' is not rtp://HOST:PORT"
        case .malformed(let text): "'\(text)' is not rtp://HOST:PORT (HOST an IPv4 address or [IPv6] address)"
        case .missingPort(let text): "'\(text)' has no port: write rtp://HOST:PORT, e.g. rtp://127.0.0.1:5004"
        case .badPort(let text): "'\(text)': the port must be a number from 1 to 65535"
        case .unbracketedIPv6(let text): "'\(text)': write an IPv6 address in brackets, e.g. rtp://[::1]:5004"
        case .hostName(let host):
            "'\(host)' is a host name: rtp:// needs a numeric IPv4 or [IPv6] address (Tutti does not look names up in DNS)"
        case .zonedAddress(let text): "'\(text)': addresses with a zone (%interface) are not supported; use a global or loopback address"
        case .unspecifiedAddress(let text): "\(text): \(text.contains("[") ? "::" : "0.0.0.0") is not a destination"
        case .multicastAddress(let text): "\(text): multicast destinations are not supported yet; give a unicast address"
        }
    }
}
