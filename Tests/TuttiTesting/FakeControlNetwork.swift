import Synchronization
import TuttiWire

/// An in-memory control network: each peer attaches its control endpoint with its request handler, and talks
/// to the others through `transport(from:)`. A test can make a host refuse connections (its peer was killed)
/// or go silent (the host is gone: every request times out at once, so no real time passes). Every request
/// delivered is recorded.
///
/// Thread-safe: yes (a mutex around the table; handlers run outside it).
public final class FakeControlNetwork: Sendable {
    /// Answers one request; `remoteHost` is the sending peer's host, as a control server reports it.
    public typealias Handler = @Sendable (_ request: ControlRequest, _ remoteHost: String?) async -> ControlResponse

    /// What an endpoint does with a connection.
    public enum Behaviour: Sendable {
        case answering(Handler)
        /// The host is up but nothing listens: the connection is refused.
        case refusing
        /// The host does not answer at all.
        case silent
    }

    private let endpoints = Mutex<[ControlEndpoint: Behaviour]>([:])
    private let delivered = Mutex<[(request: ControlRequest, to: ControlEndpoint)]>([])

    public init() {}

    /// A peer's control channel at `endpoint`, answering with `handler`.
    public func attach(_ endpoint: ControlEndpoint, handler: @escaping Handler) {
        endpoints.withLock { $0[endpoint] = .answering(handler) }
    }

    /// From now on, connections to `endpoint` are refused (its peer was killed; the host is up).
    public func refuse(_ endpoint: ControlEndpoint) { endpoints.withLock { $0[endpoint] = .refusing } }

    /// From now on, `endpoint` answers nothing (its host is gone, or the network between).
    public func silence(_ endpoint: ControlEndpoint) { endpoints.withLock { $0[endpoint] = .silent } }

    /// Every request delivered to a handler so far, in order.
    public var requests: [(request: ControlRequest, to: ControlEndpoint)] { delivered.withLock { $0 } }

    /// How a peer on `host` reaches the others (its requests arrive with `remoteHost` = `host`).
    public func transport(from host: String) -> Transport { Transport(network: self, host: host) }

    /// One host's view of the network. A value; thread-safe: yes.
    public struct Transport: ControlTransport {
        let network: FakeControlNetwork
        let host: String

        public func reply(
            to request: ControlRequest, fromAnyOf endpoints: [ControlEndpoint], timeout: Duration
        ) async throws(ControlTransportFailure) -> ControlReply {
            var refusedEverywhere = !endpoints.isEmpty
            var last = ControlFailure(.unreachable, "no address to reach the peer")
            for endpoint in endpoints {
                switch network.endpoints.withLock({ $0[endpoint] }) {
                case .answering(let handler):
                    network.delivered.withLock { $0.append((request, endpoint)) }
                    let response = await handler(request, host)
                    return ControlReply(response: response, endpoint: endpoint, remoteAddress: endpoint.host)
                case .refusing, nil:
                    last = ControlFailure(.unreachable, "cannot reach peer at \(endpoint): connection refused")
                case .silent:
                    refusedEverywhere = false
                    last = ControlFailure(.unreachable, "peer at \(endpoint) did not answer within \(timeout)")
                }
            }
            throw ControlTransportFailure(failure: last, refusedEverywhere: refusedEverywhere)
        }
    }
}
