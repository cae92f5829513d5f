#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import NIOCore
import NIOPosix
import Synchronization
import TuttiCore
import TuttiSecurity
import TuttiWire

/// Sends one control request to a peer and waits for its response. Used by the CLI and by peers talking
/// to each other. Control plane (async; any task).
public enum ControlClient {
    /// Sends `request` to `endpoint` and returns the response.
    ///
    /// - Throws: `ControlFailure(.unreachable, …)` when the peer cannot be reached or does not answer
    ///   within `timeout`; `ControlFailure(.malformed, …)` when the answer is not a valid response.
    public static func send(
        _ request: ControlRequest, to endpoint: ControlEndpoint, timeout: Duration = .seconds(3), credentials: ControlCredentials? = nil
    ) async throws(ControlFailure) -> ControlResponse {
        do {
            return try await reply(to: request, fromAnyOf: [endpoint], timeout: timeout, credentials: credentials).response
        } catch {
            throw error.failure
        }
    }

    /// Tries each endpoint in turn until one answers.
    public static func send(
        _ request: ControlRequest, toAnyOf endpoints: [ControlEndpoint], timeout: Duration = .seconds(3),
        credentials: ControlCredentials? = nil
    ) async throws(ControlFailure) -> (ControlResponse, ControlEndpoint) {
        do {
            let reply = try await reply(to: request, fromAnyOf: endpoints, timeout: timeout, credentials: credentials)
            return (reply.response, reply.endpoint)
        } catch {
            throw error.failure
        }
    }

    /// Tries each endpoint in turn (`timeout` each) until one answers; says where the answer came from, or
    /// whether every host refused the connection. A malformed answer ends the tries.
    ///
    /// With `credentials` (a members-only session) each connection begins with the handshake and carries the
    /// request and answer encrypted; a peer that refuses the current key as another session's is asked again
    /// with each older key of the ring (a key change under way), and the reply names the peer ID the answering
    /// peer proved.
    public static func reply(
        to request: ControlRequest, fromAnyOf endpoints: [ControlEndpoint], timeout: Duration = .seconds(3),
        credentials: ControlCredentials? = nil
    ) async throws(ControlTransportFailure) -> ControlReply {
        var last = ControlTransportFailure(failure: ControlFailure(.unreachable, "no address to reach the peer"), refusedEverywhere: false)
        var refusedEverywhere = !endpoints.isEmpty
        for endpoint in endpoints {
            do {
                var answer = try await attempt(request, to: endpoint, timeout: timeout, credentials: credentials, key: 0)
                var key = 1
                while let credentials, key < credentials.keys.keys.count, answer.proven == nil,
                    case .failure(let failure) = answer.response, failure.code == .notMember
                {
                    answer = try await attempt(request, to: endpoint, timeout: timeout, credentials: credentials, key: key)
                    key += 1
                }
                return ControlReply(response: answer.response, endpoint: endpoint, remoteAddress: answer.address, remotePeer: answer.proven)
            } catch {
                guard error.failure.code == .unreachable else { throw error }
                refusedEverywhere = refusedEverywhere && error.refusedEverywhere
                last = error
            }
        }
        last.refusedEverywhere = refusedEverywhere
        throw last
    }

    /// One answer, with the address it came from and the peer ID its sender proved (members-only sessions).
    private struct Answer: Sendable {
        var response: ControlResponse
        var address: String?
        var proven: PeerID?
    }

    private static func attempt(
        _ request: ControlRequest, to endpoint: ControlEndpoint, timeout: Duration, credentials: ControlCredentials?, key: Int
    ) async throws(ControlTransportFailure) -> Answer {
        do {
            return try await withThrowingTaskGroup(of: Answer?.self) { group in
                group.addTask { try await exchange(request, endpoint: endpoint, timeout: timeout, credentials: credentials, key: key) }
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
        } catch let error as NoiseError {
            throw ControlTransportFailure(
                failure: ControlFailure(.notMember, "peer at \(endpoint) failed the members' handshake: \(error)"), refusedEverywhere: false
            )
        } catch {
            throw ControlTransportFailure(
                failure: ControlFailure(.unreachable, "cannot reach peer at \(endpoint): \(describe(error))"),
                refusedEverywhere: isConnectionRefused(error))
        }
    }

    private static func exchange(
        _ request: ControlRequest, endpoint: ControlEndpoint, timeout: Duration, credentials: ControlCredentials?, key: Int
    ) async throws -> Answer? {
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
            var handshake: ControlHandshakeInitiator?
            var secure: SecureControlChannel?
            var proven: PeerID?
            if let credentials {
                var initiator = ControlHandshakeInitiator(keyPair: credentials.keyPair, sessionKey: credentials.keys.keys[key])
                try await outbound.write(ByteBuffer(bytes: ControlCodec.frame(payload: try initiator.firstFrame())))
                handshake = initiator
            } else {
                try await outbound.write(ByteBuffer(bytes: frame))
            }
            for try await reply in inbound {
                guard case .message(let bytes) = reply else {
                    if case .oversize(let size) = reply { throw ControlDecodingError.frameTooLarge(size) }
                    continue
                }
                if var initiator = handshake {
                    handshake = nil
                    // The responder's handshake message, or a refusal in the clear (an open peer, a full peer).
                    do {
                        let (final, channel, responder) = try initiator.readAnswer(bytes)
                        var sealing = channel
                        let body = try sealing.seal(Array(frame.dropFirst(ControlCodec.lengthPrefixBytes)))
                        try await outbound.write(ByteBuffer(bytes: ControlCodec.frame(payload: final) + ControlCodec.frame(payload: body)))
                        (secure, proven) = (sealing, responder)
                        continue
                    } catch let error as NoiseError {
                        guard let plain = try? ControlCodec.decodeResponse(bytes) else { throw error }
                        return Answer(response: plain.message, address: remoteAddress, proven: nil)
                    }
                }
                if var channel = secure {
                    // The answer, or (when the peer refused this key at the third message) a refusal in the clear.
                    do {
                        let opened = try channel.open(bytes)
                        return Answer(response: try ControlCodec.decodeResponse(opened).message, address: remoteAddress, proven: proven)
                    } catch let error as NoiseError {
                        guard let plain = try? ControlCodec.decodeResponse(bytes) else { throw error }
                        return Answer(response: plain.message, address: remoteAddress, proven: nil)
                    }
                }
                return Answer(response: try ControlCodec.decodeResponse(bytes).message, address: remoteAddress, proven: nil)
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
/// Copies share their credentials: a key change reaches every copy.
public struct TCPControlTransport: ControlTransport {
    private final class Shared: Sendable {
        let credentials: Mutex<ControlCredentials?>
        init(_ credentials: ControlCredentials?) { self.credentials = Mutex(credentials) }
    }
    private let shared: Shared

    /// - Parameter credentials: what this side proves in a members-only session; nil: plain connections (an
    ///   open session).
    public init(credentials: ControlCredentials? = nil) {
        shared = Shared(credentials)
    }

    /// What this side proves now.
    public var credentials: ControlCredentials? { shared.credentials.withLock { $0 } }

    /// Connects with `keys` from now on (a key change), keeping the key pair.
    public func updateKeys(_ keys: SessionKeyRing) {
        shared.credentials.withLock { $0?.keys = keys }
    }

    public func reply(
        to request: ControlRequest, fromAnyOf endpoints: [ControlEndpoint], timeout: Duration
    ) async throws(ControlTransportFailure) -> ControlReply {
        try await ControlClient.reply(to: request, fromAnyOf: endpoints, timeout: timeout, credentials: credentials)
    }
}
