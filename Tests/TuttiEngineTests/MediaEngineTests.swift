#if canImport(Glibc)
import Glibc
#endif
import TuttiCore
@testable import TuttiEngine
import TuttiIO
import TuttiStream
import TuttiWire
import XCTest

/// One engine per peer: every paced port at one rate runs on one clock, in one wake-up per period, whatever
/// the number of ports and connections; a port holds 256 connections.
final class MediaEngineTests: XCTestCase, EngineTestCase {
    func testThreeSenderPortsAndAReceiverWithEightStreamsRunOnOneClockInOneWakeUpPerPeriod() async throws {
        let engine = MediaEngine(periodFrames: periodFrames, threaded: false)
        let format = format()
        let listeners = try (0..<3).map { _ in try UDPSocket() }
        var senders: [(SenderPort, SendConnection)] = []
        for (index, listener) in listeners.enumerated() {
            let port = tonePort("tone\(index)", engine: engine)
            let connection = try sendConnection(index, to: listener, from: port, format: format)
            try port.add(connection)
            senders.append((port, connection))
        }
        let sinkConfiguration = PortConfiguration.receiver(name: "desk", sink: .null, channels: 2)
        let desk = ReceiverPort(configuration: sinkConfiguration, sink: .null, engine: engine, captureClock: captureClock)
        var streams: [(ReceiveConnection, SenderStream)] = []
        for index in 0..<8 {
            let connection = try receiveConnection(100 + index, ssrc: UInt32(1000 + index), format: format)
            try await desk.add(connection)
            streams.append(
                (
                    connection,
                    SenderStream(
                        Packetizer(
                            format: format, payloadType: 96, ssrc: UInt32(1000 + index), initialSequenceNumber: UInt16(index * 1000),
                            initialTimestamp: UInt32(index * 77_777)))
                ))
        }
        XCTAssertEqual(engine.allClocks.count, 1, "one clock for every port at 48 kHz")
        let clock = try engine.clock(sampleRate: 48_000)

        let periods = 500  // 0.67 s: longer than the level meter's 0.5 s window
        let periodNanoseconds = Int64(periodFrames) * 1_000_000_000 / 48_000
        let tone = UnsafeMutableBufferPointer<Float>.allocate(capacity: periodFrames * 2)
        defer { tone.deallocate() }
        for index in tone.indices { tone[index] = Float(sin(Double(index / 2) * 0.1)) * 0.25 }
        for period in 0..<periods {
            let now = HostTime(nanoseconds: 1_000_000_000 + Int64(period) * periodNanoseconds)
            // The network delivers each stream's packet of this period just before the period.
            for index in streams.indices {
                let receiver = streams[index].0.receiver
                streams[index].1.packetizer.append(UnsafeBufferPointer(tone), frames: periodFrames, captureTime: now.nanoseconds) {
                    datagram in
                    receiver.accept(datagram: datagram, arrival: now)
                }
            }
            clock.runPeriod(at: now)
        }

        XCTAssertEqual(clock.fanOut.pointee.systemCalls, periods, "the three ports' packets leave in one sendmmsg per period")
        for (index, (_, connection)) in senders.enumerated() {
            XCTAssertEqual(connection.packetsSent.load(ordering: .relaxed), UInt64(periods), "sender \(index): one packet per period")
            XCTAssertEqual(drain(listeners[index]), periods, "sender \(index): every packet reached its destination")
        }
        for (index, (connection, _)) in streams.enumerated() {
            let statistics = connection.statistics()
            XCTAssertEqual(statistics.state, ConnectionState.playing, "stream \(index)")
            XCTAssertEqual(statistics.packetsReceived, UInt64(periods), "stream \(index)")
            XCTAssertEqual(statistics.packetsLost, 0, "stream \(index)")
            XCTAssertEqual(statistics.underruns, 0, "stream \(index)")
            XCTAssertNotNil(statistics.peakDBFS, "stream \(index) played audio into the mix")
        }
        for (port, connection) in senders { await port.remove(connection) }
        for (connection, _) in streams { _ = await desk.remove(connection) }
        await desk.shutdown()
    }

    func testPortsAtAnotherRateGetTheirOwnClockAndTheClockThreadRunsOnlyWhilePortsAreAttached() async throws {
        let engine = MediaEngine(periodFrames: periodFrames)
        let listener = try UDPSocket()
        let fast = tonePort("fast", engine: engine)
        let slow = tonePort("slow", engine: engine, sampleRates: [44_100])
        let first = try sendConnection(1, to: listener, from: fast, format: format())
        let second = try sendConnection(2, to: listener, from: slow, format: format(sampleRate: 44_100))
        try fast.add(first)
        try slow.add(second)
        XCTAssertEqual(engine.allClocks.map(\.sampleRate), [44_100, 48_000])
        XCTAssertTrue(engine.allClocks.allSatisfy(\.isRunning))
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: StreamLimits.maxDatagramBytes, alignment: 8)
        defer { buffer.deallocate() }
        XCTAssertNotNil(listener.receive(into: buffer, timeoutMilliseconds: 2000), "the threaded clocks send")
        await fast.remove(first)
        XCTAssertFalse(try engine.clock(sampleRate: 48_000).isRunning, "no port left at 48 kHz: its thread stops")
        XCTAssertTrue(try engine.clock(sampleRate: 44_100).isRunning)
        await slow.remove(second)
        XCTAssertFalse(try engine.clock(sampleRate: 44_100).isRunning)
        await fast.shutdown()
        await slow.shutdown()
    }

    func testAPortHolds256ConnectionsAndRefusesTheNextWithTheLimitInOneLine() async throws {
        let engine = MediaEngine(periodFrames: periodFrames, threaded: false)
        let listener = try UDPSocket()
        let port = tonePort("wide", engine: engine)
        var connections: [SendConnection] = []
        for number in 0..<256 {
            let connection = try sendConnection(number, to: listener, from: port, format: format())
            try port.add(connection)
            connections.append(connection)
        }
        let extra = try sendConnection(999, to: listener, from: port, format: format())
        XCTAssertThrowsError(try port.add(extra)) { error in
            XCTAssertEqual((error as? EngineError)?.message, "wide has 256 connections, the most a port holds")
        }
        try engine.clock(sampleRate: 48_000).runPeriod(at: HostTime(nanoseconds: 1_000_000_000))
        XCTAssertEqual(connections.filter { $0.packetsSent.load(ordering: .relaxed) == 1 }.count, 256, "one period feeds all 256")
        await port.shutdown()
    }

    func testTheClockTakesInEveryPacketOfSixteenConnectionsThroughOneSocketAtTheStartOfAPeriod() async throws {
        let engine = MediaEngine(periodFrames: periodFrames, threaded: false)
        let format = format()
        let desk = ReceiverPort(
            configuration: .receiver(name: "desk", sink: .null, channels: 2), sink: .null, engine: engine, captureClock: captureClock)
        let sender = try UDPSocket()
        var streams: [(ReceiveConnection, SenderStream, UDPAddress)] = []
        for index in 0..<16 {
            let connection = try receiveConnection(200 + index, ssrc: UInt32(500 + index), format: format)
            try await desk.add(connection)
            let address = sender.destination(try UDPAddress(host: "127.0.0.1", port: connection.mediaPort!))
            streams.append(
                (
                    connection,
                    SenderStream(
                        Packetizer(
                            format: format, payloadType: 96, ssrc: UInt32(500 + index), initialSequenceNumber: 0, initialTimestamp: 0)),
                    address
                ))
        }
        let clock = try engine.clock(sampleRate: 48_000)
        let silence = [Float](repeating: 0, count: periodFrames * 2)
        let packets = 20
        for _ in 0..<packets {
            for (_, stream, address) in streams {
                silence.withUnsafeBufferPointer { samples in
                    stream.packetizer.append(samples, frames: periodFrames, captureTime: 0) { datagram in
                        XCTAssertTrue(sender.send(datagram, to: address))
                    }
                }
            }
        }
        // Loopback delivers at once; give the kernel a moment, then one period takes in everything queued.
        try await Task.sleep(for: .milliseconds(50))
        clock.runPeriod(at: HostTime(nanoseconds: 1_000_000_000))
        let network = clock.network.statistics
        XCTAssertEqual(network.datagrams, UInt64(16 * packets), "one period took in every queued datagram")
        XCTAssertEqual(network.kernelTimestamped, UInt64(16 * packets), "each timed by the kernel")
        XCTAssertEqual(network.wakeUps, 1, "in one poll")
        XCTAssertEqual(Set(streams.map { $0.0.mediaPort }), [clock.media.port], "every stream arrives on the clock's one socket")
        XCTAssertEqual(network.receiveCalls, UInt64((16 * packets) / 32 + 1), "full batches of 32 datagrams, then one short one")
        for (index, (connection, _, _)) in streams.enumerated() {
            XCTAssertEqual(connection.statistics().packetsReceived, UInt64(packets), "stream \(index)")
        }
        for (connection, _, _) in streams { _ = await desk.remove(connection) }
        await desk.shutdown()
    }

    func testDatagramsOfNoStreamAreCountedAsStrayAndNeverReachAStream() async throws {
        let engine = MediaEngine(periodFrames: periodFrames, threaded: false)
        let format = format()
        let desk = ReceiverPort(
            configuration: .receiver(name: "desk", sink: .null, channels: 2), sink: .null, engine: engine, captureClock: captureClock)
        let connection = try receiveConnection(300, ssrc: 42, format: format)
        try await desk.add(connection)
        let sender = try UDPSocket()
        let address = sender.destination(try UDPAddress(host: "127.0.0.1", port: connection.mediaPort!))
        var stranger = Packetizer(format: format, payloadType: 96, ssrc: 43, initialSequenceNumber: 0, initialTimestamp: 0)
        let silence = [Float](repeating: 0, count: periodFrames * 2)
        for _ in 0..<5 {
            silence.withUnsafeBufferPointer { samples in
                stranger.append(samples, frames: periodFrames, captureTime: 0) { XCTAssertTrue(sender.send($0, to: address)) }
            }
        }
        let garbage: [UInt8] = [0x01, 0x02, 0x03]
        garbage.withUnsafeBytes { XCTAssertTrue(sender.send($0, to: address)) }
        try await Task.sleep(for: .milliseconds(50))
        let clock = try engine.clock(sampleRate: 48_000)
        clock.runPeriod(at: HostTime(nanoseconds: 1_000_000_000))
        XCTAssertEqual(clock.media.demux.strayDatagrams, 6, "5 packets of an unknown SSRC and 1 that is not RTP")
        XCTAssertEqual(connection.statistics().packetsReceived, 0)
        _ = await desk.remove(connection)
        XCTAssertEqual(connection.mediaPort, nil, "stopped: off the media socket")
        await desk.shutdown()
    }

    func testStreamsFromOneRemoteClockShareOneDriftEstimateOnTheClockTheyPlayOn() async throws {
        let engine = MediaEngine(periodFrames: periodFrames, threaded: false)
        let format = format()
        let desk = ReceiverPort(
            configuration: .receiver(name: "desk", sink: .null, channels: 2), sink: .null, engine: engine, captureClock: captureClock)
        var streams: [(ReceiveConnection, SenderStream)] = []
        for (index, remote) in ["peer-a/system", "peer-a/system", "peer-b/system"].enumerated() {
            let connection = try receiveConnection(400 + index, ssrc: UInt32(700 + index), format: format, remoteClock: remote)
            try await desk.add(connection)
            streams.append(
                (
                    connection,
                    SenderStream(
                        Packetizer(
                            format: format, payloadType: 96, ssrc: UInt32(700 + index), initialSequenceNumber: 0, initialTimestamp: 0))
                ))
        }
        let clock = try engine.clock(sampleRate: 48_000)
        let silence = [Float](repeating: 0, count: periodFrames * 2)
        let periodNanoseconds = Int64(periodFrames) * 1_000_000_000 / 48_000
        for period in 0..<2_250 {  // 3 s: drift compensation starts after the first second of playout
            let now = HostTime(nanoseconds: 1_000_000_000 + Int64(period) * periodNanoseconds)
            for (connection, stream) in streams {
                silence.withUnsafeBufferPointer { samples in
                    stream.packetizer.append(samples, frames: periodFrames, captureTime: now.nanoseconds) { datagram in
                        connection.receiver.accept(datagram: datagram, arrival: now)
                    }
                }
            }
            clock.runPeriod(at: now)
        }
        let groupA = clock.driftGroup(for: "peer-a/system")
        XCTAssertTrue(groupA.hasLeader)
        XCTAssertNotNil(groupA.correction, "peer a's leader published its correction")
        XCTAssertEqual(streams[0..<2].filter { $0.0.receiver.leadsItsDriftGroup }.count, 1, "one of peer a's two streams leads")
        XCTAssertTrue(streams[2].0.receiver.leadsItsDriftGroup, "peer b's stream has a group of its own")
        XCTAssertFalse(clock.driftGroup(for: "peer-b/system") === groupA)
        for (connection, _) in streams { _ = await desk.remove(connection) }
        await desk.shutdown()
    }

    /// Plays one stream (88-frame target: 24 of slack) into a `null` port of a hand-run clock that honours the
    /// delays its ports ask for, with a tone port beside it when `crowded`; packets arrive `networkDelay` frames
    /// after each 64-frame sender period ends. Returns the clock's alignments, the delay the pure policy would
    /// ask for, and the stream's figures.
    private func playAlone(networkDelay: Int64, crowded: Bool, senderPPM: Double = 0) async throws -> (
        alignments: (count: UInt64, frames: UInt64), moves: (count: UInt64, frames: Int), expected: Int,
        statistics: ConnectionStatistics
    ) {
        let engine = MediaEngine(periodFrames: periodFrames, threaded: false)
        let clock = try engine.clock(sampleRate: 48_000)
        clock.allowsPhaseAlignment = true
        let format = StreamFormat(sampleRate: 48_000, channels: 2, sampleFormat: .l24, packetFrames: 64, targetLatencyFrames: 88)
        let listener = try UDPSocket()
        let tone = tonePort("tone", engine: engine)
        let toneConnection = try sendConnection(1, to: listener, from: tone, format: self.format())
        if crowded { try tone.add(toneConnection) }
        let desk = ReceiverPort(
            configuration: .receiver(name: "desk", sink: .null, channels: 2), sink: .null, engine: engine, captureClock: captureClock)
        let connection = try receiveConnection(400, ssrc: 77, format: format)
        try await desk.add(connection)
        var stream = Packetizer(format: format, payloadType: 96, ssrc: 77, initialSequenceNumber: 0, initialTimestamp: 0)
        let samples = [Float](repeating: 0.25, count: 64 * 2)
        let start: Int64 = 48_000
        var arrivals: [(frame: Int64, bytes: [UInt8])] = []
        for packet in 0..<300 {
            samples.withUnsafeBufferPointer { buffer in
                stream.append(buffer, frames: 64, captureTime: 0) { datagram in
                    // The sender's clock runs `senderPPM` fast: its packets come that much closer together.
                    let sent = Double(packet * 64) / (1 + senderPPM * 1e-6)
                    arrivals.append((start + Int64(sent.rounded()) + networkDelay, Array(datagram)))
                }
            }
        }
        // The first read after the first packet arrives comes `64 − networkDelay` frames after it (networkDelay < 64),
        // which the policy counts in whole frames from the times in nanoseconds.
        let firstRead = HostTime(frames: start + 64, sampleRate: 48_000).nanoseconds
        let firstArrival = HostTime(frames: start + networkDelay, sampleRate: 48_000).nanoseconds
        let phase = Int((firstRead - firstArrival) * 48_000 / 1_000_000_000)
        let expected = LatencyPolicy.phaseDelayFrames(targetFrames: 88, packetFrames: 64, readFrames: 64, phaseFrames: phase) + 1
        var frame = start
        var next = 0
        while frame < start + 300 * 64 {
            while next < arrivals.count, arrivals[next].frame <= frame {
                arrivals[next].bytes.withUnsafeBytes {
                    _ = connection.receiver.accept(datagram: $0, arrival: HostTime(frames: arrivals[next].frame, sampleRate: 48_000))
                }
                next += 1
            }
            frame += 64 + Int64(clock.runPeriod(at: HostTime(frames: frame, sampleRate: 48_000)))
        }
        let statistics = connection.statistics()
        _ = await desk.remove(connection)
        await desk.shutdown()
        if crowded { await tone.remove(toneConnection) }
        await tone.shutdown()
        return (clock.phaseAlignments, clock.phaseMoves, expected, statistics)
    }

    func testAReceiverPortAloneOnItsClockDelaysItOnceToPlayItsStreamAtItsTarget() async throws {
        for networkDelay: Int64 in [3, 20, 41, 60] {
            let (alignments, moves, expected, statistics) = try await playAlone(networkDelay: networkDelay, crowded: false)
            XCTAssertEqual(moves.count, 0, "network \(networkDelay): clocks that agree need no move")
            XCTAssertEqual(alignments.count, 1, "network \(networkDelay): once, when the stream anchored")
            XCTAssertEqual(alignments.frames, UInt64(expected), "network \(networkDelay)")
            XCTAssertEqual(
                statistics.deviceAlignmentMilliseconds ?? -1, Double(expected) * 1000 / 48_000, accuracy: 1e-9,
                "network \(networkDelay): the stream's statistics say how long its clock waited")
            XCTAssertEqual(statistics.state, ConnectionState.playing, "network \(networkDelay)")
            XCTAssertEqual(statistics.packetsLost + statistics.packetsLate + statistics.underruns, 0, "network \(networkDelay)")
        }
    }

    func testAReceiverPortAloneOnItsClockFollowsASenderThatDriftsAFrameAtATime() async throws {
        // 1000 ppm fast for 0.4 s: its packets come 19 frames earlier by the end; the clock comes earlier with them.
        let (_, moves, _, statistics) = try await playAlone(networkDelay: 20, crowded: false, senderPPM: 1_000)
        XCTAssertEqual(Double(moves.frames), -19.2, accuracy: 3, "within the follower's band of two frames: \(moves)")
        XCTAssertLessThanOrEqual(Double(moves.count), 19.2 + 4, "a frame at a time, not a dither: \(moves)")
        XCTAssertEqual(statistics.deviceAlignmentMoves, moves.count, "the stream's statistics count them")
        XCTAssertEqual(statistics.packetsLost + statistics.packetsLate + statistics.underruns, 0)
    }

    func testAClockThatAlsoRunsAnotherPortIsNeverDelayed() async throws {
        let (alignments, moves, _, statistics) = try await playAlone(networkDelay: 20, crowded: true, senderPPM: 1_000)
        XCTAssertEqual(moves.count, 0)
        XCTAssertEqual(alignments.count, 0, "a sender on the same clock would send late")
        XCTAssertNil(statistics.deviceAlignmentMilliseconds)
        XCTAssertEqual(statistics.packetsLost + statistics.packetsLate + statistics.underruns, 0)
    }
}
