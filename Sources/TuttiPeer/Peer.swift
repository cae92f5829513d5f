import Logging
import TuttiCore
import TuttiDiscovery
import TuttiEngine
import TuttiIO
import TuttiJACK
import TuttiProcess
import TuttiSRTP
import TuttiSecurity
import TuttiSession
import TuttiWire

/// A running Tutti peer: its ports, its control channel, its DNS-SD presence, and its live connections.
///
/// Everything here is control plane: the actor serialises requests (connect, offer, disconnect, teardown,
/// describe, statistics), discovery events and the outcomes of its own actions. What a connection may do next
/// is decided by `ConnectionLifecycle` (TuttiSession), a value-type state machine the actor feeds and whose
/// actions it performs (`Peer+Lifecycle.swift`); audio runs on the media engine's device threads, which the
/// actor only starts, stops and reads counters from. The actor's concerns, a file each: start-up and shutdown
/// (here), the lifecycle's edge, sending, receiving, presence, JACK and statistics.
///
/// Usage: `let peer = try await Peer.start(configuration, logger:)`, then `try await peer.run()` until
/// `await peer.stop()`.
public actor Peer {
    public let configuration: PeerConfiguration
    public nonisolated let id: PeerID
    /// The TCP port the control channel listens on.
    public nonisolated let controlPort: UInt16
    /// The shared beat clock, when the peer runs it.
    public nonisolated let link: LinkService?
    let logger: Logger
    let server: ControlServer
    /// Held while the peer runs: no other peer takes its name in its state directory.
    private let nameLock: PeerNameLock
    /// The real network's transport, whose keys a key change updates (nil on a fake network).
    let tcpTransport: TCPControlTransport?
    /// The session keys in use now (members-only sessions), as last read from `configuration.keyFile`.
    var sessionKeys: SessionKeyRing?
    /// Why the control channel failed, when it did: `run()` throws it.
    private var failure: PeerError?
    var stopped = false

    // MARK: Connections
    /// Every connection's phase, the peers known and the replies owed: what the peer decides.
    var lifecycle: ConnectionLifecycle
    /// How the control plane reaches other peers and DNS-SD, and the clock its deadlines count on.
    let environment: PeerEnvironment
    /// Control requests the lifecycle has not answered yet, by the number given to them.
    var pendingReplies: [ConnectionLifecycle.RequestID: CheckedContinuation<ControlResponse, Never>] = [:]
    var nextRequestNumber: UInt64 = 0
    /// Lifecycle inputs not yet handled: outcomes of actions fed back while a step performs its actions.
    var queuedInputs: [LifecycleStep] = []
    var isStepping = false
    /// Actions under way in their own tasks (offers, probes, notices, the engine's attach and detach), until
    /// they fed their outcome back.
    var actionsInFlight = 0
    /// Hellos on their way, by number; `stop()` lets them land before it says bye.
    var introductions: [UInt64: Task<Void, Never>] = [:]
    var nextIntroduction: UInt64 = 0

    // MARK: Media
    /// The media engine: the paced device clocks every non-JACK port streams on.
    let engine: MediaEngine
    var senderPorts: [String: SenderPort] = [:]
    var receiverPorts: [String: ReceiverPort] = [:]
    var filterPorts: [String: FilterPort] = [:]
    /// The engine objects of the connections that started, by id (a peer connected to itself has both).
    var sending: [ConnectionID: (connection: SendConnection, port: SendingPort)] = [:]
    var receiving: [ConnectionID: (connection: ReceiveConnection, port: ReceivingPort)] = [:]
    /// What each receiving stream was last seen doing (fed to the lifecycle on change).
    var observations: [ConnectionID: ConnectionLifecycle.MediaObservation] = [:]
    /// Members-only sessions: the SRTP key drawn for each stream this peer offered, until it stops sending; and
    /// the key each accepted offer carried, until its stream starts.
    var outgoingMediaKeys: [ConnectionID: SRTPMasterKey] = [:]
    var incomingMediaKeys: [ConnectionID: SRTPMasterKey] = [:]
    /// Members' requests refused as beyond their rights since start (for rate-limited logging).
    var forbiddenRequests: UInt64 = 0
    /// Re-keys of streams this peer sends that did not happen (the receiver did not take the key), since start.
    var failedRekeys: UInt64 = 0

    // MARK: Presence
    var discovery: (any ServiceDiscovering)?
    /// Discovery events, in the order Avahi reported them, consumed by `run()`.
    let discoveryEvents: AsyncStream<DiscoveryEvent>
    let discoveryContinuation: AsyncStream<DiscoveryEvent>.Continuation

    // MARK: JACK
    /// The peer's JACK client (`tutti-<name>`), when it has `jack` ports: their device clock.
    let jack: JACKClient?
    /// JACK events already reported in the log, and when xruns and late or missed cycles were last reported
    /// (at most every 10 s).
    var reportedJACK = JACKEvents()
    var lastXrunReport = ContinuousClock.now

    /// Starts a peer: loads its identity, binds the control channel, publishes and browses through Avahi.
    ///
    /// - Throws: a one-line `PeerError` (bad port names, a peer of this name already running with this state
    ///   directory, control port taken, state directory not writable, no JACK server for `jack` ports, JACK
    ///   client or port names taken).
    ///
    /// `environment` is the network, DNS-SD and clock the control plane uses (tests give fakes).
    public static func start(
        _ configuration: PeerConfiguration, logger: Logger, environment: PeerEnvironment = .system
    ) async throws(PeerError) -> Peer {
        var configuration = configuration
        try validate(configuration)
        let (keyPair, nameLock) = try PeerIdentity.claim(name: configuration.name, directory: configuration.stateDirectory)
        let id = keyPair.peerID
        let jack = try openJACK(for: &configuration)
        let server: ControlServer
        do throws(PeerError) {
            let policy = ControlChannelPolicy(
                access: configuration.access, keyPair: keyPair, publicReads: configuration.publicReads, peerName: configuration.name)
            server = try await ControlServer(
                port: configuration.controlPort, addresses: configuration.controlAddresses, limits: configuration.controlLimits,
                policy: policy)
        } catch {
            jack?.close()
            throw error
        }
        if configuration.realtimePriority > 0 {
            switch RealtimeScheduling.enable(priority: configuration.realtimePriority) {
            case .granted(let priority):
                logger.info("audio threads run at realtime priority \(priority) (SCHED_FIFO)")
            case .refused(let reason):
                logger.notice(
                    "audio threads run at normal priority: realtime scheduling refused (\(reason)); for steady low latency allow it (root, or the audio group with an rtprio limit in /etc/security/limits.d/)"
                )
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
        var environment = environment
        var tcp: TCPControlTransport?
        if environment.transport is TCPControlTransport {
            // The real network: this peer's own requests prove its key pair and the session key.
            tcp = TCPControlTransport(credentials: configuration.access.keys.map { ControlCredentials(keys: $0, keyPair: keyPair) })
            environment.transport = tcp!
        }
        let peer = Peer(
            configuration: configuration, id: id, nameLock: nameLock, server: server, link: link, jack: jack, logger: logger,
            environment: environment, tcpTransport: tcp)
        do throws(PeerError) {
            try await peer.startJACK()
        } catch {
            await peer.stop()
            throw error
        }
        await peer.startDiscovery()
        return peer
    }

    /// The peer's name (published through DNS-SD: at most 63 bytes; it names the state files) and its ports'
    /// names (unique, valid) and outputs.
    private static func validate(_ configuration: PeerConfiguration) throws(PeerError) {
        let name = configuration.name
        guard (1...63).contains(name.utf8.count), !name.contains("/"),
            !name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
        else {
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
        // Standard output carries one stream of audio: one stdout receiver or monitor at most.
        let onStandardOutput = configuration.ports.filter { port in
            if case .receiver(.standardOutput) = port.role { return true }
            if case .standardOutput = port.monitor { return true }
            return false
        }.map(\.descriptor.name)
        guard onStandardOutput.count <= 1 else {
            throw PeerError(
                "ports \(onStandardOutput.joined(separator: " and ")) would both write to standard output; give one of them another sink")
        }
    }

    private init(
        configuration: PeerConfiguration, id: PeerID, nameLock: PeerNameLock, server: ControlServer, link: LinkService?,
        jack: JACKClient?, logger: Logger, environment: PeerEnvironment, tcpTransport: TCPControlTransport?
    ) {
        self.configuration = configuration
        self.environment = environment
        self.tcpTransport = tcpTransport
        sessionKeys = configuration.access.keys
        self.link = link
        self.jack = jack
        self.id = id
        self.nameLock = nameLock
        self.server = server
        self.controlPort = server.port
        self.logger = logger
        (discoveryEvents, discoveryContinuation) = AsyncStream.makeStream()
        lifecycle = ConnectionLifecycle(
            identity: ConnectionLifecycle.Identity(
                peerID: id, name: configuration.name, controlPort: server.port, captureClock: link == nil ? .realtime : .linkGhost,
                ports: configuration.ports.map(\.descriptor), host: Self.hostName,
                playingOut: Set(configuration.ports.filter(\.playsOut).map(\.descriptor.name)), rtpAllowed: configuration.rtpAllowed),
            timeouts: configuration.lifecycleTimeouts, directory: PeerDirectory(explicit: configuration.explicitPeers))
        let captureClock = CaptureClockSource(link: link)
        let engine = MediaEngine(periodFrames: configuration.periodFrames, threaded: environment.mediaThreads)
        self.engine = engine
        for port in configuration.ports {
            switch port.role {
            case .sender(let source):
                senderPorts[port.descriptor.name] = SenderPort(
                    configuration: port, source: source, engine: engine, captureClock: captureClock)
            case .receiver(let sink):
                receiverPorts[port.descriptor.name] = ReceiverPort(
                    configuration: port, sink: sink, engine: engine, captureClock: captureClock)
            case .filter(let processor):
                filterPorts[port.descriptor.name] = FilterPort(
                    descriptor: port.descriptor, processor: processor, engine: engine, captureClock: captureClock,
                    outputClock: link == nil ? .realtime : .linkGhost)
            case .filterBlock(let block):
                filterPorts[port.descriptor.name] = FilterPort(
                    descriptor: port.descriptor, processor: ProcessorSpecification(application: block.name), block: block, engine: engine,
                    captureClock: captureClock, outputClock: link == nil ? .realtime : .linkGhost)
            }
        }
    }

    /// The name the peer is published under (differs from the configured one after a collision).
    public var name: String { lifecycle.identity.name }

    /// Serves control requests and watches connections until `stop()`.
    ///
    /// - Throws: a one-line `PeerError` when the control channel fails (logged at error level; the peer
    ///   stops, as nobody could reach it any more).
    public func run() async throws(PeerError) {
        logger.info(
            "peer \(name) (id \(id.short)) listening for control on port \(controlPort); ports: \(configuration.ports.map { "\($0.descriptor.name) (\($0.descriptor.kind))" }.joined(separator: ", "))"
        )
        await withDiscardingTaskGroup { group in
            group.addTask { [server, logger] in
                do throws(PeerError) {
                    try await server.run(logger: logger) { request, caller in await self.handle(request, from: caller) }
                } catch {
                    await self.controlChannelFailed(error)
                }
            }
            group.addTask { await self.watchConnections() }
            group.addTask { await self.watchKeyFile() }
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

    /// Tears every connection down (telling the other ends), says bye to the peers it knows, withdraws the
    /// DNS-SD service, flushes sinks and stops the control channel. Idempotent.
    public func stop() async {
        guard !stopped else { return }
        stopped = true
        discovery?.stop()
        discoveryContinuation.finish()
        // A hello still on its way could land after the bye and bring this peer back to life over there.
        while let introduction = introductions.values.first { await introduction.value }
        let presence = self.presence
        let known = lifecycle.directory.knownPeers.filter { $0.id != nil }.map(\.endpoints)
        let transport = environment.transport
        await withDiscardingTaskGroup { group in
            for endpoints in known {
                group.addTask { _ = try? await transport.reply(to: .bye(presence), fromAnyOf: endpoints, timeout: .milliseconds(300)) }
            }
            // Every connection ends, its other end told; the reply comes when none is left.
            group.addTask { _ = await self.request { .shutdown(request: $0) } }
        }
        for port in senderPorts.values { await port.shutdown() }
        for port in receiverPorts.values { await port.shutdown() }
        for port in filterPorts.values { await port.shutdown() }
        jack?.close()
        await server.close()
        nameLock.release()
        link?.stop()
        logger.info("peer \(name) stopped")
    }

    /// Runs one period of every paced clock of the media engine at `time`, as the clocks' threads would: each
    /// takes in what arrived, runs its ports and sends what they queued. Only for a peer whose environment runs
    /// no media threads (tests on fake time), and only while no action is in flight (after `settle()`): ports
    /// attach and detach in the actions' tasks, which the period must not overlap.
    package func runMediaPeriod(at time: HostTime) {
        precondition(!environment.mediaThreads, "a peer with media threads runs its own periods")
        for clock in engine.allClocks { clock.runPeriod(at: time) }
    }

    // MARK: - Requests

    /// Answers one control request. Control plane.
    public func handle(_ request: ControlRequest, remoteHost: String?) async -> ControlResponse {
        await handle(request, from: ControlCaller(host: remoteHost))
    }

    /// Answers one control request from `caller`. In a members-only session a member may connect and
    /// disconnect anything, but speaks only in its own name: a hello, bye or offer must carry the peer ID its
    /// handshake proved, and only an end of a connection may tear it down or tell of its upstream. Control plane.
    public func handle(_ request: ControlRequest, from caller: ControlCaller) async -> ControlResponse {
        let remoteHost = caller.host
        guard !stopped else { return .failure(ControlFailure(.busy, "peer \(name) is stopping")) }
        if let member = caller.member, let refusal = lifecycle.refusal(of: request, from: member) {
            // Counted by the control server; logged as other refusals are: the first ten, then every hundredth.
            forbiddenRequests += 1
            if forbiddenRequests <= 10 || forbiddenRequests % 100 == 0 {
                logger.warning("refused a \(request.typeName) from \(remoteHost ?? "?") (\(forbiddenRequests) so far): \(refusal.message)")
            }
            return .failure(refusal)
        }
        var generator = SystemRandomNumberGenerator()
        switch request {
        case .describe: return .description(describe())
        case .statistics: return .statistics(statistics())
        case .connect(let body):
            let id = ConnectionID.random(using: &generator)
            let ssrc = UInt32.random(in: 1 ... .max, using: &generator)
            let ports = senderPortsNow
            // An rtp:// stream with the client's SRTP key (the key goes into the receiver's SDP there).
            let rtpKey = body.rtpKey.flatMap { $0.keyBytes }.flatMap { SRTPMasterKey(suite: .aesCM128HMACSHA1Tag80, bytes: $0) }
            if let rtpKey { outgoingMediaKeys[id] = rtpKey }
            let requester: ConnectRequester = caller.member != nil ? .member : .unauthenticated(host: remoteHost)
            let response = await self.request {
                .connect(body, id: id, ssrc: ssrc, ports: ports, request: $0, requester: requester)
            }
            if rtpKey != nil, sending[id] == nil { outgoingMediaKeys[id] = nil }
            guard case .connected(var summary) = response else { return response }
            summary.srtp = sending[summary.id]?.connection.srtpSuite
            return .connected(summary)
        case .offer(let body):
            let ssrc = UInt32.random(in: 1 ... .max, using: &generator)
            let ports = receiverPortsNow
            let key = body.mediaKey.flatMap { keying in
                SRTPSuite(rawValue: keying.suite).flatMap { suite in keying.keyBytes.flatMap { SRTPMasterKey(suite: suite, bytes: $0) } }
            }
            if sessionKeys != nil, key == nil {
                return .failure(ControlFailure(.forbidden, "an offer in a members-only session must carry the stream's SRTP key"))
            }
            let stashed = key != nil && incomingMediaKeys[body.connectionID] == nil
            if stashed { incomingMediaKeys[body.connectionID] = key }
            let response = await self.request { .offer(body, fromHost: remoteHost, ssrc: ssrc, ports: ports, request: $0) }
            if stashed, case .failure = response, receiving[body.connectionID] == nil { incomingMediaKeys[body.connectionID] = nil }
            return response
        case .disconnect(let body): return await self.request { .disconnect(body, request: $0) }
        case .teardown(let body): return await self.request { .teardown(body, request: $0) }
        case .hello(let presence):
            if let remoteHost { step(.hello(presence, from: ControlEndpoint(host: remoteHost, port: presence.controlPort))) }
            return .done
        case .bye(let presence):
            step(.bye(presence))
            return .done
        case .setParameters(let body): return setParameters(body)
        case .upstream(let notice):
            step(.upstream(notice))
            return .done
        case .mute(let body): return mute(body)
        case .rekey(let notice): return stageIncomingKey(notice)
        }
    }
}
