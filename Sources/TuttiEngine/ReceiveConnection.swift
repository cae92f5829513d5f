import TuttiCodec
import TuttiCore
import TuttiIO
import TuttiStream
import TuttiWire

/// The receiving end of one connection: its UDP socket, served by the engine's network thread, around a
/// `StreamReceiver` (packet ring, jitter buffer, published counters).
///
/// Threads: the engine's `PacketReceiveLoop` hands the socket's datagrams, with their kernel arrival times,
/// to `receiver.accept`; the device thread calls `receiver.render` once per period; the control plane
/// starts and stops it and reads `state` and `statistics()`. Nothing on the two data threads allocates,
/// locks or logs after `init`.
package final class ReceiveConnection: @unchecked Sendable {
    package let summary: ConnectionSummary
    package let socket: UDPSocket
    package let receiver: StreamReceiver
    /// The sender's control endpoint, for the teardown notice (nil when it reached us from elsewhere).
    package let peerEndpoint: ControlEndpoint?
    /// The clock the sender stamps capture times with.
    package let captureClock: CaptureClock
    /// The socket's registration on the engine's receive loop while the connection runs.
    private var registration: (loop: PacketReceiveLoop, token: PacketReceiveLoop.Registration)?

    package var id: ConnectionID { summary.id }
    package var format: StreamFormat { summary.format }

    package init(
        summary: ConnectionSummary, ssrc: UInt32, payloadType: UInt8, peerEndpoint: ControlEndpoint?,
        captureClock: CaptureClock, maxPeriodFrames: Int, signalLossTimeout: Duration, concealment: Concealment,
        outputSampleRate: Int, driftCompensation: Bool
    ) throws(EngineError) {
        self.summary = summary
        self.captureClock = captureClock
        self.peerEndpoint = peerEndpoint
        do { socket = try UDPSocket() } catch { throw EngineError("cannot open a UDP socket: \(error)") }
        receiver = StreamReceiver(
            format: summary.format, ssrc: ssrc, payloadType: payloadType, maxPeriodFrames: maxPeriodFrames,
            signalLossTimeout: signalLossTimeout, concealment: concealment,
            codecDelayFrames: Self.codecDelayFrames(of: summary.format), outputSampleRate: outputSampleRate,
            driftCompensation: driftCompensation)
    }

    /// Frames by which decoded audio lags what the sender captured: the Opus encoder's lookahead (read from
    /// an encoder with the stream's settings), 0 for PCM. Control plane.
    package static func codecDelayFrames(of format: StreamFormat) -> Int {
        guard format.sampleFormat == .opus, let settings = format.opus,
            let encoder = try? OpusEncoder(settings: settings, channels: format.channels)
        else { return 0 }
        return encoder.lookaheadFrames
    }

    deinit {
        stop()
        socket.close()
    }

    /// Starts taking the socket's datagrams on `loop` (the engine's network thread). Control plane.
    ///
    /// - Throws: `EngineError` when the loop serves as many sockets as it can.
    package func start(on loop: PacketReceiveLoop) throws(EngineError) {
        guard registration == nil else { return }
        do {
            let token = try loop.register(
                socket, handler: Self.datagramHandler, context: Unmanaged.passUnretained(receiver).toOpaque())
            registration = (loop, token)
        } catch {
            throw EngineError("cannot receive on UDP port \(socket.localPort): \(error)")
        }
    }

    /// The loop's handler: `context` is the connection's `StreamReceiver` (unretained; the connection keeps
    /// it alive while registered). Network thread only.
    private static let datagramHandler: DatagramHandler = { context, bytes, length, arrival in
        Unmanaged<StreamReceiver>.fromOpaque(context!)._withUnsafeGuaranteedRef { receiver in
            guard let bytes, length <= StreamLimits.maxDatagramBytes else {
                receiver.countInvalidDatagram()
                return
            }
            receiver.accept(datagram: UnsafeRawBufferPointer(start: bytes, count: length), arrival: HostTime(nanoseconds: arrival))
        }
    }

    /// Stops taking datagrams: when it returns the network thread never touches this connection again.
    /// Control plane; idempotent.
    package func stop() {
        guard let registration else { return }
        registration.loop.unregister(registration.token)
        self.registration = nil
    }

    /// The port's sink failure record while the connection plays into it (set by the port, control plane).
    package var sinkFailure: SinkFailure?

    /// The connection's state: `failed` once the port's output cannot be written, else the stream's state
    /// as last published by the device thread. Control plane.
    package var state: ConnectionState {
        Self.state(stream: receiver.snapshot().state, outputFailed: sinkFailure?.hasFailed == true)
    }

    /// Why the connection failed (nil unless `state` is `failed`). Control plane.
    package var failureReason: String? { sinkFailure?.reason }

    /// The summary for `tutti ls`, with the current state and failure reason. Control plane.
    package var currentSummary: ConnectionSummary {
        var current = summary
        current.state = state
        current.failureReason = failureReason
        return current
    }

    /// What a receiving connection shows: a failed output overrides the stream (its audio goes nowhere,
    /// however well it arrives); otherwise the stream's state. Pure.
    package static func state(stream: JitterBufferState, outputFailed: Bool) -> ConnectionState {
        if outputFailed { return .failed }
        switch stream {
        case .idle, .buffering: return .buffering
        case .playing: return .playing
        case .lost: return .lost
        }
    }

    /// Figures for `tutti stats`. Control plane.
    package func statistics() -> ConnectionStatistics {
        let (figures, _) = receiver.snapshot()
        let rate = Double(format.sampleRate)
        var statistics = ConnectionStatistics(
            id: id, role: .receiving, source: summary.source, destination: summary.destination, state: state,
            format: format, packetsReceived: figures.received, packetsLost: figures.lost, packetsLate: figures.late,
            packetsDuplicated: figures.duplicated, packetsReordered: figures.reordered, packetsInvalid: figures.invalid,
            jitterMilliseconds: figures.jitterFrames * 1000 / rate,
            bufferMilliseconds: Double(figures.bufferedFrames) * 1000 / rate,
            targetMilliseconds: Double(figures.targetFrames > 0 ? figures.targetFrames : format.targetLatencyFrames) * 1000 / rate,
            underruns: figures.underruns, concealedFrames: figures.concealedFrames,
            latencyMilliseconds: figures.latencyNanoseconds.map { Double($0) / 1e6 })
        statistics.latencyChanges = figures.latencyChanges
        statistics.fecRecoveredFrames = figures.fecRecoveredFrames
        statistics.packetsPending = figures.pendingMissing
        statistics.bitrate = format.opus?.bitrate
        if let drift = receiver.driftFigures() {
            statistics.driftPartsPerMillion = drift.partsPerMillion
            statistics.resamplingRatio = drift.ratio
        }
        statistics.failureReason = failureReason
        statistics.stretchedMilliseconds = Double(figures.stretchedFrames) * 1000 / rate
        statistics.skippedMilliseconds = Double(figures.skippedFrames) * 1000 / rate
        statistics.setLevel(receiver.levelReading())
        return statistics
    }
}
