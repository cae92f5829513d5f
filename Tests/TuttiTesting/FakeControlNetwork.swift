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
    /// Requests of these kinds (`ControlRequest.typeName`) wait before delivery until `release()`.
    private let held = Mutex<(kinds: Set<String>, waiting: [CheckedContinuation<Void, Never>])>(([], []))

    public init() {}

    /// A peer's control channel at `endpoint`, answering with `handler`.
    public func attach(_ endpoint: ControlEndpoint, handler: @escaping Handler) {
        endpoints.withLock { $0[endpoint] = .answering(handler) }
    }

    /// From now on, connections to `endpoint` are refused (its peer was killed; the host is up).
    public func refuse(_ endpoint: ControlEndpoint) { endpoints.withLock { $0[endpoint] = .refusing } }

    /// From now on, `endpoint` answers nothing (its host is gone, or the network between).
    public func silence(_ endpoint: ControlEndpoint) { endpoints.withLock { $0[endpoint] = .silent } }

    /// From now on, requests of `kind` (as `ControlRequest.typeName` names them, e.g. "hello") wait on their way
    /// until `release()`: a message still in flight while its sender moves on.
    public func hold(_ kind: String) { held.withLock { _ = $0.kinds.insert(kind) } }

    /// Lets every held request go on, and holds no more.
    public func release() {
        let waiting = held.withLock { state in
            defer { state = ([], []) }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
    }

    /// How many requests wait in `hold` now.
    public var heldCount: Int { held.withLock { $0.waiting.count } }

    /// Every request delivered to a handler so far, in order.
    public var requests: [(request: ControlRequest, to: ControlEndpoint)] { delivered.withLock { $0 } }

    /// How a peer on `host` reaches the others (its requests arrive with `remoteHost` = `host`).
    public func transport(from host: String) -> Transport { Transport(network: self, host: host) }

    private func waitIfHeld(_ request: ControlRequest) async {
        await withCheckedContinuation { continuation in
            let wait = held.withLock { state in
                guard state.kinds.contains(request.typeName) else { return false }
                state.waiting.append(continuation)
                return true
            }
            if !wait { continuation.resume() }
        }
    }

    /// One host's view of the network. A value; thread-safe: yes.
    public struct Transport: ControlTransport {
        let network: FakeControlNetwork
        let host: String

        public func reply(
            to request: ControlRequest, fromAnyOf endpoints: [ControlEndpoint], timeout: Duration
        ) async throws(ControlTransportFailure) -> ControlReply {
            await network.waitIfHeld(request)
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
