import Synchronization
import TuttiCore
import TuttiIO
import TuttiSRTP
import TuttiStream
import TuttiWire

/// The sending end of one connection: its packetizer and destination. The device thread calls `send` (which
/// queues the period's datagrams on the port's `SendFanOut`); the control plane reads the counters.
public final class SendConnection: @unchecked Sendable {
    public let summary: ConnectionSummary
    public let destination: UDPAddress
    /// The receiver's control endpoint, for the teardown notice; nil for a standard RTP receiver, which
    /// has no control channel (it just stops getting packets).
    public let peerEndpoint: ControlEndpoint?
    private var packetizer: Packetizer
    /// Encrypts and authenticates each packet (a members-only session's SRTP); nil for plain RTP.
    private let protector: SRTPProtector?
    private let scratch: UnsafeMutableBufferPointer<Float>
    /// This connection's mute (`tutti mute SOURCE DESTINATION`), with short fades; the port's other
    /// connections are not affected. Set from the control plane.
    public let fader = MuteFader()
    public let packetsSent = Atomic<UInt64>(0)
    public let sendFailures = Atomic<UInt64>(0)
    /// The level of what this connection sends (its channels of the port's audio). Device thread; published
    /// to `level`.
    private var meter: LevelMeter
    private let level = PublishedLevel()

    public var id: ConnectionID { summary.id }
    public var format: StreamFormat { summary.format }

    public init(
        summary: ConnectionSummary, destination: UDPAddress, peerEndpoint: ControlEndpoint?, ssrc: UInt32,
        payloadType: UInt8, maxPeriodFrames: Int, mediaKey: SRTPMasterKey? = nil
    ) throws(EngineError) {
        if let mediaKey {
            do throws(SRTPError) { protector = try SRTPProtector(key: mediaKey, ssrc: ssrc) } catch {
                throw EngineError("cannot encrypt the stream: \(error)")
            }
        } else {
            protector = nil
        }
        self.summary = summary
        self.destination = destination
        self.peerEndpoint = peerEndpoint
        var generator = SystemRandomNumberGenerator()
        packetizer = Packetizer(
            format: summary.format, payloadType: payloadType, ssrc: ssrc,
            initialSequenceNumber: UInt16.random(in: .min ... .max, using: &generator),
            initialTimestamp: UInt32.random(in: .min ... .max, using: &generator))
        scratch = .allocate(capacity: maxPeriodFrames * summary.format.channels)
        scratch.initialize(repeating: 0)
        meter = LevelMeter(windowFrames: LevelMeter.standardWindowFrames(sampleRate: summary.format.sampleRate))
    }

    deinit { scratch.deallocate() }

    /// Packetizes one period of the port's audio (`portChannels` interleaved) and queues what is complete
    /// on the port's `fanOut`, which sends it. Device thread only. Realtime-safe: yes.
    package func send(
        _ portSamples: UnsafeBufferPointer<Float>, portChannels: Int, frames: Int, captureTime: Int64, fanOut: inout SendFanOut
    ) {
        let channels = format.channels
        let samples: UnsafeBufferPointer<Float>
        if channels == portChannels, fader.isTransparent {
            samples = portSamples
        } else {
            for frame in 0..<frames {
                for channel in 0..<channels { scratch[frame * channels + channel] = portSamples[frame * portChannels + channel] }
            }
            fader.apply(scratch, frames: frames, channels: channels, sampleRate: format.sampleRate)
            samples = UnsafeBufferPointer(scratch)
        }
        if let reading = meter.measure(samples, frames: frames, channels: channels) { level.publish(reading) }
        let destination = destination
        if let protector {
            packetizer.append(samples, frames: frames, captureTime: captureTime) { datagram in
                guard let protected = protector.protect(datagram) else { return countSend(succeeded: false) }
                fanOut.add(protected, to: destination, from: self)
            }
        } else {
            packetizer.append(samples, frames: frames, captureTime: captureTime) { datagram in
                fanOut.add(datagram, to: destination, from: self)
            }
        }
    }

    /// Counts one datagram the port's fan-out sent (or the kernel refused). Device thread only.
    @inline(__always)
    public func countSend(succeeded: Bool) {
        if succeeded { packetsSent.add(1, ordering: .relaxed) } else { sendFailures.add(1, ordering: .relaxed) }
    }

    /// The SRTP suite the stream goes out with; nil for plain RTP.
    public var srtpSuite: String? { protector?.suite.rawValue }

    /// The SRTP index of the last packet sent (see `SRTPProtector.sentIndex`); nil for plain RTP. Any thread.
    public var srtpSentIndex: UInt64? { protector?.sentIndex.load(ordering: .relaxed) }

    /// Whether the stream can take a new SRTP key (a members' stream; a standard receiver's key is fixed).
    public var canRekey: Bool { protector?.suite == .aeadAES128GCM }

    /// Sends every packet from the next on under `key`; call only once the receiver holds it. Control plane.
    /// - Throws: `EngineError` when the stream is plain RTP or cannot take the key.
    public func stageMediaKey(_ key: SRTPMasterKey) throws(EngineError) {
        guard let protector else { throw EngineError("connection \(id) is plain RTP: it has no key to change") }
        do throws(SRTPError) { try protector.stage(key: key) } catch { throw EngineError("connection \(id): \(error)") }
    }

    /// Figures for `tutti stats`. Control plane.
    public func statistics() -> ConnectionStatistics {
        var statistics = ConnectionStatistics(
            id: id, role: .sending, source: summary.source, destination: summary.destination, state: .playing,
            format: format, packetsSent: packetsSent.load(ordering: .relaxed),
            targetMilliseconds: Double(format.targetLatencyFrames) * 1000 / Double(format.sampleRate))
        statistics.packetsUnsent = sendFailures.load(ordering: .relaxed)
        statistics.setLevel(level.latest)
        if let protector {
            protector.reclaim()
            statistics.rekeys = protector.rekeys.load(ordering: .relaxed)
        }
        return statistics
    }
}
