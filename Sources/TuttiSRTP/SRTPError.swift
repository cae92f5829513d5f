/// Why an SRTP context could not be made (libsrtp's status, worded). A value; thread-safe: yes.
public struct SRTPError: Error, Hashable, Sendable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }
}
