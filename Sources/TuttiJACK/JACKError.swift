/// Why the JACK edge could not do what was asked: one line for the user, with the JACK status kept.
///
/// A struct over a code so that new cases can be added without breaking callers that switch over `code`
/// with a default.
public struct JACKError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What failed.
    public enum Code: Hashable, Sendable {
        /// No JACK server runs under the requested name (`jack_client_open` with `JackNoStartServer`
        /// returned `JackServerFailed`/`JackServerError`).
        case serverUnavailable
        /// Another client already has the name (`JackNameNotUnique` with `JackUseExactName`).
        case clientNameTaken
        /// `jack_client_open` failed for another reason (see `status`).
        case clientOpenFailed
        /// `jack_port_register` returned NULL (name taken on this client, or the server's port limit).
        case portRegistrationFailed
        /// `jack_activate` failed.
        case activationFailed
        /// The client's fixed table of port groups is full.
        case tooManyPorts
    }

    public var code: Code
    /// The `jack_status_t` bits (or return code) JACK gave, 0 when it gave none.
    public var status: Int32
    public var message: String

    public init(_ code: Code, status: Int32 = 0, _ message: String) {
        self.code = code
        self.status = status
        self.message = message
    }

    public var description: String { message }
}
