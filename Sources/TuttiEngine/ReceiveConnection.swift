import TuttiCodec
import TuttiCore
import TuttiIO
import TuttiSRTP
import TuttiStream
import TuttiWire

/// The receiving end of one connection: a `StreamReceiver` (packet ring, jitter buffer, published counters)
/// fed from a media socket it shares with the other streams of its engine clock, by its SSRC.
///
/// Threads: the media input's serving thread (the engine clock at each period's start, or the network
/// thread for `jack` ports) hands the stream's datagrams, with their kernel arrival times, to
/// `receiver.accept`; the device thread calls `receiver.render` once per period; the control plane
/// starts and stops it and reads `state` and `statistics()`. Nothing on the two data threads allocates,
/// locks or logs after `init`.
public final class ReceiveConnection: @unchecked Sendable {
    public let summary: ConnectionSummary
    public let receiver: StreamReceiver
    /// The sender's control endpoint, for the teardown notice (nil when it reached us from elsewhere).
    public let peerEndpoint: ControlEndpoint?
    /// The sender's device clock (`StreamOffer.remoteClockKey`): streams of one share a drift estimate.
    public let remoteClock: String?
    /// The clock the sender stamps capture times with.
    public let captureClock: CaptureClock
    /// The track its audio plays on at a separate-mode port (`summary.track`; 0 at a port that mixes). Read by
    /// the device thread.
    public let trackIndex: Int
    /// The media socket the stream arrives on, while the connection runs.
    private var input: MediaInput?
    /// Verifies and decrypts each packet before the stream sees it (a members-only session's SRTP); nil for
    /// plain RTP.
    public let verifier: SRTPVerifier?

    public var id: ConnectionID { summary.id }
    public var format: StreamFormat { summary.format }

    public init(
        summary: ConnectionSummary, ssrc: UInt32, payloadType: UInt8, peerEndpoint: ControlEndpoint?,
        captureClock: CaptureClock, maxPeriodFrames: Int, signalLossTimeout: Duration, concealment: Concealment,
        outputSampleRate: Int, driftCompensation: Bool, remoteClock: String? = nil, mediaKey: SRTPMasterKey? = nil
    ) throws(EngineError) {
        if let mediaKey {
            do throws(SRTPError) { verifier = try SRTPVerifier(key: mediaKey, ssrc: ssrc, packetFrames: summary.format.packetFrames) } catch
            {
                throw EngineError("cannot decrypt the stream: \(error)")
            }
        } else {
            verifier = nil
        }
        self.remoteClock = remoteClock
        self.summary = summary
        trackIndex = summary.track ?? 0
        self.captureClock = captureClock
        self.peerEndpoint = peerEndpoint
        receiver = StreamReceiver(
            format: summary.format, ssrc: ssrc, payloadType: payloadType, maxPeriodFrames: maxPeriodFrames,
            signalLossTimeout: signalLossTimeout, concealment: concealment,
            codecDelayFrames: Self.codecDelayFrames(of: summary.format), outputSampleRate: outputSampleRate,
            driftCompensation: driftCompensation)
    }

    /// Frames by which decoded audio lags what the sender captured: the Opus encoder's lookahead for the
    /// stream's application, 0 for PCM. Thread-safe: yes (pure).
    public static func codecDelayFrames(of format: StreamFormat) -> Int {
        guard format.sampleFormat == .opus, let settings = format.opus else { return 0 }
        return settings.application.lookaheadFrames
    }

    deinit { stop() }

    /// Starts taking this stream's datagrams from `input` (its SSRC names it there). Control plane.
    ///
    /// - Throws: `EngineError` when the input carries as many streams as it can, or this SSRC already.
    package func start(on input: MediaInput) throws(EngineError) {
        guard self.input == nil else { return }
        try input.demux.insert(receiver, verifier: verifier)
        self.input = input
    }

    /// Stops taking datagrams: when it returns the serving thread never touches this connection again.
    /// Control plane; idempotent.
    public func stop() {
        guard let input else { return }
        input.demux.remove(receiver, servedBy: input.loop)
        self.input = nil
    }

    /// The UDP port the sender sends this stream to (nil until started).
    public var mediaPort: UInt16? { input?.port }

    /// The port's sink failure record while the connection plays into it (set by the port, control plane).
    public var sinkFailure: SinkFailure?

    /// The connection's state: `failed` once the port's output cannot be written, else the stream's state
    /// as last published by the device thread. Control plane.
    public var state: ConnectionState {
        Self.state(stream: receiver.snapshot().state, outputFailed: sinkFailure?.hasFailed == true)
    }

    /// Why the connection failed (nil unless `state` is `failed`). Control plane.
    public var failureReason: String? { sinkFailure?.reason }

    /// The summary for `tutti ls`, with the current state and failure reason. Control plane.
    public var currentSummary: ConnectionSummary {
        var current = summary
        current.state = state
        current.failureReason = failureReason
        return current
    }

    /// What a receiving connection shows: a failed output overrides the stream (its audio goes nowhere,
    /// however well it arrives); otherwise the stream's state. Pure.
    public static func state(stream: JitterBufferState, outputFailed: Bool) -> ConnectionState {
        if outputFailed { return .failed }
        switch stream {
        case .idle, .buffering: return .buffering
        case .playing: return .playing
        case .lost: return .lost
        }
    }

    /// Figures for `tutti stats`. Control plane.
    public func statistics() -> ConnectionStatistics {
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
        if let alignment = receiver.deviceAlignment {
            statistics.deviceAlignmentMilliseconds = Double(alignment.startFrames) * 1000 / Double(receiver.outputSampleRate)
            statistics.deviceAlignmentMoves = alignment.moves
        }
        statistics.driftGroupRole = receiver.driftGroupRole
        statistics.stretchedMilliseconds = Double(figures.stretchedFrames) * 1000 / rate
        statistics.skippedMilliseconds = Double(figures.skippedFrames) * 1000 / rate
        statistics.setLevel(receiver.levelReading())
        if let verifier {
            verifier.reclaim()
            statistics.packetsForged = verifier.forged.load(ordering: .relaxed)
            statistics.packetsReplayed = verifier.replayed.load(ordering: .relaxed)
            statistics.rekeys = verifier.rekeys.load(ordering: .relaxed)
        }
        return statistics
    }

    /// Opens the stream's packets under `key` too from now on, and under it alone from the sender's first
    /// packet under it. Control plane.
    /// - Throws: `EngineError` when the stream is plain RTP or cannot take the key.
    /// - Parameter senderIndex: the sender's SRTP index when it drew the key, where the key starts.
    public func stageMediaKey(_ key: SRTPMasterKey, senderIndex: UInt64? = nil) throws(EngineError) {
        guard let verifier else { throw EngineError("connection \(summary.id) is plain RTP: it has no key to change") }
        do throws(SRTPError) { try verifier.stage(key: key, senderIndex: senderIndex) } catch {
            throw EngineError("connection \(summary.id): \(error)")
        }
    }
}
