#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import TuttiClock
import TuttiCore

/// How a `LinkService` joins the network.
public struct LinkConfiguration: Sendable {
    /// The tempo a newly founded session starts with.
    public var tempo = Tempo(bpm: 120)
    /// Interfaces to run Link on, by name (nil: every running IPv4 interface, loopback included, as Link
    /// does).
    public var interfaces: [String]?
    /// Seed of the NodeID random source (a fresh random one by default).
    public var seed = UInt64.random(in: .min ... .max)

    public init() {}
}

/// A Link peer on the network: Tutti's Link-compatible beat clock. It runs `LinkNode` (the session state
/// machine) and `GhostClockMeasurement`s on a network thread of its own, over the Link sockets of every
/// local IPv4 address, answers other peers' clock pings, and publishes the session to any thread through
/// `snapshot` (lock-free).
///
/// Threads: `start`/`stop` and the `set…` requests from the control plane (any thread; a request is queued
/// and the network thread woken through a pipe); `snapshot` from any thread, audio threads included
/// (realtime-safe). IPv6 (ff12::8080) is not used yet.
public final class LinkService: @unchecked Sendable {
    public let configuration: LinkConfiguration
    private let publisher: LinkSnapshotPublisher
    private var gateways: [LinkGatewaySockets]
    private var node: LinkNode
    private var measurements: [SessionID: (measurement: GhostClockMeasurement, endpoint: LinkEndpoint, gateway: Int)] = [:]
    private let requests = Mutex<[Request]>([])
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let running = Atomic<Bool>(false)
    // Audio-thread mailboxes (latest request wins): written with atomics only, taken by the network thread
    // within `audioRequestLatency`.
    private let audioTempo = Atomic<UInt64>(0)  // µs per beat, 0 = no request
    private let audioTempoAnchor = Atomic<Int64>(0)
    private let audioPlaying = Atomic<Int>(0)  // 0 = no request, 1 = stop, 2 = start
    private let audioPlayingTime = Atomic<Int64>(0)
    private let audioBeatRequest = Atomic<Int64>(.min)  // micro-beats, .min = no request
    private let audioBeatTime = Atomic<Int64>(0)
    /// How long an audio-thread request waits at most before the network thread applies it.
    public static let audioRequestLatency: Duration = .milliseconds(5)
    private var thread: OSThread?
    private let clock = MonotonicClock()
    private let malformed = Atomic<UInt64>(0)
    private let turnedAway = Atomic<UInt64>(0)

    /// Discovery datagrams that could not be decoded, since start. Any thread.
    public var malformedDatagrams: UInt64 { malformed.load(ordering: .relaxed) }
    /// Peer states turned away because the peer table or the table of other sessions was full (a flood of
    /// made-up peers), since start. Any thread.
    public var statesTurnedAway: UInt64 { turnedAway.load(ordering: .relaxed) }

    enum Request {
        case tempo(Tempo)
        case playing(Bool)
        case forceBeats(Beats)
    }

    /// Opens the Link sockets on every configured interface and founds a session (ghost time 0 now).
    ///
    /// - Throws: a `SystemError` when no interface could be used (for example port 20808 unusable).
    public init(configuration: LinkConfiguration = LinkConfiguration()) throws(SystemError) {
        self.configuration = configuration
        var opened: [LinkGatewaySockets] = []
        var firstError: SystemError?
        for interface in LinkGatewaySockets.interfaces(named: configuration.interfaces) {
            do {
                opened.append(try LinkGatewaySockets(interfaceName: interface.name, address: interface.address))
            } catch {
                firstError = firstError ?? error
            }
        }
        guard !opened.isEmpty else {
            throw firstError ?? SystemError("find a running IPv4 interface for Link", errno: ENODEV)
        }
        gateways = opened
        var fds: [Int32] = [0, 0]
        guard system_pipe(&fds) == 0 else { throw .current("create the Link wake pipe") }
        for fd in fds {
            _ = system_fcntl(fd, F_SETFL, system_fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = system_fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        wakeRead = fds[0]
        wakeWrite = fds[1]
        let now = MonotonicClock().now().nanoseconds / 1000
        node = LinkNode(tempo: configuration.tempo, now: now, seed: configuration.seed)
        publisher = LinkSnapshotPublisher(node.snapshot)
    }

    deinit {
        stop()
        system_close(wakeRead)
        system_close(wakeWrite)
    }

    /// The interfaces Link runs on.
    public var interfaceNames: [String] { gateways.map(\.interfaceName) }

    /// The session as last published by the network thread. Any thread; realtime-safe.
    @inline(__always)
    public var snapshot: LinkSnapshot { publisher.read() }

    /// This peer's host time in microseconds (`CLOCK_MONOTONIC`), the clock `snapshot`'s transform maps
    /// from. Any thread; realtime-safe.
    @inline(__always)
    public var hostMicroseconds: Int64 { clock.now().nanoseconds / 1000 }

    /// Joins the network: announces, answers, measures. Control plane; idempotent.
    public func start() {
        guard running.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else { return }
        thread = OSThread(name: "tutti-link") { [self] in run() }
    }

    /// Leaves the network (BYEBYE on every interface) and stops the thread. Control plane; idempotent.
    public func stop() {
        guard running.compareExchange(expected: true, desired: false, ordering: .acquiringAndReleasing).exchanged else { return }
        wake()
        thread?.join()
        thread = nil
    }

    /// Sets the session tempo from now on, the beat kept continuous. Any thread (not realtime-safe).
    public func setTempo(_ tempo: Tempo) { enqueue(.tempo(tempo)) }

    /// Starts or stops the session's transport now. Any thread (not realtime-safe).
    public func setPlaying(_ playing: Bool) { enqueue(.playing(playing)) }

    /// Makes session beat `beats` fall now (moves everybody's phase). Any thread (not realtime-safe).
    public func forceBeats(_ beats: Beats) { enqueue(.forceBeats(beats)) }

    /// Requests a tempo change from a realtime (audio) thread: the beat stays continuous at host time
    /// `anchor` (µs, `hostMicroseconds`). Realtime-safe: yes (two atomic stores; the network thread applies it
    /// within `audioRequestLatency`). The latest request wins.
    @inline(__always)
    public func requestTempoFromAudioThread(_ tempo: Tempo, anchor: Int64) {
        audioTempoAnchor.store(anchor, ordering: .relaxed)
        audioTempo.store(UInt64(max(1, tempo.microsecondsPerBeat)), ordering: .releasing)
    }

    /// Requests start or stop from a realtime (audio) thread, taking effect at host time `at` (µs).
    /// Realtime-safe: yes. The latest request wins.
    @inline(__always)
    public func requestPlayingFromAudioThread(_ playing: Bool, at hostTime: Int64) {
        audioPlayingTime.store(hostTime, ordering: .relaxed)
        audioPlaying.store(playing ? 2 : 1, ordering: .releasing)
    }

    /// Requests that session beat `beats` fall at host time `at` (µs), as Link's `requestBeatAtTime`: while
    /// this peer is alone it moves the beat grid (everybody's phase, as `forceBeats`); while others are in
    /// the session it changes nothing, because the session's phase is shared: wait for
    /// `snapshot.clock.nextBeats(matchingPhaseOf:quantum:atOrAfterHostTime:)` instead. Realtime-safe: yes.
    @inline(__always)
    public func requestBeatFromAudioThread(_ beats: Beats, at hostTime: Int64) {
        audioBeatTime.store(hostTime, ordering: .relaxed)
        audioBeatRequest.store(beats.microBeats, ordering: .releasing)
    }

    private func takeAudioRequests(now: Int64) {
        let requested = audioBeatRequest.exchange(.min, ordering: .acquiring)
        if requested != .min, node.peerCount == 0 {
            perform(node.forceBeats(Beats(microBeats: requested), at: audioBeatTime.load(ordering: .relaxed), now: now))
        }
        let tempo = audioTempo.exchange(0, ordering: .acquiring)
        if tempo != 0 {
            let anchor = audioTempoAnchor.load(ordering: .relaxed)
            perform(node.setTempo(Tempo(microsecondsPerBeat: Int64(tempo)), anchor: anchor, now: now))
        }
        let playing = audioPlaying.exchange(0, ordering: .acquiring)
        if playing != 0 {
            let time = audioPlayingTime.load(ordering: .relaxed)
            perform(node.setPlaying(playing == 2, at: time, now: now))
        }
    }

    private func enqueue(_ request: Request) {
        requests.withLock { $0.append(request) }
        wake()
    }

    private func wake() {
        var byte: UInt8 = 1
        _ = system_write(wakeWrite, &byte, 1)
    }

    // MARK: - Network thread

    private func run() {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 8)
        let reply = UnsafeMutableRawBufferPointer.allocate(byteCount: 512, alignment: 8)
        defer {
            buffer.deallocate()
            reply.deallocate()
        }
        var now = hostMicroseconds
        for (index, gateway) in gateways.enumerated() {
            perform(node.addGateway(index, measurementEndpoint: gateway.measurementEndpoint, now: now))
        }
        publisher.publish(node.snapshot)
        var descriptors = [pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
        for gateway in gateways {
            for fd in [gateway.group, gateway.discovery, gateway.measurement] {
                descriptors.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0))
            }
        }
        while running.load(ordering: .acquiring) {
            now = hostMicroseconds
            var deadlines = [node.nextDeadline].compactMap { $0 }
            deadlines += measurements.values.compactMap(\.measurement.timerDeadline)
            // Wake at least every `audioRequestLatency` to take audio-thread requests.
            let wait = deadlines.min().map { max(0, min(5_000, $0 - now)) } ?? 5_000
            for index in descriptors.indices { descriptors[index].revents = 0 }
            _ = system_poll(&descriptors, nfds_t(descriptors.count), Int32((wait + 999) / 1000))
            now = hostMicroseconds

            if descriptors[0].revents != 0 {
                var drain = [UInt8](repeating: 0, count: 64)
                while system_read(wakeRead, &drain, drain.count) > 0 {}
                for request in requests.withLock({ queue in
                    defer { queue.removeAll() }
                    return queue
                }) {
                    handle(request, now: now)
                }
            }
            for (index, gateway) in gateways.enumerated() {
                let base = 1 + index * 3
                if descriptors[base].revents != 0 { readDiscovery(gateway.group, gateway: index, buffer: buffer) }
                if descriptors[base + 1].revents != 0 { readDiscovery(gateway.discovery, gateway: index, buffer: buffer) }
                if descriptors[base + 2].revents != 0 {
                    readMeasurement(gateway.measurement, gateway: index, buffer: buffer, reply: reply)
                }
            }
            now = hostMicroseconds
            takeAudioRequests(now: now)
            for session in Array(measurements.keys) where (measurements[session]?.measurement.timerDeadline ?? .max) <= now {
                var entry = measurements[session]!
                let actions = entry.measurement.timerFired(now: now)
                measurements[session] = entry
                performMeasurement(actions, session: session)
            }
            if let deadline = node.nextDeadline, deadline <= now { perform(node.tick(now: now)) }
        }
        perform(node.disable(now: hostMicroseconds))
    }

    private func handle(_ request: Request, now: Int64) {
        switch request {
        case .tempo(let tempo): perform(node.setTempo(tempo, anchor: now, now: now))
        case .playing(let playing): perform(node.setPlaying(playing, at: now, now: now))
        case .forceBeats(let beats): perform(node.forceBeats(beats, at: now, now: now))
        }
    }

    private func readDiscovery(_ fd: Int32, gateway: Int, buffer: UnsafeMutableRawBufferPointer) {
        while let (length, address, port) = LinkGatewaySockets.receive(fd, into: buffer) {
            guard let message = try? LinkDiscoveryMessage.decode(UnsafeRawBufferPointer(rebasing: buffer[0..<min(length, buffer.count)]))
            else {
                malformed.add(1, ordering: .relaxed)
                continue
            }
            let source = LinkEndpoint(
                ipv4: UInt8(address >> 24), UInt8(address >> 16 & 0xFF), UInt8(address >> 8 & 0xFF), UInt8(address & 0xFF), port: port)
            perform(node.received(message, from: source, gateway: gateway, now: hostMicroseconds))
            turnedAway.store(node.refused, ordering: .relaxed)
        }
    }

    private func readMeasurement(
        _ fd: Int32, gateway: Int, buffer: UnsafeMutableRawBufferPointer, reply: UnsafeMutableRawBufferPointer
    ) {
        while let (length, address, port) = LinkGatewaySockets.receive(fd, into: buffer) {
            let datagram = UnsafeRawBufferPointer(rebasing: buffer[0..<min(length, buffer.count)])
            guard datagram.count > 8 else { continue }
            if datagram[8] == 1 {
                // A ping: answer at once from this socket to its source, with our session and ghost time.
                let ghost = node.clock.ghostTime(atHostTime: hostMicroseconds)
                if let size = try? LinkMeasurementMessage.writePong(
                    answering: datagram, sessionID: node.sessionID, ghostTime: ghost, into: reply)
                {
                    LinkGatewaySockets.send(UnsafeRawBufferPointer(rebasing: reply[0..<size]), from: fd, to: address, port: port)
                }
                continue
            }
            let now = hostMicroseconds
            guard case .pong(let session, let ghostTime, _)? = try? LinkMeasurementMessage.decode(datagram),
                let message = try? LinkMeasurementMessage.decode(datagram)
            else { continue }
            let source = LinkEndpoint(
                ipv4: UInt8(address >> 24), UInt8(address >> 16 & 0xFF), UInt8(address >> 8 & 0xFF), UInt8(address & 0xFF), port: port)
            guard let target = measurements.first(where: { $0.value.endpoint == source })?.key else { continue }
            var entry = measurements[target]!
            let actions = entry.measurement.receivedPong(
                sessionID: session, ghostTime: ghostTime, previousGhostTime: message.echoedPreviousGhostTime,
                hostTimeEchoed: message.echoedHostTime, now: now)
            measurements[target] = entry
            performMeasurement(actions, session: target)
        }
    }

    private func perform(_ actions: [LinkNode.Action]) {
        var changed = false
        for action in actions {
            switch action {
            case .send(let message, let gateway, let destination):
                guard gateway < gateways.count, let bytes = try? message.encode() else { continue }
                let socket = gateways[gateway]
                bytes.withUnsafeBytes { raw in
                    switch destination {
                    case .group:
                        LinkGatewaySockets.send(
                            raw, from: socket.discovery, to: LinkGatewaySockets.groupAddress, port: LinkGatewaySockets.groupPort)
                    case .unicast(let endpoint):
                        if let address = endpoint.ipv4Address {
                            LinkGatewaySockets.send(raw, from: socket.discovery, to: address, port: endpoint.port)
                        }
                    }
                }
            case .measure(let session, let endpoint, let gateway):
                guard measurements[session] == nil else { continue }
                var measurement = GhostClockMeasurement(targetSession: session)
                let actions = measurement.start(now: hostMicroseconds)
                measurements[session] = (measurement, endpoint, gateway)
                performMeasurement(actions, session: session)
            case .stateChanged:
                changed = true
            }
        }
        if changed { publisher.publish(node.snapshot) }
    }

    private func performMeasurement(_ actions: [GhostClockMeasurement.Action], session: SessionID) {
        guard let entry = measurements[session] else { return }
        for action in actions {
            // `entry` is the measurement after the input that produced these actions.
            switch action {
            case .sendPing(let hostTime, let previousGhostTime):
                guard let address = entry.endpoint.ipv4Address,
                    let bytes = try? LinkMeasurementMessage.ping(hostTime: hostTime, previousGhostTime: previousGhostTime).encode()
                else { continue }
                bytes.withUnsafeBytes {
                    LinkGatewaySockets.send($0, from: gateways[entry.gateway].measurement, to: address, port: entry.endpoint.port)
                }
            case .armTimer:
                break  // read back through `timerDeadline`
            case .finished(let transform):
                // Peers are answered and sessions compared exactly as Link does; the transform this peer keeps
                // comes from Tutti's tighter estimator over the same samples (robust to one-sided jitter).
                let offset = entry.measurement.tightestBoundsOffset()
                measurements[session] = nil
                let result = offset.map { GhostTransform.measured(offset: $0) } ?? transform
                perform(node.measurementFinished(session: session, result: result, now: hostMicroseconds))
            case .failed:
                measurements[session] = nil
                perform(node.measurementFinished(session: session, result: nil, now: hostMicroseconds))
            }
        }
    }
}

extension LinkEndpoint {
    /// The IPv4 address in host byte order, nil for IPv6.
    var ipv4Address: UInt32? {
        guard !isIPv6 else { return nil }
        return addressBytes.reduce(0) { $0 << 8 | UInt32($1) }
    }
}
