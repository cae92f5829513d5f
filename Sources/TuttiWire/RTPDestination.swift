import TuttiCore

/// A standard RTP receiver's address, `rtp://HOST:PORT`: where a sender port streams when no Tutti
/// peer receives (ffmpeg, GStreamer, PipeWire's RTP source, anything that plays RTP from an SDP file).
///
/// The host is always a numeric IPv4 or IPv6 unicast address: Tutti never resolves names for media, so a
/// destination means the same on every machine that reads it. Codable as `{"address":"127.0.0.1","port":5004}`
/// (decoding refuses anything but a literal; `ControlValidation` checks the rest). Pure value; thread-safe: yes.
public struct RTPDestination: Hashable, Sendable, Codable, CustomStringConvertible {
    public var address: IPAddress
    public var port: UInt16

    public init(address: IPAddress, port: UInt16) {
        self.address = address
        self.port = port
    }

    /// Parses `rtp://198.18.0.2:5004` or `rtp://[2001:2::2]:5004` (the scheme in any case, an optional
    /// trailing `/`).
    ///
    /// - Throws: `RTPDestinationError` naming what is wrong: not an rtp:// URL, no port or a bad one, a
    ///   host name (it would need DNS), a zone, or an address that cannot be a unicast destination.
    public init(parsing text: String) throws(RTPDestinationError) {
        guard text.lowercased().hasPrefix(Self.scheme) else { throw .notAnRTPURL(text) }
        var rest = Substring(text.dropFirst(Self.scheme.count))
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        let host: Substring
        let portText: Substring
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw .malformed(text) }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            guard after.hasPrefix(":") else { throw .missingPort(text) }
            portText = after.dropFirst()
        } else {
            guard let colon = rest.lastIndex(of: ":") else { throw .missingPort(text) }
            host = rest[..<colon]
            portText = rest[rest.index(after: colon)...]
            if host.contains(":") { throw .unbracketedIPv6(text) }
        }
        guard !host.isEmpty else { throw .malformed(text) }
        guard !portText.isEmpty, portText.allSatisfy({ $0 >= "0" && $0 <= "9" }), let port = UInt16(portText), port != 0 else {
            throw portText.isEmpty ? .missingPort(text) : .badPort(text)
        }
        guard let address = IPAddress(parsing: host) else {
            if host.contains("%") { throw .zonedAddress(text) }
            if host.contains("/") || host.contains("?") || host.contains("@") { throw .malformed(text) }
            throw .hostName(String(host))
        }
        self.init(address: address, port: port)
        if let problem = unicastProblem { throw problem }
    }

    /// Why this address cannot receive a unicast stream (unspecified or multicast), or nil.
    public var unicastProblem: RTPDestinationError? {
        if address.isUnspecified { return .unspecifiedAddress(description) }
        if address.isMulticast { return .multicastAddress(description) }
        return nil
    }

    /// `rtp://127.0.0.1:5004` or `rtp://[::1]:5004`.
    public var description: String { "\(Self.scheme)\(address.uriHost):\(port)" }

    /// The destination as a connection's `PortReference`: peer `rtp://HOST`, port the UDP port number, so
    /// it prints (`description`) and parses (`PortReference(parsing:)`) back as this URL.
    public var portReference: PortReference { PortReference(peer: Self.scheme + address.uriHost, port: String(port)) }

    static let scheme = "rtp://"

    private enum CodingKeys: String, CodingKey { case address, port }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let text = try container.decode(String.self, forKey: .address)
        guard let address = IPAddress(parsing: text) else {
            throw DecodingError.dataCorruptedError(
                forKey: .address, in: container, debugDescription: "not an IPv4 or IPv6 literal")
        }
        self.init(address: address, port: try container.decode(UInt16.self, forKey: .port))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(address.description, forKey: .address)
        try container.encode(port, forKey: .port)
    }
}
