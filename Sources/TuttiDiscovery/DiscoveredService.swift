/// One peer found by DNS-SD browsing, merged over every interface and IP protocol it was seen on.
///
/// A plain value: create, copy and read it on any thread.
package struct DiscoveredService: Sendable, Equatable {
    /// The DNS-SD instance name the peer published (for example "Studio A").
    package var instanceName: String
    /// The host name from the SRV record, for example "h2.local".
    package var hostName: String
    /// Every resolved address, deduplicated: IPv4 first, then IPv6 (global before link-local).
    /// IPv6 link-local addresses carry their zone, for example "fe80::1%eth0", so they can be
    /// handed to `getaddrinfo` or a socket API as they are.
    package var addresses: [String]
    /// The port from the SRV record.
    package var port: UInt16
    /// The TXT record as key/value pairs. An entry without "=" gives the key with an empty value;
    /// bytes that are not valid UTF-8 are replaced with U+FFFD.
    package var txt: [String: String]

    /// Creates a value; any thread.
    package init(instanceName: String, hostName: String, addresses: [String], port: UInt16, txt: [String: String]) {
        self.instanceName = instanceName
        self.hostName = hostName
        self.addresses = addresses
        self.port = port
        self.txt = txt
    }
}
