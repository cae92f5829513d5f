#if canImport(Glibc)
import Glibc
#endif
import Logging
import TuttiCore
import TuttiDiscovery
import TuttiEngine
import TuttiIO
import TuttiJACK
import TuttiSession
import TuttiWire

/// A running Tutti peer: its ports, its control channel, its DNS-SD presence, and its live connections.
///
/// Everything here is control plane: the actor serialises requests (connect, offer, disconnect, teardown,
/// describe, statistics) and discovery events; audio runs on the ports' device threads and the connections'
/// network threads, which the actor only starts, stops and reads counters from.
///
/// Usage: `let peer = try await Peer.start(configuration, logger:)`, then `try await peer.run()` until
/// `await peer.stop()`.
public actor Peer {
    public let configuration: PeerConfiguration
    public nonisolated let id: PeerID
    /// The TCP port the control channel listens on.
    public nonisolated let controlPort: UInt16
    private let logger: Logger
    private let server: ControlServer
    /// Held while the peer runs: no other peer takes its name in its state directory.
    private let nameLock: PeerNameLock
    /// Why the control channel failed, when it did: `run()` throws it.
    private var failure: PeerError?
    private var discovery: ServiceDiscovery?
    /// Discovery events, in the order Avahi reported them, consumed by `run()`.
    private let discoveryEvents: AsyncStream<DiscoveryEvent>
    private let discoveryContinuation: AsyncStream<DiscoveryEvent>.Continuation
    private var publishedName: String
    private var senderPorts: [String: SenderPort] = [:]
    private var receiverPorts: [String: ReceiverPort] = [:]
    private var sending: [ConnectionID: (connection: SendConnection, port: SenderPort)] = [:]
    private var receiving: [ConnectionID: (connection: ReceiveConnection, port: ReceiverPort)] = [:]
    private var knownPeers: [String: KnownPeer] = [:]
    private var lastStates: [ConnectionID: ConnectionState] = [:]
    /// Sender port → destination pairs whose `connect` awaits the receiver's answer.
    private var connectsUnderWay = Set<String>()
    private var stopped = false
    /// The shared beat clock, when the peer runs it.
    public nonisolated let link: LinkService?
    /// The media engine: the paced device clocks every non-JACK port streams on.
    private let engine: MediaEngine
    /// The peer's JACK client (`tutti-<name>`), when it has `jack` ports: their device clock.
    private let jack: JACKClient?
    /// JACK events already reported in the log, and when xruns and late or missed cycles were last reported
    /// (at most every 10 s).
    private var reportedJACK = JACKEvents()
    private var lastXrunReport = ContinuousClock.now

    /// Starts a peer: loads its identity, binds the control channel, publishes and browses through Avahi.
    ///
    /// - Throws: a one-line `PeerError` (bad port names, a peer of this name already running with this state
    ///   directory, control port taken, state directory not writable, no JACK server for `jack` ports, JACK
    ///   client or port names taken).
    public static func start(_ configuration: PeerConfiguration, logger: Logger) async throws(PeerError) -> Peer {
        var configuration = configuration
        // The name is published through DNS-SD (at most 63 bytes) and names the peer's state files.
        let name = configuration.name
        guard (1...63).contains(name.utf8.count), !name.contains("/"), !name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw PeerError("invalid peer name '\(name)': use 1–63 bytes, without '/' or control characters")
        }
        var seen = Set<String>()
        for port in configuration.ports {
            guard PortDescriptor.isValidName(port.descriptor.name) else {
                throw PeerError("invalid port name '\(port.descriptor.name)': use 1–32 of A–Z a–z 0–9 _ . -")
            }
            guard seen.insert(port.descriptor.name).inserted else {
                throw PeerError("two ports are named '\(port.descriptor.name)'")
            }
            do { try port.checkOutput() } catch { throw PeerError(error) }
        }
        let (id, nameLock) = try PeerIdentity.claim(name: configuration.name, directory: configuration.stateDirectory)
        let jack = try openJACK(for: &configuration)
        let server: ControlServer
        do throws(PeerError) { server = try await ControlServer(port: configuration.controlPort) } catch {
            jack?.close()
            throw error
        }
        if configuration.realtimePriority > 0 {
            switch RealtimeScheduling.enable(priority: configuration.realtimePriority) {
            case .granted(let priority):
                logger.info("audio threads run at realtime priority \(priority) (SCHED_FIFO)")
            case .refused(let reason):
                logger.notice(
                    "audio threads run at normal priority: realtime scheduling refused (\(reason)); for steady low latency allow it (root, or the audio group with an rtprio limit in /etc/security/limits.d/)")
            }
        } else {
            RealtimeScheduling.disable()
        }
        var link: LinkService?
        if let linkConfiguration = configuration.link {
            do {
                let service = try LinkService(configuration: linkConfiguration)
                service.start()
                link = service
                logger.info("joined the shared beat clock (Ableton Link) on \(service.interfaceNames.joined(separator: ", "))")
            } catch {
                logger.warning("cannot run the beat clock (\(error)); media is timed on the wall clock")
            }
        }
        let peer = Peer(
            configuration: configuration, id: id, nameLock: nameLock, server: server, link: link, jack: jack, logger: logger)
        do throws(PeerError) {
            try await peer.startJACK()
        } catch {
            await peer.stop()
            throw error
        }
        await peer.startDiscovery()
        return peer
    }

    /// Opens the peer's JACK client when it has `jack` ports, and gives those ports the server's rate (their
    /// only one). The server is `$JACK_DEFAULT_SERVER`, else "default"; it is never started.
    private static func openJACK(for configuration: inout PeerConfiguration) throws(PeerError) -> JACKClient? {
        guard configuration.ports.contains(where: \.isJACK) else { return nil }
        let client: JACKClient
        do { client = try JACKClient(name: "tutti-\(configuration.name)") } catch { throw PeerError(error.message) }
        let rate = client.sampleRate
        guard StreamLimits.sampleRates.contains(rate) else {
            client.close()
            throw PeerError("the JACK server runs at \(rate) Hz; Tutti streams \(StreamLimits.sampleRates.lowerBound)–\(StreamLimits.sampleRates.upperBound) Hz")
        }
        for index in configuration.ports.indices where configuration.ports[index].isJACK {
            configuration.ports[index].descriptor.sampleRates = [rate]
        }
        return client
    }

    /// Registers the `jack` ports on the JACK client, activates it, and makes the `connect=` connections.
    private func startJACK() throws(PeerError) {
        guard let jack else { return }
        for port in configuration.ports where port.isJACK {
            do {
                if let sender = senderPorts[port.descriptor.name] { try sender.attachJACK(to: jack) }
                if let receiver = receiverPorts[port.descriptor.name] { try receiver.attachJACK(to: jack) }
            } catch { throw PeerError(error) }
        }
        do { try jack.activate() } catch { throw PeerError(error.message) }
        reportedJACK = jack.events
        logger.info(
            "JACK client \(jack.name) on server '\(jack.serverName)': \(jack.sampleRate) Hz, \(jack.bufferSize) frames per cycle")
        for port in configuration.ports where port.isJACK {
            guard let target = port.jackConnectTarget else { continue }
            connectJACK(port, to: target, client: jack)
        }
    }

    /// `connect=CLIENT:PORT_PREFIX`: connects the port's channels, in order, to the matching ports of the
    /// other direction. Missing or refused ones are logged, not fatal (the user can still `jack_connect`).
    private func connectJACK(_ port: PortConfiguration, to target: String, client: JACKClient) {
        let isSender = port.descriptor.kind == .sender
        let pattern = "^" + target.map { "\\^$.|?*+()[]{}".contains($0) ? "\\\($0)" : String($0) }.joined()
        let others = client.ports(matching: pattern, direction: isSender ? .output : .input)
        guard !others.isEmpty else {
            logger.warning("JACK port \(port.descriptor.name): no \(isSender ? "output" : "input") ports match '\(target)'; connect them with jack_connect")
            return
        }
        for (channel, other) in zip(1...port.descriptor.channels, others) {
            let own = "\(client.name):\(port.descriptor.name)_\(channel)"
            let (source, destination) = isSender ? (other, own) : (own, other)
            if client.connect(source, to: destination) {
                logger.info("JACK: connected \(source) → \(destination)")
            } else {
                logger.warning("JACK: cannot connect \(source) → \(destination)")
            }
        }
    }

    private init(
        configuration: PeerConfiguration, id: PeerID, nameLock: PeerNameLock, server: ControlServer, link: LinkService?,
        jack: JACKClient?, logger: Logger
    ) {
        self.configuration = configuration
        self.link = link
        self.jack = jack
        let captureClock = CaptureClockSource(link: link)
        self.id = id
        self.nameLock = nameLock
        self.server = server
        self.controlPort = server.port
        self.logger = logger
        self.publishedName = configuration.name
        (discoveryEvents, discoveryContinuation) = AsyncStream.makeStream()
        let engine = MediaEngine(periodFrames: configuration.periodFrames)
        self.engine = engine
        for port in configuration.ports {
            switch port.role {
            case .sender(let source):
                senderPorts[port.descriptor.name] = SenderPort(
                    configuration: port, source: source, engine: engine, captureClock: captureClock)
            case .receiver(let sink):
                receiverPorts[port.descriptor.name] = ReceiverPort(
                    configuration: port, sink: sink, engine: engine, captureClock: captureClock)
            }
        }
        for endpoint in configuration.explicitPeers {
            knownPeers[endpoint.description] = KnownPeer(name: endpoint.description, id: nil, endpoints: [endpoint])
        }
    }

    /// The name the peer is published under (differs from the configured one after a collision).
    public var name: String { publishedName }

    /// Serves control requests and watches connections until `stop()`.
    ///
    /// - Throws: a one-line `PeerError` when the control channel fails (logged at error level; the peer
    ///   stops, as nobody could reach it any more).
    public func run() async throws(PeerError) {
        logger.info(
            "peer \(publishedName) (id \(id.short)) listening for control on port \(controlPort); ports: \(configuration.ports.map { "\($0.descriptor.name) (\($0.descriptor.kind))" }.joined(separator: ", "))")
        await withDiscardingTaskGroup { group in
            group.addTask { [server, logger] in
                do throws(PeerError) {
                    try await server.run(logger: logger) { request, remote in await self.handle(request, remoteHost: remote) }
                } catch {
                    await self.controlChannelFailed(error)
                }
            }
            group.addTask { await self.watchConnections() }
            group.addTask {
                for await event in self.discoveryEvents { await self.discoveryEvent(event) }
            }
        }
        if let failure { throw failure }
    }

    private func controlChannelFailed(_ error: PeerError) async {
        logger.error("\(error.message); the peer cannot be reached, so it stops")
        failure = error
        await stop()
    }

    /// Tears every connection down (telling the other ends), withdraws the DNS-SD service, flushes sinks and
    /// stops the control channel. Idempotent.
    public func stop() async {
        guard !stopped else { return }
        stopped = true
        discovery?.stop()
        discoveryContinuation.finish()
        let presence = self.presence
        await withDiscardingTaskGroup { group in
            for peer in knownPeers.values where peer.id != nil {
                let endpoints = peer.endpoints
                group.addTask { _ = try? await ControlClient.send(.bye(presence), toAnyOf: endpoints, timeout: .milliseconds(300)) }
            }
            for (id, entry) in sending {
                if let endpoint = entry.connection.peerEndpoint {
                    group.addTask { await Self.notify(endpoint, of: id, reason: "peer stopping") }
                }
            }
            for (id, entry) in receiving {
                if let endpoint = entry.connection.peerEndpoint {
                    group.addTask { await Self.notify(endpoint, of: id, reason: "peer stopping") }
                }
            }
        }
        for (_, entry) in sending { await entry.port.remove(entry.connection) }
        sending.removeAll()
        for port in senderPorts.values { await port.shutdown() }
        for id in Array(receiving.keys) { await remove(id, reason: "closed: peer stopping", notify: false) }
        for port in receiverPorts.values { await port.shutdown() }
        jack?.close()
        await server.close()
        nameLock.release()
        link?.stop()
        logger.info("peer \(publishedName) stopped")
    }

    // MARK: - Requests

    /// Answers one control request. Control plane.
    public func handle(_ request: ControlRequest, remoteHost: String?) async -> ControlResponse {
        guard !stopped else { return .failure(ControlFailure(.busy, "peer \(publishedName) is stopping")) }
        switch request {
        case .describe: return .description(describe())
        case .statistics: return .statistics(statistics())
        case .connect(let body): return await connect(body)
        case .offer(let body): return await accept(body, remoteHost: remoteHost)
        case .disconnect(let body): return await disconnect(body)
        case .teardown(let body):
            await remove(body.connectionID, reason: "closed by the other end (\(body.reason))", notify: false)
            return .done
        case .hello(let presence):
            if let remoteHost { introduced(presence, from: ControlEndpoint(host: remoteHost, port: presence.controlPort)) }
            return .done
        case .bye(let presence):
            if let name = knownPeers.first(where: { $0.value.id == presence.id })?.key {
                knownPeers.removeValue(forKey: name)
                logger.info("peer \(name) left")
            }
            return .done
        }
    }

    private func describe() -> PeerDescription {
        let connections = sending.values.map { $0.connection.summary } + receiving.values.map(\.connection.currentSummary)
        return PeerDescription(
            id: id, name: publishedName, host: Self.hostName, protocolVersion: ControlProtocol.version,
            ports: configuration.ports.map(\.descriptor), connections: connections.sorted { $0.id.rawValue < $1.id.rawValue },
            knownPeers: knownPeers.values.sorted { $0.name < $1.name }, runningSampleRates: runningSampleRates)
    }

    /// The rate of every port that runs now (a sender while it streams or a jack port; a receiver while it plays).
    private var runningSampleRates: [String: Int] {
        var rates = [String: Int]()
        for (name, port) in senderPorts { rates[name] = port.activeSampleRate }
        for (name, port) in receiverPorts { rates[name] = port.activeSampleRate }
        return rates
    }

    private func statistics() -> [ConnectionStatistics] {
        let problem = jackProblem
        let sent = sending.values.map { entry in
            var figures = entry.connection.statistics()
            figures.deviceOverruns = entry.port.deviceOverruns
            if entry.port.configuration.isJACK { figures.deviceProblem = problem }
            return figures
        }
        let received = receiving.values.map { entry in
            var figures = entry.connection.statistics()
            figures.deviceOverruns = entry.port.deviceOverruns
            figures.strayDatagrams = entry.port.strayDatagrams
            if entry.port.configuration.isJACK { figures.deviceProblem = problem }
            return figures
        }
        return (sent + received).sorted { $0.id.rawValue < $1.id.rawValue }
    }

    /// The RTP payload type of every stream this peer receives or sends to a standard receiver: the first
    /// dynamic one (RFC 3551 §6). Each connection has its own SSRC and UDP port, so one number serves all.
    private static let payloadType: UInt8 = 96

    /// Sender side: offer a stream to the receiver's peer, then start sending to the port it answers with;
    /// to a standard RTP receiver, choose the format here and start sending at once.
    private func connect(_ request: ConnectRequest) async -> ControlResponse {
        let port: PortDescriptor
        switch PortSelection.source(PortReference(peer: publishedName, port: request.source.port), in: configuration.ports.map(\.descriptor)) {
        case .success(let found): port = found
        case .failure(let refusal): return .failure(refusal.failure)
        }
        guard let senderPort = senderPorts[port.name] else {
            return .failure(ControlFailure(.wrongDirection, "\(request.source) cannot be a source"))
        }
        var generator = SystemRandomNumberGenerator()
        let connectionID = ConnectionID.random(using: &generator)
        let source = PortReference(peer: publishedName, port: port.name)
        if let rate = request.options.sampleRate, let refusal = rateRefusal(rate, source: source, port: port, senderPort: senderPort) {
            logger.info("refused \(source) → \(request.destination): \(refusal.message)")
            return .failure(refusal)
        }
        if let existing = await existingConnection(from: port.name, to: request.destination, at: request.destinationEndpoints) {
            if existing.state == .failed {
                // Connecting again would not mend the receiver's output: say what is wrong there.
                return .failure(ControlFailure(
                    .busy,
                    "\(request.destination) cannot play: \(existing.failureReason ?? "its output failed") (\(source) is connected to it [\(existing.id)]; disconnect, mend the output, then connect again)"))
            }
            logger.info("connect \(source) → \(request.destination): already connected [\(existing.id)]")
            return .alreadyConnected(existing)
        }
        // Two connects of one pair at once would both pass the check above while the first awaits its answer.
        let pair = "\(port.name)→\(request.destination.description.lowercased())"
        guard connectsUnderWay.insert(pair).inserted else {
            return .failure(ControlFailure(.busy, "\(source) is being connected to \(request.destination) right now; try again in a moment"))
        }
        defer { connectsUnderWay.remove(pair) }
        if let destination = request.rtpDestination {
            return connect(source, port: port, senderPort: senderPort, toStandardReceiver: destination, id: connectionID, options: request.options)
        }
        let offer = Negotiation.offer(
            id: connectionID, peerID: id, source: source, destination: request.destination, port: port,
            currentRates: senderPort.currentRates, senderClock: senderPort.configuration.isJACK ? "jack" : "system",
            options: request.options, captureClock: link == nil ? .realtime : .linkGhost, controlPort: controlPort)

        let answer: StreamAnswer
        let endpoint: ControlEndpoint
        do {
            let (response, reached) = try await ControlClient.send(.offer(offer), toAnyOf: request.destinationEndpoints)
            switch response {
            case .answer(let body) where body.connectionID == connectionID: answer = body
            case .failure(let failure): return .failure(failure)
            default: return .failure(ControlFailure(.malformed, "\(request.destination.peer) answered the offer with \(response.typeName)"))
            }
            endpoint = reached
        } catch {
            // The offer may have reached the receiver and only its answer been lost or late: tell every
            // address of it to drop the connection, so that nothing is left half-connected.
            await withDiscardingTaskGroup { group in
                for destination in request.destinationEndpoints {
                    group.addTask { await Self.notify(destination, of: connectionID, reason: "the offer's answer did not arrive") }
                }
            }
            return .failure(ControlFailure(error.code, "cannot reach \(request.destination.peer): \(error.message)"))
        }

        let format: StreamFormat
        switch Negotiation.acceptAnswer(answer, to: offer, port: port) {
        case .success(let accepted): format = accepted
        case .failure(let refusal):
            await Self.notify(endpoint, of: connectionID, reason: "answer outside the offer")
            return .failure(refusal.failure)
        }
        var summary = ConnectionSummary(
            id: connectionID, role: .sending, source: source, destination: request.destination, format: format, state: .playing)
        do throws(PeerError) {
            let address: UDPAddress
            do {
                address = try UDPAddress(host: endpoint.host, port: answer.mediaPort)
            } catch {
                throw PeerError("cannot resolve \(endpoint.host): \(error)")
            }
            // What an SDP description of this stream needs (absent for a zoned link-local address).
            if let host = address.numericHost, let numeric = IPAddress(parsing: host) {
                summary.rtpDestination = RTPDestination(address: numeric, port: answer.mediaPort)
                summary.payloadType = answer.payloadType
            }
            try startSending(summary, to: address, peerEndpoint: endpoint, ssrc: answer.ssrc, payloadType: answer.payloadType, from: senderPort)
        } catch {
            await Self.notify(endpoint, of: connectionID, reason: "sender failed to start")
            return .failure(ControlFailure(.internalError, "\(source) cannot start sending: \(error.message)"))
        }
        return .connected(summary)
    }

    /// Why `senderPort` cannot stream at `rate` now, in the user's terms: a rate it never offers, or another
    /// rate it is already running at (a port's device clock runs at one rate for all its connections).
    private func rateRefusal(_ rate: Int, source: PortReference, port: PortDescriptor, senderPort: SenderPort) -> ControlFailure? {
        let user = sending.values.first { $0.port === senderPort }?.connection.summary
        return Negotiation.senderRate(rate, source: source, port: port, currentRates: senderPort.currentRates, runningFor: user)?.failure
    }

    /// The live sending connection from `portName` to `destination`, if there is one, with the receiving
    /// end's state (and failure, if its output failed). A connection whose
    /// receiving peer no longer has it (it restarted, or dropped the stream) is removed here instead, so the
    /// pair can connect again. Asks the receiving peer where the request says it is now (one `describe`); if
    /// it does not answer there, the offer that follows fails and says so.
    private func existingConnection(
        from portName: String, to destination: PortReference, at endpoints: [ControlEndpoint]
    ) async -> ConnectionSummary? {
        guard
            let entry = sending.values.first(where: {
                let summary = $0.connection.summary
                return summary.source.port == portName && summary.destination.port == destination.port
                    && Self.samePeer(summary.destination.peer, destination.peer)
            })
        else { return nil }
        let summary = entry.connection.summary
        guard entry.connection.peerEndpoint != nil else { return summary }  // a standard RTP receiver
        // Not answering: keep the connection, and let the offer that follows fail and say so.
        guard let answer = try? await ControlClient.send(.describe, toAnyOf: endpoints, timeout: .seconds(1)),
            case .description(let other) = answer.0
        else { return nil }
        if let received = other.connections.first(where: { $0.id == summary.id }) {
            var existing = summary
            (existing.state, existing.failureReason) = (received.state, received.failureReason)
            return existing
        }
        await remove(summary.id, reason: "closed: \(destination.peer) no longer receives it", notify: false)
        return nil
    }

    /// Sender side, to a standard RTP receiver (ffmpeg, GStreamer, PipeWire…): no offer, no answer and no
    /// teardown notice; the format is this peer's choice (`StandardReceiverFormat`).
    private func connect(
        _ source: PortReference, port: PortDescriptor, senderPort: SenderPort, toStandardReceiver destination: RTPDestination,
        id connectionID: ConnectionID, options: ConnectOptions
    ) -> ControlResponse {
        if let existing = sending.values.first(where: { $0.connection.summary.rtpDestination == destination && $0.connection.peerEndpoint == nil }) {
            return .failure(ControlFailure(
                .busy, "\(destination) already receives \(existing.connection.summary.source) [\(existing.connection.id)]; disconnect it first"))
        }
        let format: StreamFormat
        switch StandardReceiverFormat.chooseFormat(
            source: source, destination: destination, port: port, currentRates: senderPort.currentRates, options: options)
        {
        case .success(let chosen): format = chosen
        case .failure(let refusal):
            logger.info("refused \(source) → \(destination): \(refusal.message)")
            return .failure(refusal.failure)
        }
        var generator = SystemRandomNumberGenerator()
        let summary = ConnectionSummary(
            id: connectionID, role: .sending, source: source, destination: destination.portReference, format: format,
            state: .playing, rtpDestination: destination, payloadType: Self.payloadType)
        do throws(PeerError) {
            let address: UDPAddress
            do {
                address = try UDPAddress(numericHost: destination.address.description, port: destination.port)
            } catch {
                throw PeerError("cannot send to \(destination): \(error)")
            }
            try startSending(
                summary, to: address, peerEndpoint: nil, ssrc: UInt32.random(in: 1 ... .max, using: &generator),
                payloadType: Self.payloadType, from: senderPort)
        } catch {
            return .failure(ControlFailure(.internalError, "\(source) cannot start sending: \(error.message)"))
        }
        return .connected(summary)
    }

    /// Starts a sending connection on `senderPort` (its socket, its device thread) and records it.
    private func startSending(
        _ summary: ConnectionSummary, to address: UDPAddress, peerEndpoint: ControlEndpoint?, ssrc: UInt32, payloadType: UInt8,
        from senderPort: SenderPort
    ) throws(PeerError) {
        let connection: SendConnection
        do {
            let socket = try senderPort.sendingSocket()
            connection = SendConnection(
                summary: summary, destination: socket.destination(address), peerEndpoint: peerEndpoint, ssrc: ssrc,
                payloadType: payloadType, maxPeriodFrames: configuration.periodFrames)
            try senderPort.add(connection)
        } catch { throw PeerError(error) }
        sending[summary.id] = (connection, senderPort)
        // A standard receiver (no peer endpoint) buffers on its own: the target latency is not ours to report.
        let format = peerEndpoint == nil ? summary.format.wireDescription : summary.format.description
        logger.info("connection \(summary.id): \(summary.source) → \(summary.destination) at \(address), \(format)")
    }

    /// Receiver side: negotiate the format, open a socket and start playing.
    private func accept(_ offer: StreamOffer, remoteHost: String?) async -> ControlResponse {
        let destination = PortReference(peer: publishedName, port: offer.destination.port)
        guard receiving[offer.connectionID] == nil else {
            return .failure(ControlFailure(.busy, "connection \(offer.connectionID) already exists"))
        }
        let port: PortDescriptor
        switch PortSelection.destination(destination, in: configuration.ports.map(\.descriptor)) {
        case .success(let found): port = found
        case .failure(let refusal): return .failure(refusal.failure)
        }
        guard let receiverPort = receiverPorts[port.name] else {
            return .failure(ControlFailure(.wrongDirection, "\(destination) cannot receive audio"))
        }
        if let existing = receiving.values.map(\.connection).first(where: {
            $0.summary.destination.port == port.name && $0.summary.source.port == offer.source.port
                && Self.samePeer($0.summary.source.peer, offer.source.peer)
        }) {
            // The sender checks for the pair before offering; a second offer means it lost track (it
            // restarted): a stream that has stopped gives way, a live one is kept.
            guard existing.state == .lost else {
                return .failure(ControlFailure(
                    .busy, "\(destination) already receives \(offer.source) [\(existing.id)]; disconnect it first"))
            }
            await remove(existing.id, reason: "closed: \(offer.source) connected again", notify: false)
        }
        var offer = offer
        offer.destination = destination
        let format: StreamFormat
        let capabilities = ReceiverCapabilities(port: port, activeSampleRate: receiverPort.activeSampleRate)
        switch Negotiation.chooseFormat(offer: offer, receiver: capabilities) {
        case .success(let chosen): format = chosen
        case .failure(let refusal):
            logger.info("refused \(offer.source) → \(destination): \(refusal.message)")
            return .failure(refusal.failure)
        }
        var generator = SystemRandomNumberGenerator()
        let ssrc = UInt32.random(in: 1 ... .max, using: &generator)
        let payloadType = Self.payloadType
        let summary = ConnectionSummary(
            id: offer.connectionID, role: .receiving, source: offer.source, destination: destination, format: format,
            state: .buffering)
        let senderEndpoint = remoteHost.map { ControlEndpoint(host: $0, port: offer.senderControlPort) }
        do {
            let connection = try ReceiveConnection(
                summary: summary, ssrc: ssrc, payloadType: payloadType, peerEndpoint: senderEndpoint,
                captureClock: offer.captureClock, maxPeriodFrames: configuration.periodFrames, signalLossTimeout: configuration.signalLossTimeout,
                concealment: configuration.concealment, outputSampleRate: Negotiation.deviceRate(for: format, receiver: capabilities),
                driftCompensation: configuration.driftCompensation, remoteClock: offer.remoteClockKey)
            try await receiverPort.add(connection)
            receiving[offer.connectionID] = (connection, receiverPort)
            let conversion = connection.receiver.outputSampleRate != format.sampleRate ? ", converted to \(connection.receiver.outputSampleRate) Hz" : ""
            let take = receiverPort.takePath.map { ", recording \($0)" } ?? ""
            logger.info("connection \(offer.connectionID): receiving \(offer.source) → \(destination) on UDP port \(connection.mediaPort ?? 0), \(format)\(conversion)\(take)")
            return .answer(StreamAnswer(
                connectionID: offer.connectionID, format: format, mediaPort: connection.mediaPort ?? 0, ssrc: ssrc,
                payloadType: payloadType))
        } catch {
            return .failure(ControlFailure(.internalError, "\(destination) cannot start receiving: \(error.message)"))
        }
    }

    private func disconnect(_ request: DisconnectRequest) async -> ControlResponse {
        func matches(_ summary: ConnectionSummary) -> Bool {
            if let id = request.connectionID, id != summary.id { return false }
            if let source = request.source, source.port != summary.source.port || !Self.samePeer(source.peer, summary.source.peer) {
                return false
            }
            if let destination = request.destination,
                destination.port != summary.destination.port || !Self.samePeer(destination.peer, summary.destination.peer)
            {
                return false
            }
            return true
        }
        let ids = sending.values.map(\.connection.summary).filter(matches).map(\.id)
            + receiving.values.map(\.connection.summary).filter(matches).map(\.id)
        guard !ids.isEmpty else {
            let what = [request.source.map { "from \($0)" }, request.destination.map { "to \($0)" }, request.connectionID.map { "with id \($0)" }]
                .compactMap { $0 }.joined(separator: " ")
            return .failure(ControlFailure(.notFound, "peer \(publishedName) has no connection \(what)"))
        }
        for id in ids { await remove(id, reason: "disconnected", notify: true) }
        return .disconnected(count: ids.count)
    }

    /// Peer names compare case-insensitively, as DNS-SD names do.
    private static func samePeer(_ lhs: String, _ rhs: String) -> Bool { lhs.lowercased() == rhs.lowercased() }

    private func remove(_ id: ConnectionID, reason: String, notify: Bool) async {
        if let entry = sending.removeValue(forKey: id) {
            await entry.port.remove(entry.connection)
            logger.info("connection \(id) (\(entry.connection.summary.source) → \(entry.connection.summary.destination)) \(reason)")
            if notify, let endpoint = entry.connection.peerEndpoint { await Self.notify(endpoint, of: id, reason: reason) }
        }
        if let entry = receiving.removeValue(forKey: id) {
            let take = await entry.port.remove(entry.connection)
            lastStates[id] = nil
            let final = entry.connection.statistics()
            logger.info(
                "connection \(id) (\(entry.connection.summary.source) → \(entry.connection.summary.destination)) \(reason); final: received \(final.packetsReceived), lost \(final.packetsLost), late \(final.packetsLate), duplicated \(final.packetsDuplicated), reordered \(final.packetsReordered), invalid \(final.packetsInvalid), concealed \(final.concealedFrames) frames, underruns \(final.underruns), pending \(final.packetsPending), FEC-recovered \(final.fecRecoveredFrames) frames")
            if let take, let path = take.path {
                logger.info(
                    "receiver \(entry.port.descriptor.name): take \(path) closed, \((take.seconds * 10).rounded() / 10) s\(take.failure.map { " (\($0))" } ?? "")")
            }
            if notify, let endpoint = entry.connection.peerEndpoint { await Self.notify(endpoint, of: id, reason: reason) }
        }
    }

    private static func notify(_ endpoint: ControlEndpoint, of id: ConnectionID, reason: String) async {
        _ = try? await ControlClient.send(.teardown(TeardownNotice(connectionID: id, reason: reason)), to: endpoint, timeout: .seconds(1))
    }

    /// Logs what changed on the JACK server since the last call: shutdown, sample-rate and buffer-size
    /// changes, xruns and this client's late or missed cycles (at most one line each per call, xruns at most
    /// every 10 s).
    private func reportJACKEvents() {
        guard let jack else { return }
        var now = jack.events
        defer { reportedJACK = now }
        if let reason = now.shutdownReason, reportedJACK.shutdownReason == nil {
            let names = configuration.ports.filter(\.isJACK).map(\.descriptor.name).joined(separator: ", ")
            logger.error(
                "the JACK server shut client \(jack.name) down (\(reason.isEmpty ? "no reason given" : reason)): jack ports \(names) are stopped; restart the peer once the server runs again")
        }
        if now.sampleRateChanges != reportedJACK.sampleRateChanges {
            logger.warning(
                "the JACK server's sample rate changed to \(now.sampleRate) Hz; jack ports keep streaming at \(configuration.ports.first(where: \.isJACK)?.descriptor.sampleRates.first ?? 0) Hz (restart the peer to follow)")
        }
        if now.bufferSizeChanges != reportedJACK.bufferSizeChanges {
            logger.info("the JACK server's buffer size is now \(now.bufferSize) frames (processed in chunks of at most \(configuration.periodFrames))")
        }
        if now.xruns != reportedJACK.xruns || now.lateCycles != reportedJACK.lateCycles || now.missedCycles != reportedJACK.missedCycles
            || now.serverStalls != reportedJACK.serverStalls || now.timelineRebases != reportedJACK.timelineRebases
        {
            guard ContinuousClock.now - lastXrunReport >= .seconds(10) else {
                // Report these with the next ones.
                (now.xruns, now.lateCycles) = (reportedJACK.xruns, reportedJACK.lateCycles)
                (now.missedCycles, now.serverStalls) = (reportedJACK.missedCycles, reportedJACK.serverStalls)
                now.timelineRebases = reportedJACK.timelineRebases
                return
            }
            lastXrunReport = .now
            logger.warning(
                "JACK reported \(now.xruns - reportedJACK.xruns) xrun(s) (\(now.xruns) since the peer started); client \(jack.name) woke more than a period late in \(now.lateCycles - reportedJACK.lateCycles) cycle(s), missed \(now.missedCycles - reportedJACK.missedCycles), caught up \(now.serverStalls - reportedJACK.serverStalls) server stall(s), restarted its timeline \(now.timelineRebases - reportedJACK.timelineRebases) time(s) (a non-realtime or overloaded server)")
        }
    }

    /// The JACK port's device problem for `tutti stats`, when there is one (the server shut the client down).
    private var jackProblem: String? {
        guard let reason = jack?.events.shutdownReason else { return nil }
        return "JACK server shut the client down: \(reason.isEmpty ? "no reason given" : reason)"
    }

    /// Logs receiving connections that lose or regain their stream, a port whose output fails (once, at
    /// error level) and JACK events (checked four times a second).
    private func watchConnections() async {
        while !stopped {
            try? await Task.sleep(for: .milliseconds(250))
            reportJACKEvents()
            for (id, entry) in receiving {
                let state = entry.connection.state
                let previous = lastStates[id]
                guard state != previous else { continue }
                lastStates[id] = state
                let summary = entry.connection.summary
                switch state {
                case .failed:
                    // One line per failure of the port's output, however many connections play into it.
                    if let reason = entry.connection.sinkFailure?.claimReport() {
                        let ids = receiving.filter { $0.value.port === entry.port }.keys.map(\.description).sorted()
                        logger.error(
                            "receiver \(entry.port.descriptor.name): \(reason) (connection\(ids.count == 1 ? "" : "s") \(ids.joined(separator: ", ")) failed)")
                    }
                case .lost:
                    logger.warning("connection \(id) from \(summary.source) lost: no packets for \(configuration.signalLossTimeout), playing silence")
                case .playing where previous == .lost:
                    logger.info("connection \(id) from \(summary.source) resumed")
                case .playing:
                    logger.info("connection \(id) from \(summary.source) playing")
                default: break
                }
            }
        }
    }

    // MARK: - Discovery

    private func startDiscovery() {
        guard configuration.discovery else { return }
        do {
            let continuation = discoveryContinuation
            let discovery = try ServiceDiscovery(serviceType: "_tutti._udp") { event in continuation.yield(event) }
            self.discovery = discovery
            discovery.publish(name: configuration.name, port: controlPort, txt: txtRecord())
            discovery.startBrowsing()
        } catch {
            logger.warning("DNS-SD is unavailable (\(error)); find peers with --peer HOST:PORT")
        }
    }

    /// This peer, as `hello` and `bye` announce it.
    private var presence: PeerPresence { PeerPresence(id: id, name: publishedName, controlPort: controlPort) }

    /// Tells a peer found through Avahi that this one is here, without waiting for Avahi to finish probing
    /// this peer's name (about a second). Fire and forget: Avahi still announces the peer if this fails.
    private func introduce(to endpoints: [ControlEndpoint]) {
        let presence = self.presence
        Task { _ = try? await ControlClient.send(.hello(presence), toAnyOf: endpoints, timeout: .seconds(1)) }
    }

    /// A peer said hello: know it now (Avahi will confirm it). A peer that says hello under a name that
    /// another known peer holds is about to be renamed by Avahi's probing, and will say hello again.
    private func introduced(_ presence: PeerPresence, from endpoint: ControlEndpoint) {
        guard presence.id != id else { return }
        if let holder = knownPeers[presence.name], holder.id != nil, holder.id != presence.id { return }
        if let previous = knownPeers.first(where: { $0.value.id == presence.id && $0.key != presence.name })?.key {
            knownPeers.removeValue(forKey: previous)
        }
        if knownPeers[presence.name] == nil {
            logger.info("found peer \(presence.name) at \(endpoint) (it said hello)")
            knownPeers[presence.name] = KnownPeer(name: presence.name, id: presence.id, endpoints: [endpoint])
        }
    }

    private func txtRecord() -> [String: String] {
        var summary = ""
        for port in configuration.ports {
            let entry = port.descriptor.summary
            if summary.utf8.count + entry.utf8.count + 7 > 250 { break }  // a TXT string holds 255 bytes
            summary += summary.isEmpty ? entry : ",\(entry)"
        }
        return ["v": String(ControlProtocol.version), "id": id.rawValue, "ctl": String(controlPort), "ports": summary]
    }

    private func discoveryEvent(_ event: DiscoveryEvent) {
        switch event {
        case .published(let name):
            publishedName = name
            logger.info("published as '\(name)' (_tutti._udp)")
        case .renamed(let from, let to):
            publishedName = to
            logger.warning("the name '\(from)' is taken on this network; published as '\(to)'")
            for peer in knownPeers.values where peer.id != nil { introduce(to: peer.endpoints) }
        case .daemonUnavailable(let reason):
            logger.warning(
                "avahi-daemon is not reachable (\(reason)): peers will not find each other automatically. Start it with 'sudo systemctl start avahi-daemon' (or 'avahi-daemon -D'), or name peers with --peer HOST:PORT")
        case .daemonAvailable:
            logger.info("avahi-daemon reachable; publishing and browsing")
        case .serviceFound(let service):
            guard service.txt["id"] != id.rawValue else { return }
            let endpoints = service.addresses.map { ControlEndpoint(host: $0, port: service.port) }
            let known = KnownPeer(name: service.instanceName, id: service.txt["id"].flatMap(PeerID.init), endpoints: endpoints)
            if knownPeers[service.instanceName] == nil {
                logger.info("found peer \(service.instanceName) at \(endpoints.map(\.description).joined(separator: ", "))")
                introduce(to: endpoints)
            }
            if let stale = knownPeers.first(where: { $0.value.id == known.id && $0.key != service.instanceName })?.key {
                knownPeers.removeValue(forKey: stale)
            }
            knownPeers[service.instanceName] = known
        case .serviceRemoved(let name):
            if knownPeers.removeValue(forKey: name) != nil { logger.info("peer \(name) left") }
        }
    }

    static var hostName: String {
        var buffer = [CChar](repeating: 0, count: 256)
        gethostname(&buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
