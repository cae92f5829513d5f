import TuttiPeer
import TuttiSecurity
import TuttiTesting
import TuttiWire

extension TestSession {
    /// The test session's key ring.
    static let keys = try! SessionKeyRing(fileText: key)  // a valid key: the constant above
    /// What in-process test peers run with: the members-only session every test `tutti` belongs to.
    static var access: PeerAccess { .members(keys) }
    /// What the tests' own control requests prove: the session key and a fresh key pair.
    static var credentials: ControlCredentials { ControlCredentials(keys: keys) }
}

/// `ControlClient` as a member of the test session: the tests' requests to their (members-only) peers.
enum TestControl {
    /// - Parameter keyPair: the identity the request proves (a fresh one by default): a test that speaks in
    ///   a made-up peer's name must hold that peer's key pair.
    static func send(
        _ request: ControlRequest, to endpoint: ControlEndpoint, timeout: Duration = .seconds(3), as keyPair: PeerKeyPair = PeerKeyPair()
    ) async throws(ControlFailure) -> ControlResponse {
        try await ControlClient.send(
            request, to: endpoint, timeout: timeout, credentials: ControlCredentials(keys: TestSession.keys, keyPair: keyPair))
    }

    static func send(
        _ request: ControlRequest, toAnyOf endpoints: [ControlEndpoint], timeout: Duration = .seconds(3)
    ) async throws(ControlFailure) -> (ControlResponse, ControlEndpoint) {
        try await ControlClient.send(request, toAnyOf: endpoints, timeout: timeout, credentials: TestSession.credentials)
    }

    static func reply(
        to request: ControlRequest, fromAnyOf endpoints: [ControlEndpoint], timeout: Duration = .seconds(3)
    ) async throws(ControlTransportFailure) -> ControlReply {
        try await ControlClient.reply(to: request, fromAnyOf: endpoints, timeout: timeout, credentials: TestSession.credentials)
    }
}
