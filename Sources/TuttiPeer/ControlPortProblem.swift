import TuttiIO
#if canImport(Glibc)
import Glibc
#endif
import NIOCore

/// Why the control port could not be bound, in the user's words, with what to do; for a port in use, the
/// process that listens on it when this user may see it (another `tutti peer`, usually).
/// Control plane (blocking reads of /proc, through `ListeningSocketOwner`, only after a failed bind).
enum ControlPortProblem {
    static func describe(_ error: any Error, port: UInt16) -> PeerError {
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
