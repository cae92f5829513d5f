import TuttiWire

/// Who asked a peer to connect one of its ports, as far as the choice of where to send the offer goes.
///
/// A sender dials the receiving peer at the endpoints it knows itself (Avahi, `--peer`, the peer's hello). When
/// it does not know the receiving peer, the endpoints the request carries are dialled only when the requester
/// may be trusted with them (issue 14): a member of a members-only session (and the far end must then prove
/// membership in the handshake before it hears an offer), or, in an open session, a client on the receiving
/// peer's own host (a client naming itself). Anyone else could otherwise make a peer open TCP connections to
/// any address. A value; thread-safe: yes (any thread).
package enum ConnectRequester: Hashable, Sendable {
    /// A member of the peer's members-only session (its handshake proved the session key).
    case member
    /// A client of an open session, from `host` (numeric; nil when the edge does not know it).
    case unauthenticated(host: String?)

    /// The endpoints of `supplied` this requester may have the peer dial: all of them for a member, those on the
    /// requester's own host for anyone else.
    package func dialable(_ supplied: [ControlEndpoint]) -> [ControlEndpoint] {
        switch self {
        case .member: return supplied
        case .unauthenticated(let host):
            guard let host else { return [] }
            return supplied.filter { Self.sameHost($0.host, host) }
        }
    }

    /// Whether two numeric addresses name one host (an IPv4-mapped IPv6 address is its IPv4 address).
    private static func sameHost(_ left: String, _ right: String) -> Bool {
        func plain(_ address: String) -> String {
            let lowered = address.lowercased()
            return lowered.hasPrefix("::ffff:") && lowered.contains(".") ? String(lowered.dropFirst(7)) : lowered
        }
        return plain(left) == plain(right)
    }
}
