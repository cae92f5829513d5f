import Logging
import NIOCore
import NIOPosix
import TuttiWire

/// The peer's control channel: a TCP listener (dual-stack where the host has IPv6) that reads framed
/// requests, hands each to `handler` and writes its response. A malformed frame gets an error response
/// and the connection is closed; nothing a client sends can crash the peer.
///
/// Control plane: `start`, `close` from any task; `handler` runs on the server's tasks.
final class ControlServer: Sendable {
    typealias Handler = @Sendable (_ request: ControlRequest, _ remoteHost: String?) async -> ControlResponse

    private let channel: NIOAsyncChannel<NIOAsyncChannel<ControlFrame, ByteBuffer>, Never>
    let port: UInt16
    private let malformedCount = ManagedCounter()
    private let closing = Synchronization.Atomic<Bool>(false)

    /// What every accepted connection is set up with: requests and answers are small and go out at once,
    /// so Nagle's algorithm would only delay them. TCP_NODELAY lives at the TCP level (`tcpOption`): at
    /// the socket level (`socketOption`) its number 1 is SO_DEBUG, which only root may set.
    static let acceptedSocketOptions: [(ChannelOptions.Types.SocketOption, SocketOptionValue)] = [
        (.tcpOption(.tcp_nodelay), 1)
    ]

    /// Binds the listener.
    ///
    /// - Parameter acceptedSocketOptions: set on every accepted connection; a failure to set one stops the
    ///   server (`run` throws). Tests pass one that fails to see that path.
    /// - Throws: a one-line `PeerError` that says what to do when the port is taken or privileged.
    init(
        port: UInt16, acceptedSocketOptions: [(ChannelOptions.Types.SocketOption, SocketOptionValue)] = acceptedSocketOptions
    ) async throws(PeerError) {
        func bind(_ host: String) async throws -> NIOAsyncChannel<NIOAsyncChannel<ControlFrame, ByteBuffer>, Never> {
            var bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            for (option, value) in acceptedSocketOptions {
                bootstrap = bootstrap.childChannelOption(option, value: value)
            }
            return
                try await bootstrap
                .bind(host: host, port: Int(port)) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(ControlFrameDecoder()))
                        return try NIOAsyncChannel<ControlFrame, ByteBuffer>(wrappingChannelSynchronously: channel)
                    }
                }
        }
        do {
            channel = try await bind("::")
        } catch {
            do {
                channel = try await bind("0.0.0.0")
            } catch {
                throw ControlPortProblem.describe(error, port: port)
            }
        }
        self.port = UInt16(channel.channel.localAddress?.port ?? Int(port))
    }

    /// Requests rejected as malformed since start.
    var malformedRequests: Int { malformedCount.value }

    /// Serves until `close()`; returns when the listener is closed.
    ///
    /// - Throws: a one-line `PeerError` when the listener fails on its own (a connection that cannot be set
    ///   up, the socket closed under it): the peer can no longer be reached.
    func run(logger: Logger, handler: @escaping Handler) async throws(PeerError) {
        do {
            try await withThrowingDiscardingTaskGroup { group in
                try await channel.executeThenClose { inbound in
                    for try await connection in inbound {
                        group.addTask { await self.serve(connection, logger: logger, handler: handler) }
                    }
                }
                // The listener is closed: end the connections still open too, or a client that keeps one
                // open and idle would keep the peer from ever stopping.
                group.cancelAll()
            }
        } catch {
            guard !closing.load(ordering: .acquiring) else { return }
            throw PeerError("the control channel failed: \(ControlClient.describe(error))")
        }
    }

    private func serve(
        _ connection: NIOAsyncChannel<ControlFrame, ByteBuffer>, logger: Logger, handler: @escaping Handler
    ) async {
        let remote = connection.channel.remoteAddress?.ipAddress.map(Self.unmapped)
        do {
            try await connection.executeThenClose { inbound, outbound in
                for try await frame in inbound {
                    let request: ControlEnvelope<ControlRequest>
                    do throws(ControlDecodingError) {
                        switch frame {
                        case .message(let bytes): request = try ControlCodec.decodeRequest(bytes)
                        case .oversize(let size): throw .frameTooLarge(size)
                        }
                    } catch {
                        let total = malformedCount.increment()
                        // A flood of bad input must not flood the log: the first ten, then every hundredth.
                        if total <= 10 || total % 100 == 0 {
                            logger.warning("rejected control message from \(remote ?? "?") (\(total) so far): \(error)")
                        }
                        let reply = ControlEnvelope<ControlResponse>(id: 0, message: .failure(error.failure))
                        try await outbound.write(ByteBuffer(bytes: ControlCodec.encodeResponse(reply)))
                        return  // close: the stream cannot be trusted after a bad frame
                    }
                    let response = await handler(request.message, remote)
                    let reply = ControlEnvelope(id: request.id, message: response)
                    try await outbound.write(ByteBuffer(bytes: ControlCodec.encodeResponse(reply)))
                }
            }
        } catch {
            logger.debug("control connection from \(remote ?? "?") ended: \(error)")
        }
    }

    /// Stops listening; `run` then ends the connections still open and returns.
    func close() async {
        closing.store(true, ordering: .releasing)
        try? await channel.channel.close()
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

/// A counter shared between the server's tasks (control plane, not the audio path).
final class ManagedCounter: Sendable {
    private let storage = Synchronization.Atomic<Int>(0)
    /// Adds one and returns the new total.
    @discardableResult
    func increment() -> Int { storage.add(1, ordering: .relaxed).newValue }
    var value: Int { storage.load(ordering: .relaxed) }
}

import Synchronization
