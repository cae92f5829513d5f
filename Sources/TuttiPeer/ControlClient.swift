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
            return try await withThrowingTaskGroup(of: ControlResponse?.self) { group in
                group.addTask { try await exchange(request, endpoint: endpoint, timeout: timeout) }
                group.addTask {
                    try await Task.sleep(for: timeout)
                    return nil
                }
                defer { group.cancelAll() }
                guard let first = try await group.next(), let response = first else {
                    throw ControlFailure(.unreachable, "peer at \(endpoint) did not answer within \(timeout)")
                }
                return response
            }
        } catch let failure as ControlFailure {
            throw failure
        } catch let error as ControlDecodingError {
            throw ControlFailure(.malformed, "peer at \(endpoint) sent an invalid answer: \(error)")
        } catch {
            throw ControlFailure(.unreachable, "cannot reach peer at \(endpoint): \(describe(error))")
        }
    }

    /// Tries each endpoint in turn until one answers.
    public static func send(
        _ request: ControlRequest, toAnyOf endpoints: [ControlEndpoint], timeout: Duration = .seconds(3)
    ) async throws(ControlFailure) -> (ControlResponse, ControlEndpoint) {
        var lastFailure = ControlFailure(.unreachable, "no address to reach the peer")
        for endpoint in endpoints {
            do {
                return (try await send(request, to: endpoint, timeout: timeout), endpoint)
            } catch {
                guard error.code == .unreachable else { throw error }
                lastFailure = error
            }
        }
        throw lastFailure
    }

    private static func exchange(_ request: ControlRequest, endpoint: ControlEndpoint, timeout: Duration) async throws
        -> ControlResponse?
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
        let channel: NIOAsyncChannel<ControlFrame, ByteBuffer>
        do {
            channel = try await raw.eventLoop.submit { try NIOAsyncChannel<ControlFrame, ByteBuffer>(wrappingChannelSynchronously: raw) }.get()
        } catch {
            try? await raw.close()
            throw error
        }
        return try await channel.executeThenClose { inbound, outbound in
            let frame = try ControlCodec.encodeRequest(ControlEnvelope(id: 1, message: request))
            try await outbound.write(ByteBuffer(bytes: frame))
            for try await frame in inbound {
                switch frame {
                case .message(let bytes): return try ControlCodec.decodeResponse(bytes).message
                case .oversize(let size): throw ControlDecodingError.frameTooLarge(size)
                }
            }
            throw ControlFailure(.unreachable, "peer at \(endpoint) closed the connection without answering")
        }
    }

    static func describe(_ error: any Error) -> String {
        if let error = error as? IOError { return error.description }
        if let error = error as? NIOConnectionError, let first = error.connectionErrors.first {
            return "\(first.error)"
        }
        return "\(error)"
    }
}
