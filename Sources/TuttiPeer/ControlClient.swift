#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import NIOCore
import NIOPosix
import TuttiWire

/// Sends one control request to a peer and waits for its response. Used by the CLI and by peers talking
/// to each other. Control plane (async; any task).
public enum ControlClient {
    /// Sends `request` to `endpoint` and returns the response.
    ///
    /// - Throws: `ControlFailure(.unreachable, …)` when the peer cannot be reached or does not answer
    ///   within `timeout`; `ControlFailure(.malformed, …)` when the answer is not a valid response.
    public static func send(
        _ request: ControlRequest, to endpoint: ControlEndpoint, timeout: Duration = .seconds(3)
    ) async throws(ControlFailure) -> ControlResponse {
        do {
            return try await reply(to: request, fromAnyOf: [endpoint], timeout: timeout).response
        } catch {
            throw error.failure
        }
    }

    /// Tries each endpoint in turn until one answers.
    public static func send(
        _ request: ControlRequest, toAnyOf endpoints: [ControlEndpoint], timeout: Duration = .seconds(3)
    ) async throws(ControlFailure) -> (ControlResponse, ControlEndpoint) {
        do {
            let reply = try await reply(to: request, fromAnyOf: endpoints, timeout: timeout)
            return (reply.response, reply.endpoint)
        } catch {
            throw error.failure
        }
    }

    /// Tries each endpoint in turn (`timeout` each) until one answers; says where the answer came from, or
    /// whether every host refused the connection. A malformed answer ends the tries.
    public static func reply(
        to request: ControlRequest, fromAnyOf endpoints: [ControlEndpoint], timeout: Duration = .seconds(3)
    ) async throws(ControlTransportFailure) -> ControlReply {
        var last = ControlTransportFailure(failure: ControlFailure(.unreachable, "no address to reach the peer"), refusedEverywhere: false)
        var refusedEverywhere = !endpoints.isEmpty
        for endpoint in endpoints {
            do {
                let (response, address) = try await attempt(request, to: endpoint, timeout: timeout)
                return ControlReply(response: response, endpoint: endpoint, remoteAddress: address)
            } catch {
                guard error.failure.code == .unreachable else { throw error }
                refusedEverywhere = refusedEverywhere && error.refusedEverywhere
                last = error
            }
        }
        last.refusedEverywhere = refusedEverywhere
        throw last
    }

    private static func attempt(
        _ request: ControlRequest, to endpoint: ControlEndpoint, timeout: Duration
    ) async throws(ControlTransportFailure) -> (ControlResponse, String?) {
        do {
            return try await withThrowingTaskGroup(of: (ControlResponse, String?)?.self) { group in
                group.addTask { try await exchange(request, endpoint: endpoint, timeout: timeout) }
                group.addTask {
                    try await Task.sleep(for: timeout)
                    return nil
                }
                defer { group.cancelAll() }
                guard let first = try await group.next(), let answered = first else {
                    throw ControlFailure(.unreachable, "peer at \(endpoint) did not answer within \(timeout)")
                }
                return answered
            }
        } catch let failure as ControlFailure {
            throw ControlTransportFailure(failure: failure, refusedEverywhere: false)
        } catch let error as ControlDecodingError {
            throw ControlTransportFailure(
                failure: ControlFailure(.malformed, "peer at \(endpoint) sent an invalid answer: \(error)"), refusedEverywhere: false)
        } catch {
            throw ControlTransportFailure(
                failure: ControlFailure(.unreachable, "cannot reach peer at \(endpoint): \(describe(error))"),
                refusedEverywhere: isConnectionRefused(error))
        }
    }

    private static func exchange(_ request: ControlRequest, endpoint: ControlEndpoint, timeout: Duration) async throws
        -> (ControlResponse, String?)?
    {
        // The connection is wrapped in its NIOAsyncChannel only here, after the connect: a NIOAsyncChannel
        // that is dropped before `executeThenClose` runs traps (NIO's writer precondition), and a connect
        // whose task is cancelled by the timeout after the channel was set up would drop it. From the
        // wrapping to `executeThenClose` there is no suspension point, so nothing can drop it there. (No
        // read is missed before the handlers are in: the peer answers only after our request.)
        let raw = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.milliseconds(Int64(timeout.seconds * 1000)))
            .connect(host: endpoint.host, port: Int(endpoint.port)) { channel in
                channel.eventLoop.makeCompletedFuture { () throws -> any Channel in
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(ControlFrameDecoder()))
                    return channel
                }
            }
        let remoteAddress = raw.remoteAddress?.ipAddress
        let channel: NIOAsyncChannel<ControlFrame, ByteBuffer>
        do {
            channel = try await raw.eventLoop.submit { try NIOAsyncChannel<ControlFrame, ByteBuffer>(wrappingChannelSynchronously: raw) }
                .get()
        } catch {
            try? await raw.close()
            throw error
        }
        return try await channel.executeThenClose { inbound, outbound in
            let frame = try ControlCodec.encodeRequest(ControlEnvelope(id: 1, message: request))
            try await outbound.write(ByteBuffer(bytes: frame))
            for try await frame in inbound {
                switch frame {
                case .message(let bytes): return (try ControlCodec.decodeResponse(bytes).message, remoteAddress)
                case .oversize(let size): throw ControlDecodingError.frameTooLarge(size)
                }
            }
            throw ControlFailure(.unreachable, "peer at \(endpoint) closed the connection without answering")
        }
    }

    /// Whether the connect failed because the host answered that nothing listens there (every address tried).
    static func isConnectionRefused(_ error: any Error) -> Bool {
        if let error = error as? IOError { return error.errnoCode == ECONNREFUSED }
        if let error = error as? NIOConnectionError {
            return !error.connectionErrors.isEmpty
                && error.connectionErrors.allSatisfy { ($0.error as? IOError)?.errnoCode == ECONNREFUSED }
        }
        return false
    }

    static func describe(_ error: any Error) -> String {
        if let error = error as? IOError { return error.description }
        if let error = error as? NIOConnectionError, let first = error.connectionErrors.first {
            return "\(first.error)"
        }
        return "\(error)"
    }
}

/// The control plane over TCP: `ControlClient`'s connections. A value; thread-safe: yes (any task).
public struct TCPControlTransport: ControlTransport {
    public init() {}

    public func reply(
        to request: ControlRequest, fromAnyOf endpoints: [ControlEndpoint], timeout: Duration
    ) async throws(ControlTransportFailure) -> ControlReply {
        try await ControlClient.reply(to: request, fromAnyOf: endpoints, timeout: timeout)
    }
}
