#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A failed system call at the edge, with its errno kept.
public struct SystemError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was being done, e.g. "bind UDP socket to [::]:0".
    public var operation: String
    public var errno: Int32

    public init(_ operation: String, errno: Int32) {
        self.operation = operation
        self.errno = errno
    }

    /// Captures the calling thread's current errno.
    public static func current(_ operation: String) -> SystemError {
        SystemError(operation, errno: system_errno)
    }

    public var description: String { "\(operation): \(reason)" }

    /// What the system says of `errno` (`strerror`), e.g. "Permission denied".
    public var reason: String { String(cString: strerror(errno)) }
}
