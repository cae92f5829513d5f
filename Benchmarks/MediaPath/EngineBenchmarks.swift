#if canImport(Glibc)
import Glibc
#endif
import Benchmark
import Synchronization
import TuttiCore
import TuttiEngine
import TuttiIO
import TuttiLV2
import TuttiProcess
import TuttiSRTP
import TuttiStream
import TuttiWire

/// The engine's period loop, whole: one `EngineClock.runPeriod` of a peer with a `null` receiver port playing
/// 8 streams and a `tone` sender port feeding one connection. The 8 streams' datagrams of the period are
/// sent to the clock's media socket on loopback before the measurement (the network's work); the measured
/// period takes them in (`epoll_wait`, `recvmmsg`, SSRC demultiplexing, kernel arrival times), renders and
/// mixes the 8 streams into the sink's ring, renders the tone, packetizes it and sends it (`sendmmsg`).
///
/// Iterations run in real time, one period (1.33 ms) apart, as the clock thread would: the datagrams carry
/// the kernel's arrival times, so the streams' timeline must be the host clock's (a warm-up of 5,000
/// periods takes 6.7 s).
///
/// With a `filter`, the 8 streams go into a filter port running that processor instead, which sends its output
/// to the one connection (the filter path: mix, process, packetize, send, in the same period).
///
/// With `tracks`, the receiver port takes the 8 streams as separate tracks (`mode=separate`), each into its own
/// channels of a 16-channel period: the separate-mode path.
///
/// With `srtp`, the streams are a members-only session's: every datagram in is SRTP (AEAD_AES_128_GCM, protected
/// before the measurement, as the senders would) and verified and decrypted in the period, and the tone goes out
/// protected. The period must allocate nothing with it either.
///
/// With `blocks`, the application's own blocks (the embedding API, `AudioBlock`) take the built-ins' places: the
/// sender's source renders a ramp, the receiver's sink sums the mix, a filter port's processing inverts; their
/// realtime contract is the engine's, so the period must allocate nothing with them either.
final class EnginePeriodState {
    /// The embedding API's blocks, allocation-free as `AudioBlock`'s contract asks.
    static let sourceBlock = AudioBlock(name: "ramp") { samples, frames, channels, _ in
        for index in 0..<(frames * channels) { samples[index] = Float(index) / 1_024 }
    }
    static let inverterBlock = AudioBlock(name: "invert") { samples, frames, channels, _ in
        for index in 0..<(frames * channels) { samples[index] = -samples[index] }
    }
    /// The last mix's sum, as a `Float`'s bits (what the sink block read).
    static let heard = Atomic<UInt32>(0)
    static let sinkBlock = AudioBlock(name: "sum") { samples, frames, channels, _ in
        var sum: Float = 0
        for index in 0..<(frames * channels) { sum += samples[index] }
        heard.store(sum.bitPattern, ordering: .relaxed)
    }

    static let streams = 8
    let engine = MediaEngine(periodFrames: stereoL24.packetFrames, threaded: false)
    let clock: EngineClock
    let desk: ReceiverPort
    let filter: FilterPort?
    let connections: [ReceiveConnection]
    let sender: SenderPort
    let sendConnection: SendConnection
    /// Where the tone goes (never read: once its queue is full the kernel refuses the sends, which are counted).
    let blackHole: UDPSocket
    /// Sends the streams' datagrams to the media socket.
    let network: UDPSocket
    /// With `srtp`: each stream's sender end, protecting its datagrams before they are sent (not measured).
    let protectors: [SRTPProtector]
    let mediaAddress: UDPAddress
    let window = DatagramWindow()
    /// One datagram, its SSRC rewritten for each stream.
    let scratch: UnsafeMutableRawBufferPointer
    var slot = 0
    /// Periods run so far, and the first one's time (host clock).
    var period: Int64 = 0
    let start = MonotonicClock().now().nanoseconds + 10_000_000

    init(filter processor: ProcessorSpecification? = nil, blocks: Bool = false, tracks: Bool = false, srtp: Bool = false) async throws {
        let keys = (0..<Self.streams).map { _ in SRTPMasterKey.random(.aeadAES128GCM) }
        protectors = srtp ? try (0..<Self.streams).map { try SRTPProtector(key: keys[$0], ssrc: ssrc &+ UInt32($0)) } : []
        let captureClock = CaptureClockSource(link: nil)
        clock = try engine.clock(sampleRate: stereoL24.sampleRate)
        let sink: AudioSink = blocks ? .block(Self.sinkBlock) : .null
        var deskConfiguration = PortConfiguration.receiver(name: "desk", sink: sink, channels: 2)
        if tracks { deskConfiguration.descriptor = deskConfiguration.descriptor.separate(tracks: Self.streams, latencyMilliseconds: 10) }
        desk = ReceiverPort(configuration: deskConfiguration, sink: sink, engine: engine, captureClock: captureClock)
        let engine = self.engine
        filter = processor.map {
            FilterPort(
                descriptor: PortConfiguration.filter(name: "fx", processor: $0).descriptor, processor: $0,
                block: blocks ? Self.inverterBlock : nil, engine: engine, captureClock: captureClock, outputClock: .realtime)
        }
        var connections: [ReceiveConnection] = []
        for index in 0..<Self.streams {
            let hex = String(index + 1, radix: 16)
            var summary = ConnectionSummary(
                id: ConnectionID(String(repeating: "0", count: 16 - hex.count) + hex)!, role: .receiving,
                source: PortReference(peer: "a", port: "out\(index)"), destination: PortReference(peer: "b", port: "desk"),
                format: stereoL24, state: .buffering)
            if tracks { summary.track = index }
            let connection = try ReceiveConnection(
                summary: summary,
                ssrc: ssrc &+ UInt32(index), payloadType: payloadType, peerEndpoint: nil, captureClock: .realtime,
                maxPeriodFrames: stereoL24.packetFrames, signalLossTimeout: .seconds(1), concealment: .repetition,
                outputSampleRate: stereoL24.sampleRate, driftCompensation: true, mediaKey: srtp ? keys[index] : nil)
            if let filter { try await filter.add(connection) } else { try await desk.add(connection) }
            connections.append(connection)
        }
        self.connections = connections
        let configuration: PortConfiguration =
            blocks ? .application(.sender, name: "tone", block: Self.sourceBlock) : .toneSender(name: "tone")
        guard case .sender(let source) = configuration.role else { fatalError("a sender") }
        sender = SenderPort(configuration: configuration, source: source, engine: engine, captureClock: captureClock)
        blackHole = try UDPSocket()
        let socket = try sender.sendingSocket()
        sendConnection = try SendConnection(
            summary: ConnectionSummary(
                id: ConnectionID("00000000000000ff")!, role: .sending, source: PortReference(peer: "b", port: "tone"),
                destination: PortReference(peer: "c", port: "in"), format: stereoL24, state: .playing),
            destination: socket.destination(try UDPAddress(host: "127.0.0.1", port: blackHole.localPort)), peerEndpoint: nil,
            ssrc: 1, payloadType: payloadType, maxPeriodFrames: stereoL24.packetFrames,
            mediaKey: srtp ? SRTPMasterKey.random(.aeadAES128GCM) : nil)
        if let filter { try await filter.add(sendConnection) } else { try sender.add(sendConnection) }
        network = try UDPSocket()
        mediaAddress = network.destination(try UDPAddress(host: "127.0.0.1", port: clock.media.port))
        scratch = .allocate(byteCount: DatagramWindow.stride, alignment: 16)
    }

    deinit { scratch.deallocate() }

    /// Sends this period's datagram of every stream to the media socket. Not measured.
    func deliver() {
        if slot == 0 { window.refill() }
        let datagram = window.datagram(slot)
        for index in 0..<Self.streams {
            UnsafeMutableRawBufferPointer(rebasing: scratch[0..<datagram.count]).copyMemory(from: datagram)
            scratch.storeBytes(of: (ssrc &+ UInt32(index)).bigEndian, toByteOffset: 8, as: UInt32.self)
            var packet = UnsafeRawBufferPointer(rebasing: scratch[0..<datagram.count])
            if !protectors.isEmpty {
                guard let protected = protectors[index].protect(packet) else { fatalError("SRTP protect failed") }
                packet = protected
            }
            _ = network.send(packet, to: mediaAddress)
        }
    }

    /// Waits for the next period's start (host clock) and returns it. Not measured.
    func nextPeriod() -> HostTime {
        let deadline = start + period * Int64(stereoL24.packetFrames) * 1_000_000_000 / Int64(stereoL24.sampleRate)
        period += 1
        var spec = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &spec, nil) == EINTR {}
        return HostTime(nanoseconds: deadline)
    }
}

func registerEngineBenchmarks(_ configuration: Benchmark.Configuration) {
    // The whole period as the clock thread runs it; with a filter port, the filter path (8 streams in, a limiter,
    // 1 out), which must allocate nothing either.
    // The application's blocks in the same two paths: a source and a sink block; a filter block (its specification
    // only names it). And the filter hop with a hosted LV2 plug-in (swh's amp, from Debian's swh-lv2): its
    // period's time against the limiter's and the plain period's in the same run is a filter hop's CPU cost.
    // The separate-mode receiver: the 8 streams as 8 tracks instead of a mix.
    // And the members-only session's period: the same 8 streams in and 1 out, all SRTP.
    let cases: [(name: String, filter: String?, blocks: Bool, tracks: Bool, srtp: Bool)] = [
        ("Engine-period-8-streams-in-1-out", nil, false, false, false),
        ("Engine-period-filter-8-streams-in-limiter-1-out", "limiter,ceiling=-6", false, false, false),
        ("Engine-period-filter-8-streams-in-lv2-amp-1-out", "lv2:http://plugin.org.uk/swh-plugins/amp", false, false, false),
        ("Engine-period-app-blocks-8-streams-in-1-out", nil, true, false, false),
        ("Engine-period-app-filter-8-streams-in-1-out", "gain", true, false, false),
        ("Engine-period-8-separate-tracks-in-1-out", nil, false, true, false),
        ("Engine-period-8-SRTP-streams-in-1-out", nil, false, false, true),
    ]
    /// A built-in processor's text, or `lv2:URI` for an installed plug-in at its defaults.
    func specification(_ text: String) throws -> ProcessorSpecification {
        guard text.hasPrefix("lv2:") else { return try ProcessorSpecification(parsing: text) }
        return try LV2Catalog.shared.plugin(uri: String(text.dropFirst(4))).specification
    }
    for (name, filter, blocks, tracks, srtp) in cases {
        let engine = Fixture<EnginePeriodState>()
        Benchmark(name, configuration: configuration) { benchmark in
            let state = engine.state!
            let now = state.nextPeriod()
            state.deliver()
            benchmark.startMeasurement()
            state.clock.runPeriod(at: now)
            benchmark.stopMeasurement()
            state.slot = (state.slot + 1) & (windowPackets - 1)
        } setup: {
            engine.state = try await EnginePeriodState(
                filter: try filter.map(specification), blocks: blocks, tracks: tracks, srtp: srtp)
        } teardown: {
            let state = engine.state!
            precondition(state.clock.media.demux.strayDatagrams == 0, "every datagram found its stream")
            for connection in state.connections {
                let statistics = connection.statistics()
                if srtp, statistics.packetsForged != 0 || statistics.packetsReplayed != 0 {
                    fatalError("\(name): SRTP refused genuine packets: \(statistics)")
                }
                guard statistics.state == .playing, statistics.packetsLost == 0, statistics.packetsLate == 0 else {
                    fatalError("\(name): not a clean steady state: \(statistics)")
                }
            }
            precondition(state.sendConnection.statistics().packetsSent > 0, "the period's output was sent")
            if let filter = state.filter {
                for connection in state.connections { await filter.remove(connection) }
                await filter.remove(state.sendConnection)
                await filter.shutdown()
            } else {
                for connection in state.connections { _ = await state.desk.remove(connection) }
                await state.sender.remove(state.sendConnection)
            }
            await state.desk.shutdown()
            await state.sender.shutdown()
            engine.state = nil
        }
    }
}
