import Synchronization
import TuttiCore
import TuttiIO
import TuttiStream
import TuttiWire

/// The receiving end of one connection: its UDP socket and network thread, the packet ring to the device
/// thread, and the jitter buffer the device thread plays from.
///
/// Threads: the network thread (`receiveLoop`) decodes and validates datagrams and pushes them into the
/// ring; the device thread (`render`) drains the ring into the jitter buffer and reads one period; the
/// control plane reads the published counters (`statistics`). Nothing on the two data threads allocates,
/// locks or logs after `init`.
final class ReceiveConnection: @unchecked Sendable {
    let summary: ConnectionSummary
    let socket: UDPSocket
    let ssrc: UInt32
    let payloadType: UInt8
    /// The sender's control endpoint, for the teardown notice (nil when it reached us from elsewhere).
    let peerEndpoint: ControlEndpoint?
    private let ring: PacketRing
    private var jitterBuffer: JitterBuffer
    let output: UnsafeMutableBufferPointer<Float>
    private let running = Atomic<Bool>(true)
    private var thread: OSThread?

    // Published by the network thread.
    let datagramsInvalid = Atomic<UInt64>(0)
    // Published by the device thread after each period.
    private let received = Atomic<UInt64>(0)
    private let lost = Atomic<UInt64>(0)
    private let late = Atomic<UInt64>(0)
    private let duplicated = Atomic<UInt64>(0)
    private let reordered = Atomic<UInt64>(0)
    private let invalid = Atomic<UInt64>(0)
    private let underruns = Atomic<UInt64>(0)
    private let concealed = Atomic<UInt64>(0)
    private let bufferedFrames = Atomic<Int>(0)
    private let jitterBits = Atomic<UInt64>(0)
    private let latencyNanoseconds = Atomic<Int64>(.min)
    private let stateCode = Atomic<Int>(0)

    var id: ConnectionID { summary.id }
    var format: StreamFormat { summary.format }

    init(
        summary: ConnectionSummary, ssrc: UInt32, payloadType: UInt8, peerEndpoint: ControlEndpoint?,
        maxPeriodFrames: Int, signalLossTimeout: Duration
    ) throws(PeerError) {
        self.summary = summary
        self.ssrc = ssrc
        self.payloadType = payloadType
        self.peerEndpoint = peerEndpoint
        do { socket = try UDPSocket() } catch { throw PeerError("cannot open a UDP socket: \(error)") }
        let format = summary.format
        jitterBuffer = JitterBuffer(format: format, signalLossTimeout: signalLossTimeout)
        ring = PacketRing(capacity: max(64, 2 * jitterBuffer.capacity), maxPayloadBytes: format.payloadBytes)
        output = .allocate(capacity: maxPeriodFrames * format.channels)
        output.initialize(repeating: 0)
    }

    deinit {
        stop()
        socket.close()
        output.deallocate()
    }

    /// Starts the network thread. Control plane.
    func start() {
        let socket = socket
        let ring = ring
        let ssrc = ssrc
        let payloadType = payloadType
        let expectedPayload = format.payloadBytes
        thread = OSThread(name: "tutti-recv") { [self] in
            let clock = MonotonicClock()
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: StreamLimits.maxDatagramBytes, alignment: 8)
            defer { buffer.deallocate() }
            while running.load(ordering: .relaxed) {
                guard let length = socket.receive(into: buffer, timeoutMilliseconds: 100) else { continue }
                let arrival = clock.now()
                guard length <= buffer.count else {
                    datagramsInvalid.add(1, ordering: .relaxed)
                    continue
                }
                let datagram = UnsafeRawBufferPointer(rebasing: buffer[0..<length])
                guard let packet = try? RTPPacketView.decode(datagram), packet.header.ssrc == ssrc,
                    packet.header.payloadType == payloadType, packet.payloadCount == expectedPayload
                else {
                    datagramsInvalid.add(1, ordering: .relaxed)
                    continue
                }
                let payload = UnsafeRawBufferPointer(
                    rebasing: datagram[packet.payloadOffset..<(packet.payloadOffset + packet.payloadCount)])
                ring.push(
                    PacketRing.Entry(
                        sequenceNumber: packet.header.sequenceNumber, timestamp: packet.header.timestamp,
                        captureTime: packet.header.captureTime, arrival: arrival, payloadCount: payload.count),
                    payload: payload)
            }
        }
    }

    /// Stops the network thread and waits for it. Control plane; idempotent.
    func stop() {
        running.store(false, ordering: .relaxed)
        thread?.join()
        thread = nil
    }

    /// Drains arrived packets into the jitter buffer and plays `frames` frames into `output`.
    /// Device thread only. Realtime-safe: yes.
    func render(frames: Int, now: HostTime, wallClockNow: Int64) {
        while ring.pop({ entry, payload in
            _ = jitterBuffer.insert(
                sequenceNumber: entry.sequenceNumber, timestamp: entry.timestamp, captureTime: entry.captureTime,
                arrival: entry.arrival, payload: payload)
        }) {}
        jitterBuffer.read(into: output, frames: frames, now: now, captureClockNow: wallClockNow)
        publish(jitterBuffer.statistics, state: jitterBuffer.state)
    }

    private func publish(_ statistics: JitterBufferStatistics, state: JitterBufferState) {
        received.store(statistics.received, ordering: .relaxed)
        lost.store(statistics.lost, ordering: .relaxed)
        late.store(statistics.late, ordering: .relaxed)
        duplicated.store(statistics.duplicated, ordering: .relaxed)
        reordered.store(statistics.reordered, ordering: .relaxed)
        invalid.store(statistics.invalid, ordering: .relaxed)
        underruns.store(statistics.underruns, ordering: .relaxed)
        concealed.store(statistics.concealedFrames, ordering: .relaxed)
        bufferedFrames.store(statistics.bufferedFrames, ordering: .relaxed)
        jitterBits.store(statistics.jitterFrames.bitPattern, ordering: .relaxed)
        latencyNanoseconds.store(statistics.latencyNanoseconds ?? .min, ordering: .relaxed)
        let code: Int
        switch state {
        case .idle, .buffering: code = 0
        case .playing: code = 1
        case .lost: code = 2
        }
        stateCode.store(code, ordering: .relaxed)
    }

    /// The connection's state as last published by the device thread. Any thread.
    var state: ConnectionState {
        switch stateCode.load(ordering: .relaxed) {
        case 1: .playing
        case 2: .lost
        default: .buffering
        }
    }

    /// Figures for `tutti stats`. Control plane.
    func statistics() -> ConnectionStatistics {
        let rate = Double(format.sampleRate)
        let latency = latencyNanoseconds.load(ordering: .relaxed)
        return ConnectionStatistics(
            id: id, role: .receiving, source: summary.source, destination: summary.destination, state: state,
            format: format, packetsReceived: received.load(ordering: .relaxed), packetsLost: lost.load(ordering: .relaxed),
            packetsLate: late.load(ordering: .relaxed), packetsDuplicated: duplicated.load(ordering: .relaxed),
            packetsReordered: reordered.load(ordering: .relaxed),
            packetsInvalid: invalid.load(ordering: .relaxed) + datagramsInvalid.load(ordering: .relaxed) + ring.overflows,
            jitterMilliseconds: Double(bitPattern: jitterBits.load(ordering: .relaxed)) * 1000 / rate,
            bufferMilliseconds: Double(bufferedFrames.load(ordering: .relaxed)) * 1000 / rate,
            targetMilliseconds: Double(format.targetLatencyFrames) * 1000 / rate,
            underruns: underruns.load(ordering: .relaxed), concealedFrames: concealed.load(ordering: .relaxed),
            latencyMilliseconds: latency == .min ? nil : Double(latency) / 1e6)
    }
}
