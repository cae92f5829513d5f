/// A failure of the media engine's own machinery (files, sockets, limits), as one line for the user.
///
/// Thrown on the control plane only (ports and connections are set up there); the data threads count
/// their failures instead of throwing.
public struct EngineError: Error, Hashable, Sendable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }
}
