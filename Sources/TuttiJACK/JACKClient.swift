#if canImport(Glibc)
import Glibc
#endif
import CJack
import TuttiCore
import TuttiIO

/// Whether a group of JACK ports takes audio in from other clients or gives audio out to them.
public enum JACKPortDirection: Sendable, Hashable {
    /// `JackPortIsInput`: other clients write into it; Tutti reads (a sender port).
    case input
    /// `JackPortIsOutput`: Tutti writes; other clients read (a receiver port).
    case output
}

/// One JACK client (`jack_client_t`), whose process callback is the device clock of every port group
/// registered on it.
///
/// Lifecycle, all on the control plane (one caller at a time): `init` connects to the server (never
/// starting one), `registerPorts` adds port groups, `activate` starts the process callback, `close`
/// deactivates and closes (idempotent; also on deinit). Port groups cannot be added after `activate`: the
/// callback reads the group table without synchronisation.
///
/// Data plane: the process callback runs on JACK's realtime thread and calls each group's
/// `JACKPeriodHandler` with the group's buffers and the cycle's host times; it allocates nothing, takes no
/// lock and logs nothing. Buffer-size, sample-rate, xrun and shutdown notifications only update atomics
/// in the shared state, which `events` reads; the control plane reports them.
///
/// Timing: the process callback measures when the server started each cycle on `CLOCK_MONOTONIC` and
/// fits a `JACKTimeline` through those starts and JACK's frame counter; handlers get the host times of
/// the frames they process from it (not JACK's own cycle times, nor JACK's clock, which need no mapping).
public final class JACKClient: @unchecked Sendable {
    /// The client's name on the server (exactly as asked: a taken name is an error, not renamed).
    public let name: String
    /// The server's name: the one asked for, else `$JACK_DEFAULT_SERVER`, else "default".
    public let serverName: String
    private let state: UnsafeMutablePointer<JACKClientState>
    private var active = false
    private var closed = false

    /// Connects to a running JACK server as `name`. Never starts a server.
    ///
    /// - Parameter serverName: the server to use; nil lets libjack choose (`$JACK_DEFAULT_SERVER`, else "default").
    /// - Throws: `JACKError` `.serverUnavailable` (with how to start one), `.clientNameTaken`, `.clientOpenFailed`.
    public init(name: String, serverName: String? = nil) throws(JACKError) {
        Self.silenceLibraryMessages()
        self.name = name
        let resolvedServer = serverName ?? getenv("JACK_DEFAULT_SERVER").map { String(cString: $0) } ?? "default"
        self.serverName = resolvedServer
        var status = jack_status_t(rawValue: 0)
        let options = jack_options_t(rawValue: JackNoStartServer.rawValue | JackUseExactName.rawValue)
        let client: OpaquePointer? =
            if let serverName {
                serverName.withCString { tutti_jack_client_open(name, options, &status, $0) }
            } else {
                tutti_jack_client_open(name, options, &status, nil)
            }
        guard let client else {
            throw Self.openError(name: name, serverName: serverName, resolvedServer: resolvedServer, status: status.rawValue)
        }
        let rate = Int(jack_get_sample_rate(client))
        state = .allocate(capacity: 1)
        state.initialize(to: JACKClientState(sampleRate: rate))
        state.pointee.client = client
        state.pointee.sampleRate.store(rate, ordering: .relaxed)
        state.pointee.bufferSize.store(Int(jack_get_buffer_size(client)), ordering: .relaxed)
        installCallbacks(client)
    }

    deinit {
        close()
        state.deinitialize(count: 1)
        state.deallocate()
    }

    /// The server's sample rate (Hz): the only rate this client's ports run at. Any thread.
    public var sampleRate: Int { state.pointee.sampleRate.load(ordering: .relaxed) }

    /// The server's current buffer size (frames per process cycle). Any thread.
    public var bufferSize: Int { state.pointee.bufferSize.load(ordering: .relaxed) }

    /// The error for a failed `jack_client_open`. jackd2 reports a name clash as `JackFailure|JackServerError`
    /// (not `JackNameNotUnique`), so with a server up, a probe client asks whether the name is taken.
    private static func openError(name: String, serverName: String?, resolvedServer: String, status bits: UInt32) -> JACKError {
        let server = resolvedServer == "default" ? "JACK server" : "JACK server '\(resolvedServer)'"
        let named = resolvedServer == "default" ? "" : " -n \(resolvedServer)"
        let unavailable = JACKError(
            .serverUnavailable, status: Int32(bitPattern: bits),
            "no \(server) is running: start one first, e.g. 'jackd\(named) -d alsa' or 'jackd\(named) -d dummy -r 48000 -p 64'")
        if bits & JackServerFailed.rawValue != 0 { return unavailable }
        var taken = bits & JackNameNotUnique.rawValue != 0
        if !taken {
            var probeStatus = jack_status_t(rawValue: 0)
            let options = jack_options_t(rawValue: JackNoStartServer.rawValue)
            let probe: OpaquePointer? =
                if let serverName {
                    serverName.withCString { tutti_jack_client_open("tutti-probe", options, &probeStatus, $0) }
                } else {
                    tutti_jack_client_open("tutti-probe", options, &probeStatus, nil)
                }
            guard let probe else { return unavailable }
            if let uuid = jack_get_uuid_for_client_name(probe, name) {
                taken = true
                jack_free(uuid)
            }
            jack_client_close(probe)
        }
        if taken {
            return JACKError(
                .clientNameTaken, status: Int32(bitPattern: bits),
                "the \(server) already has a client named '\(name)' (another peer with this name?): choose another --name")
        }
        return JACKError(
            .clientOpenFailed, status: Int32(bitPattern: bits),
            "cannot open JACK client '\(name)' (jack_status_t 0x\(String(bits, radix: 16)))")
    }

    /// What happened on JACK's side so far. Any thread (reads atomics).
    public var events: JACKEvents {
        let shutDown = state.pointee.shutDown.load(ordering: .acquiring)
        var events = JACKEvents(
            cycles: state.pointee.cycles.load(ordering: .relaxed), xruns: state.pointee.xruns.load(ordering: .relaxed),
            sampleRate: sampleRate, bufferSize: bufferSize,
            sampleRateChanges: state.pointee.sampleRateChanges.load(ordering: .relaxed),
            bufferSizeChanges: state.pointee.bufferSizeChanges.load(ordering: .relaxed),
            shutdownReason: shutDown ? String(cString: state.pointee.shutdownReason) : nil)
        events.lateCycles = state.pointee.lateCycles.load(ordering: .relaxed)
        events.missedCycles = state.pointee.missedCycles.load(ordering: .relaxed)
        events.serverStalls = state.pointee.serverStalls.load(ordering: .relaxed)
        events.timelineRebases = state.pointee.timelineRebases.load(ordering: .relaxed)
        return events
    }

    /// Whether the process callback is running (activated, not closed, server not shut down). Any thread.
    public var isRunning: Bool { active && !closed && !state.pointee.shutDown.load(ordering: .acquiring) }

    /// Registers ports `prefix_1 … prefix_channels` and the handler that processes them each cycle.
    /// Control plane, before `activate`.
    ///
    /// - Parameter context: passed to `handler` unchanged; must stay valid until `close()` has returned.
    /// - Returns: the ports' full names (`client:prefix_1`, …).
    /// - Throws: `.portRegistrationFailed` (the name is taken on this client, or the server has no room), `.tooManyPorts`.
    @discardableResult
    package func registerPorts(
        prefix: String, channels: Int, direction: JACKPortDirection, handler: JACKPeriodHandler, context: UnsafeMutableRawPointer
    ) throws(JACKError) -> [String] {
        precondition(!active && !closed, "JACK ports are registered before activation")
        precondition(channels > 0)
        guard state.pointee.groupCount < JACKClientState.groupCapacity else {
            throw JACKError(.tooManyPorts, "a JACK client holds at most \(JACKClientState.groupCapacity) ports")
        }
        let client = state.pointee.client
        let ports = UnsafeMutablePointer<OpaquePointer?>.allocate(capacity: channels)
        ports.initialize(repeating: nil, count: channels)
        let flags = UInt(direction == .input ? JackPortIsInput.rawValue : JackPortIsOutput.rawValue)
        for channel in 0..<channels {
            let shortName = "\(prefix)_\(channel + 1)"
            guard let port = jack_port_register(client, shortName, JACK_DEFAULT_AUDIO_TYPE, flags, 0) else {
                for registered in 0..<channel { jack_port_unregister(client, ports[registered]) }
                ports.deallocate()
                throw JACKError(
                    .portRegistrationFailed,
                    "cannot register JACK port '\(name):\(shortName)' (a port of that name exists, or the server has no room for more ports)"
                )
            }
            ports[channel] = port
        }
        let buffers = UnsafeMutablePointer<UnsafeMutablePointer<Float>?>.allocate(capacity: channels)
        buffers.initialize(repeating: nil, count: channels)
        state.pointee.groups[state.pointee.groupCount] = JACKPortGroup(
            ports: ports, buffers: buffers, channels: channels, direction: direction, handler: handler, context: context)
        state.pointee.groupCount += 1
        return (1...channels).map { "\(name):\(prefix)_\($0)" }
    }

    /// Starts the process callback. Control plane.
    /// - Throws: `.activationFailed` with JACK's return code.
    public func activate() throws(JACKError) {
        precondition(!closed)
        guard !active else { return }
        let result = jack_activate(state.pointee.client)
        guard result == 0 else {
            throw JACKError(.activationFailed, status: result, "cannot activate JACK client '\(name)' (error \(result))")
        }
        active = true
    }

    /// Connects `source` to `destination` (full port names). Control plane.
    /// - Returns: whether they are connected now (an existing connection counts).
    public func connect(_ source: String, to destination: String) -> Bool {
        let result = jack_connect(state.pointee.client, source, destination)
        return result == 0 || result == EEXIST
    }

    /// Full names of the server's ports matching `pattern` (a regular expression, as `jack_get_ports`
    /// takes it) and flowing the given way. Control plane.
    public func ports(matching pattern: String, direction: JACKPortDirection) -> [String] {
        let flags = UInt(direction == .input ? JackPortIsInput.rawValue : JackPortIsOutput.rawValue)
        guard let list = jack_get_ports(state.pointee.client, pattern, JACK_DEFAULT_AUDIO_TYPE, flags) else { return [] }
        defer { jack_free(list) }
        var names: [String] = []
        var index = 0
        while let entry = list[index] {
            names.append(String(cString: entry))
            index += 1
        }
        return names
    }

    /// Stops the process callback and leaves the server; after it returns no callback runs, so the
    /// handlers' contexts may be freed. Control plane; idempotent.
    public func close() {
        guard !closed else { return }
        closed = true
        if active { jack_deactivate(state.pointee.client) }
        jack_client_close(state.pointee.client)
        active = false
    }

    private func installCallbacks(_ client: OpaquePointer) {
        let argument = UnsafeMutableRawPointer(state)
        jack_set_process_callback(
            client,
            { frames, argument in
                argument!.assumingMemoryBound(to: JACKClientState.self).pointee.process(frames: frames)
                return 0
            }, argument)
        jack_set_buffer_size_callback(
            client,
            { frames, argument in
                let state = argument!.assumingMemoryBound(to: JACKClientState.self)
                if state.pointee.bufferSize.exchange(Int(frames), ordering: .relaxed) != Int(frames) {
                    state.pointee.bufferSizeChanges.add(1, ordering: .relaxed)
                }
                return 0
            }, argument)
        jack_set_sample_rate_callback(
            client,
            { rate, argument in
                let state = argument!.assumingMemoryBound(to: JACKClientState.self)
                if state.pointee.sampleRate.exchange(Int(rate), ordering: .relaxed) != Int(rate) {
                    state.pointee.sampleRateChanges.add(1, ordering: .relaxed)
                }
                return 0
            }, argument)
        jack_set_xrun_callback(
            client,
            { argument in
                argument!.assumingMemoryBound(to: JACKClientState.self).pointee.xruns.add(1, ordering: .relaxed)
                return 0
            }, argument)
        jack_on_info_shutdown(
            client,
            { _, reason, argument in
                let state = argument!.assumingMemoryBound(to: JACKClientState.self)
                if let reason { strncpy(state.pointee.shutdownReason, reason, JACKClientState.reasonCapacity - 1) }
                state.pointee.shutDown.store(true, ordering: .releasing)
            }, argument)
    }

    /// libjack prints its own diagnostics ("Cannot connect to server socket …") to stderr; Tutti reports
    /// failures itself, in one line, so they are dropped.
    private static func silenceLibraryMessages() {
        jack_set_error_function { _ in }
        jack_set_info_function { _ in }
    }
}
