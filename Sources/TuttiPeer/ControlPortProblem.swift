import TuttiIO
#if canImport(Glibc)
import Glibc
#endif
import NIOCore

/// Why the control port could not be bound, in the user's words, with what to do; for a port in use, the
/// process that listens on it when this user may see it (another `tutti peer`, usually).
/// Control plane (blocking reads of /proc, through `ListeningSocketOwner`, only after a failed bind).
enum ControlPortProblem {
    /// - Parameter address: the address the user chose to listen on (`--control-address`), if any.
    static func describe(_ error: any Error, port: UInt16, address: String? = nil) -> PeerError {
        if let address {
            switch (error as? IOError)?.errnoCode {
            case EADDRNOTAVAIL?:
                return PeerError(
                    "cannot listen on \(address): it is not an address of this host; give one of its own with --control-address (see 'ip address')"
                )
            case EADDRINUSE?, EACCES?: break
            default:
                if !(error is IOError) {
                    return PeerError(
                        "cannot listen on '\(address)': \(ControlClient.describe(error)); give an IP address of this host with --control-address"
                    )
                }
            }
        }
        switch (error as? IOError)?.errnoCode {
        case EADDRINUSE?:
            let holder = ListeningSocketOwner.find(port: port).map { " (pid \($0.pid), \($0.command))" } ?? ""
            return PeerError(
                "control port \(port) is in use by another program\(holder); choose another with --control-port or omit it")
        case EACCES?:
            return PeerError(
                "control port \(port) is reserved for root (ports below 1024); choose one from 1024 up with --control-port or omit it")
        default:
            return PeerError("cannot listen on control port \(port): \(ControlClient.describe(error))")
        }
    }
}
