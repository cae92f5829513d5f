import TuttiCore
import TuttiEngine
import TuttiJACK

/// JACK: the peer's client, its `jack` ports' registration and `connect=` wiring, and what the server does
/// to them, in the log. Control plane (the actor, and `start` before it).
extension Peer {
    /// Opens the peer's JACK client when it has `jack` ports, and gives those ports the server's rate (their
    /// only one). The server is `$JACK_DEFAULT_SERVER`, else "default"; it is never started.
    static func openJACK(for configuration: inout PeerConfiguration) throws(PeerError) -> JACKClient? {
        guard configuration.ports.contains(where: \.isJACK) else { return nil }
        let client: JACKClient
        do { client = try JACKClient(name: "tutti-\(configuration.name)") } catch { throw PeerError(error.message) }
        let rate = client.sampleRate
        guard StreamLimits.sampleRates.contains(rate) else {
            client.close()
            throw PeerError(
                "the JACK server runs at \(rate) Hz; Tutti streams \(StreamLimits.sampleRates.lowerBound)–\(StreamLimits.sampleRates.upperBound) Hz"
            )
        }
        for index in configuration.ports.indices where configuration.ports[index].isJACK {
            configuration.ports[index].descriptor.sampleRates = [rate]
        }
        return client
    }

    /// Registers the `jack` ports on the JACK client, activates it, and makes the `connect=` connections.
    func startJACK() throws(PeerError) {
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

    /// `connect=CLIENT:PORT_PREFIX`: connects the port's channels (every track's, in track order), in order, to the matching ports of the
    /// other direction. Missing or refused ones are logged, not fatal (the user can still `jack_connect`).
    private func connectJACK(_ port: PortConfiguration, to target: String, client: JACKClient) {
        let isSender = port.descriptor.kind == .sender
        let pattern = "^" + target.map { "\\^$.|?*+()[]{}".contains($0) ? "\\\($0)" : String($0) }.joined()
        let others = client.ports(matching: pattern, direction: isSender ? .output : .input)
        guard !others.isEmpty else {
            logger.warning(
                "JACK port \(port.descriptor.name): no \(isSender ? "output" : "input") ports match '\(target)'; connect them with jack_connect"
            )
            return
        }
        for (channel, other) in zip(1...port.jackOutputChannels, others) {
            let own = "\(client.name):\(port.descriptor.name)_\(channel)"
            let (source, destination) = isSender ? (other, own) : (own, other)
            if client.connect(source, to: destination) {
                logger.info("JACK: connected \(source) → \(destination)")
            } else {
                logger.warning("JACK: cannot connect \(source) → \(destination)")
            }
        }
    }

    /// Logs what changed on the JACK server since the last call: shutdown, sample-rate and buffer-size
    /// changes, xruns and this client's late or missed cycles (at most one line each per call, xruns at most
    /// every 10 s).
    func reportJACKEvents() {
        guard let jack else { return }
        var now = jack.events
        defer { reportedJACK = now }
        if let reason = now.shutdownReason, reportedJACK.shutdownReason == nil {
            let names = configuration.ports.filter(\.isJACK).map(\.descriptor.name).joined(separator: ", ")
            logger.error(
                "the JACK server shut client \(jack.name) down (\(reason.isEmpty ? "no reason given" : reason)): jack ports \(names) are stopped; restart the peer once the server runs again"
            )
        }
        if now.sampleRateChanges != reportedJACK.sampleRateChanges {
            logger.warning(
                "the JACK server's sample rate changed to \(now.sampleRate) Hz; jack ports keep streaming at \(configuration.ports.first(where: \.isJACK)?.descriptor.sampleRates.first ?? 0) Hz (restart the peer to follow)"
            )
        }
        if now.bufferSizeChanges != reportedJACK.bufferSizeChanges {
            logger.info(
                "the JACK server's buffer size is now \(now.bufferSize) frames (processed in chunks of at most \(configuration.periodFrames))"
            )
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
                "JACK reported \(now.xruns - reportedJACK.xruns) xrun(s) (\(now.xruns) since the peer started); client \(jack.name) woke more than a period late in \(now.lateCycles - reportedJACK.lateCycles) cycle(s), missed \(now.missedCycles - reportedJACK.missedCycles), caught up \(now.serverStalls - reportedJACK.serverStalls) server stall(s), restarted its timeline \(now.timelineRebases - reportedJACK.timelineRebases) time(s) (a non-realtime or overloaded server)"
            )
        }
    }

    /// The JACK port's device problem for `tutti stats`, when there is one (the server shut the client down).
    var jackProblem: String? {
        guard let reason = jack?.events.shutdownReason else { return nil }
        return "JACK server shut the client down: \(reason.isEmpty ? "no reason given" : reason)"
    }

}
