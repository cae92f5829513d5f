import Synchronization
import TuttiCodec
import TuttiCore
import TuttiIO
import TuttiStream
import TuttiWire

/// The receiving end of one connection: its UDP socket and network thread around a `StreamReceiver`
/// (packet ring, jitter buffer, published counters).
///
/// Threads: the network thread receives datagrams into `receiver.accept`; the device thread calls
/// `receiver.render` once per period; the control plane reads `state` and `statistics()`. Nothing on
/// the two data threads allocates, locks or logs after `init`.
package final class ReceiveConnection: @unchecked Sendable {
    package let summary: ConnectionSummary
    package let socket: UDPSocket
    package let receiver: StreamReceiver
    /// The sender's control endpoint, for the teardown notice (nil when it reached us from elsewhere).
    package let peerEndpoint: ControlEndpoint?
    /// The clock the sender stamps capture times with.
    package let captureClock: CaptureClock
    private let running = Atomic<Bool>(true)
    private var thread: OSThread?

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

    /// Starts the network thread. Control plane.
    package func start() {
        let socket = socket
        let receiver = receiver
        thread = OSThread(name: "tutti-recv", realtime: true) { [self] in
            let clock = MonotonicClock()
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: StreamLimits.maxDatagramBytes, alignment: 8)
            defer { buffer.deallocate() }
            while running.load(ordering: .relaxed) {
                guard let length = socket.receive(into: buffer, timeoutMilliseconds: 100) else { continue }
                let arrival = clock.now()
                guard length <= buffer.count else {
                    receiver.countInvalidDatagram()
                    continue
                }
                receiver.accept(datagram: UnsafeRawBufferPointer(rebasing: buffer[0..<length]), arrival: arrival)
            }
        }
    }

    /// Stops the network thread and waits for it. Control plane; idempotent.
    package func stop() {
        running.store(false, ordering: .relaxed)
        thread?.join()
        thread = nil
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
