import TuttiEngine

/// A failure of the peer's own machinery (files, sockets, limits), as one line for the user.
public struct PeerError: Error, Hashable, Sendable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) { self.message = message }

    /// The peer's media engine failed: the same line.
    public init(_ error: EngineError) { message = error.message }

    public var description: String { message }
}
