/// Why a ``ServiceDiscovery`` could not be created. A plain value: create and read it on any thread.
///
/// An absent avahi-daemon is *not* an error: the discovery then keeps running, reports
/// ``DiscoveryEvent/daemonUnavailable(reason:)`` and connects when the daemon appears.
package struct DiscoveryError: Error, CustomStringConvertible {
    /// What failed, as one line.
    package var message: String

    /// Creates an error; any thread.
    package init(_ message: String) {
        self.message = message
    }

    /// One clear line, for example `service discovery: invalid DNS-SD service type "tutti" (expected e.g. "_tutti._udp")`.
    package var description: String { "service discovery: \(message)" }
}
