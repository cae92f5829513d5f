import Logging
import NIOCore
import NIOPosix
import Synchronization
import TuttiCore
import TuttiIO
import TuttiSecurity
import TuttiSession
import TuttiWire

/// The peer's control channel: a TCP listener (dual-stack on every interface where the host has IPv6, or the
/// addresses the user chose) that reads framed requests, hands each to `handler` and writes its response. A
/// malformed frame gets an error response and the connection is closed; nothing a client sends can crash the
/// peer. `ControlLimits` bound what clients may take (`ControlAdmission` decides): connections beyond them
/// are closed at once, requests beyond an address's rate answered `busy`, and a connection that brings no
/// whole request within the timeout is closed; each counted in `refusals`.
///
/// In a members-only session (`policy.access`) a connection begins with the handshake (`ControlHandshake`):
/// a client without the key, or with another, is answered `not-member` in one plain line and closed; after
/// the handshake every frame is encrypted, and the handler learns the peer ID the caller proved. A frame that
/// fails to open (forged, replayed) closes the connection.
///
/// Control plane: `start`, `close` from any task; `handler` runs on the server's tasks.
final class ControlServer: Sendable {
    typealias Handler = @Sendable (_ request: ControlRequest, _ caller: ControlCaller) async -> ControlResponse

    private let channels: [NIOAsyncChannel<NIOAsyncChannel<ControlFrame, ByteBuffer>, Never>]
    let port: UInt16
    private let admission: Mutex<ControlAdmission>
    private let clock = MonotonicClock()
    private let closing = Synchronization.Atomic<Bool>(false)
    private let policy: Mutex<ControlChannelPolicy>

    /// What every accepted connection is set up with: requests and answers are small and go out at once,
    /// so Nagle's algorithm would only delay them. TCP_NODELAY lives at the TCP level (`tcpOption`): at
    /// the socket level (`socketOption`) its number 1 is SO_DEBUG, which only root may set.
    static let acceptedSocketOptions: [(ChannelOptions.Types.SocketOption, SocketOptionValue)] = [
        (.tcpOption(.tcp_nodelay), 1)
    ]

    /// Binds the listener: on every interface (`::`, else `0.0.0.0`) when `addresses` is empty, else on each
    /// of `addresses` at the same port.
    ///
    /// - Parameter acceptedSocketOptions: set on every accepted connection; a failure to set one stops the
    ///   server (`run` throws). Tests pass one that fails to see that path.
    /// - Throws: a one-line `PeerError` that says what to do when the port is taken or privileged, or an
    ///   address is not this host's.
    init(
        port: UInt16, addresses: [String] = [], limits: ControlLimits = ControlLimits(),
        policy: ControlChannelPolicy = ControlChannelPolicy(),
        acceptedSocketOptions: [(ChannelOptions.Types.SocketOption, SocketOptionValue)] = acceptedSocketOptions
    ) async throws(PeerError) {
        let requestBytes = limits.requestBytes
        func bind(_ host: String, port: UInt16) async throws -> NIOAsyncChannel<NIOAsyncChannel<ControlFrame, ByteBuffer>, Never> {
            var bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                // Room for a burst of clients while the accept loop turns away a flood's connections.
                .serverChannelOption(.backlog, value: 512)
            for (option, value) in acceptedSocketOptions {
                bootstrap = bootstrap.childChannelOption(option, value: value)
            }
            return
                try await bootstrap
                .bind(host: host, port: Int(port)) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(
                            ByteToMessageHandler(ControlFrameDecoder(maximumBytes: requestBytes)))
                        return try NIOAsyncChannel<ControlFrame, ByteBuffer>(wrappingChannelSynchronously: channel)
                    }
                }
        }
        var bound: [NIOAsyncChannel<NIOAsyncChannel<ControlFrame, ByteBuffer>, Never>] = []
        if addresses.isEmpty {
            do {
                bound = [try await bind("::", port: port)]
            } catch {
                do {
                    bound = [try await bind("0.0.0.0", port: port)]
                } catch {
                    throw ControlPortProblem.describe(error, port: port)
                }
            }
        } else {
            // The first address fixes the port (a free one when 0); the others listen on the same.
            var chosen = port
            for address in addresses {
                do {
                    let channel = try await bind(address, port: chosen)
                    chosen = UInt16(channel.channel.localAddress?.port ?? Int(chosen))
                    bound.append(channel)
                } catch {
                    for channel in bound { try? await channel.channel.close() }
                    throw ControlPortProblem.describe(error, port: chosen, address: address)
                }
            }
        }
        channels = bound
        self.policy = Mutex(policy)
        admission = Mutex(ControlAdmission(limits: limits))
        self.port = UInt16(bound.first?.channel.localAddress?.port ?? Int(port))
    }

    /// The session keys new connections are admitted with (a key change: connections already open keep
    /// theirs). Ignored by an open peer.
    func updateKeys(_ keys: SessionKeyRing) {
        policy.withLock { policy in
            if case .members = policy.access { policy.access = .members(keys) }
        }
    }

    /// Requests rejected as malformed since start.
    var malformedRequests: UInt64 { admission.withLock { $0.counters.malformed } }

    /// What the control channel turned away since start (`peersTurnedAway` is the directory's, left 0 here).
    var refusals: ControlRefusals { admission.withLock { $0.counters } }

    /// Control connections open now.
    var openConnections: Int { admission.withLock { $0.openConnections } }

    /// Serves until `close()`; returns when the listener is closed.
    ///
    /// - Throws: a one-line `PeerError` when the listener fails on its own (a connection that cannot be set
    ///   up, the socket closed under it): the peer can no longer be reached.
    func run(logger: Logger, handler: @escaping Handler) async throws(PeerError) {
        do {
            try await withThrowingDiscardingTaskGroup { group in
                for channel in channels {
                    group.addTask { try await self.accept(on: channel, logger: logger, handler: handler) }
                }
            }
        } catch {
            guard !closing.load(ordering: .acquiring) else { return }
            throw PeerError("the control channel failed: \(ControlClient.describe(error))")
        }
    }

    private func accept(
        on channel: NIOAsyncChannel<NIOAsyncChannel<ControlFrame, ByteBuffer>, Never>, logger: Logger, handler: @escaping Handler
    ) async throws {
        try await withThrowingDiscardingTaskGroup { group in
            try await channel.executeThenClose { inbound in
                for try await connection in inbound {
                    let source = connection.channel.remoteAddress?.ipAddress.map(Self.unmapped) ?? "?"
                    let now = clock.now()
                    if let refusal = admission.withLock({ $0.opened(source: source, now: now) }) {
                        // Closed unread: a client over the limits gets no request handled and no buffer kept.
                        note(refusal, from: source, logger: logger)
                        group.addTask { try? await connection.executeThenClose { _, outbound in outbound.finish() } }
                        continue
                    }
                    group.addTask {
                        await self.serve(connection, from: source, logger: logger, handler: handler)
                        self.admission.withLock { $0.closed(source: source) }
                    }
                }
            }
            // The listener is closed: end the connections still open too, or a client that keeps one
            // open and idle would keep the peer from ever stopping.
            group.cancelAll()
        }
    }

    private func serve(
        _ connection: NIOAsyncChannel<ControlFrame, ByteBuffer>, from remote: String, logger: Logger, handler: @escaping Handler
    ) async {
        let channel = connection.channel
        let (requestTimeout, requestBytes) = admission.withLock { ($0.limits.requestTimeout, $0.limits.requestBytes) }
        let timeout = TimeAmount.nanoseconds(requestTimeout.nanosecondsClamped)
        /// Closes the connection unless a whole request comes in time; cancelled when one does.
        func startDeadline() -> Scheduled<Void> {
            channel.eventLoop.scheduleTask(in: timeout) {
                self.admission.withLock { $0.timedOut() }
                channel.close(promise: nil)
            }
        }
        let policy = policy.withLock { $0 }
        var deadline = startDeadline()
        defer { deadline.cancel() }
        /// Answers in the clear and says the connection must close: a refusal to a client that is not a member.
        func refuse(_ failure: ControlFailure, _ outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>) async throws {
            admission.withLock { $0.notMember() }
            let reply = ControlEnvelope<ControlResponse>(id: 0, message: .failure(failure))
            try await outbound.write(ByteBuffer(bytes: ControlCodec.encodeResponse(reply)))
        }
        do {
            try await connection.executeThenClose { inbound, outbound in
                var handshake: ControlHandshakeResponder?
                var secure: SecureControlChannel?
                var member: PeerID?
                var first = true
                for try await frame in inbound {
                    deadline.cancel()
                    var frame = frame
                    if case .message(let bytes) = frame {
                        if first {
                            first = false
                            if ControlHandshake.isHandshake(bytes) {
                                // A client with a key: only a members-only peer answers the handshake.
                                guard let keys = policy.access.keys else { return try await refuse(policy.openRefusal, outbound) }
                                var responder = ControlHandshakeResponder(keyPair: policy.keyPair, keys: keys)
                                let answer: [UInt8]
                                do throws(NoiseError) {
                                    answer = try responder.answer(bytes)
                                } catch {
                                    return try await refuse(policy.wrongKeyRefusal, outbound)
                                }
                                try await outbound.write(ByteBuffer(bytes: ControlCodec.frame(payload: answer)))
                                handshake = responder
                                deadline = startDeadline()
                                continue
                            }
                            // A plain request to a members-only peer is refused unread, unless strangers may read.
                            if policy.access.keys != nil, !policy.publicReads { return try await refuse(policy.strangerRefusal, outbound) }
                        } else if var responder = handshake {
                            handshake = nil
                            do throws(NoiseError) {
                                (secure, member, _) = try responder.readFinal(bytes)
                            } catch {
                                return try await refuse(policy.wrongKeyRefusal, outbound)
                            }
                            deadline = startDeadline()
                            continue
                        } else if var channel = secure {
                            do throws(NoiseError) {
                                frame = .message(try channel.open(bytes))
                                secure = channel
                            } catch {
                                // Not the member's next message: forged, replayed or cut. Nothing after it can be trusted.
                                let total = admission.withLock { state in
                                    state.forbidden()
                                    return state.counters.forbidden ?? 0
                                }
                                // Counted always; logged as other refusals are: the first ten, then every hundredth.
                                if total <= 10 || total % 100 == 0 {
                                    logger.warning("closed a control connection from \(remote) (\(total) forbidden so far): \(error)")
                                }
                                return
                            }
                        }
                    }
                    let request: ControlEnvelope<ControlRequest>
                    do throws(ControlDecodingError) {
                        switch frame {
                        case .message(let bytes): request = try ControlCodec.decodeRequest(bytes)
                        case .oversize(let size): throw .requestTooLarge(size, limit: requestBytes)
                        }
                    } catch {
                        let total = admission.withLock { state in
                            state.malformed()
                            return state.counters.malformed
                        }
                        // A flood of bad input must not flood the log: the first ten, then every hundredth.
                        if total <= 10 || total % 100 == 0 {
                            logger.warning("rejected control message from \(remote) (\(total) so far): \(error)")
                        }
                        let reply = ControlEnvelope<ControlResponse>(id: 0, message: .failure(error.failure))
                        try await outbound.write(ByteBuffer(bytes: try sealed(ControlCodec.encodeResponse(reply), with: &secure)))
                        return  // close: the stream cannot be trusted after a bad frame
                    }
                    if member == nil, !policy.allowsStrangers(request.message) {
                        return try await refuse(policy.strangerRefusal, outbound)
                    }
                    let now = clock.now()
                    let response: ControlResponse
                    if let refusal = admission.withLock({ $0.request(from: remote, now: now) }) {
                        note(refusal, from: remote, logger: logger)
                        let limits = admission.withLock { $0.limits }
                        response = .failure(ControlFailure(.busy, refusal.message(source: remote, limits: limits)))
                    } else {
                        response = await handler(request.message, ControlCaller(host: remote, member: member))
                        if case .failure(let failure) = response, failure.code == .forbidden, member != nil {
                            admission.withLock { $0.forbidden() }
                        }
                    }
                    let reply = ControlEnvelope(id: request.id, message: response)
                    try await outbound.write(ByteBuffer(bytes: try sealed(ControlCodec.encodeResponse(reply), with: &secure)))
                    deadline = startDeadline()
                }
            }
        } catch {
            logger.debug("control connection from \(remote) ended: \(error)")
        }
    }

    /// `frame` as it goes out: as it is on a plain connection, else its body encrypted and framed again.
    private func sealed(_ frame: [UInt8], with channel: inout SecureControlChannel?) throws(NoiseError) -> [UInt8] {
        guard var secure = channel else { return frame }
        let body = try secure.seal(Array(frame.dropFirst(ControlCodec.lengthPrefixBytes)))
        channel = secure
        return ControlCodec.frame(payload: body)
    }

    /// Logs a refusal: the first ten of all, then every hundredth, so a flood does not flood the log.
    private func note(_ refusal: ControlAdmission.Refusal, from source: String, logger: Logger) {
        let (counters, limits) = admission.withLock { ($0.counters, $0.limits) }
        let total = counters.connectionsRefused + counters.rateLimited
        if total <= 10 || total % 100 == 0 {
            logger.warning(
                "turned away a control \(refusal == .rateLimited ? "request" : "connection") (\(total) so far): \(refusal.message(source: source, limits: limits))"
            )
        }
    }

    /// Stops listening; `run` then ends the connections still open and returns.
    func close() async {
        closing.store(true, ordering: .releasing)
        for channel in channels { try? await channel.channel.close() }
    }

    /// An IPv4 client of the dual-stack listener appears as `::ffff:a.b.c.d`; peers and users know it as `a.b.c.d`.
    static func unmapped(_ host: String) -> String {
        let prefix = "::ffff:"
        guard host.lowercased().hasPrefix(prefix), host.dropFirst(prefix.count).allSatisfy({ $0.isNumber || $0 == "." }) else {
            return host
        }
        return String(host.dropFirst(prefix.count))
    }
}
