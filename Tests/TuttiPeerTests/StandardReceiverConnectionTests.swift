import TuttiCore
import TuttiIO
import TuttiPeer
import TuttiWire
import XCTest

/// A sender port streaming to a plain RTP receiver (`rtp://127.0.0.1:PORT`): here a bare UDP socket on
/// loopback that decodes what arrives. No offer, no answer, no teardown notice.
final class StandardReceiverConnectionTests: XCTestCase {
    private func connect(_ sender: Peer, to destination: RTPDestination, options: ConnectOptions = ConnectOptions()) async throws
        -> ControlResponse
    {
        let request = ConnectRequest(source: PortReference(peer: "a", port: "out"), rtpDestination: destination, options: options)
        return try await TestControl.send(.connect(request), to: sender.endpoint, timeout: .seconds(5))
    }

    private func loopback(_ port: UInt16) -> RTPDestination { RTPDestination(address: .ipv4(0x7F00_0001), port: port) }

    /// Receives for `seconds` and returns the decoded headers and payload sizes.
    private func receive(on socket: UDPSocket, seconds: Double) -> [(header: RTPHeader, payload: Int)] {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 8)
        defer { buffer.deallocate() }
        let clock = ContinuousClock()
        let deadline = clock.now + .milliseconds(Int64(seconds * 1000))
        var packets = [(header: RTPHeader, payload: Int)]()
        while clock.now < deadline {
            guard let length = socket.receive(into: buffer, timeoutMilliseconds: 50), length <= buffer.count else { continue }
            if let view = try? RTPPacketView.decode(UnsafeRawBufferPointer(rebasing: buffer[0..<length])) {
                packets.append((view.header, view.payloadCount))
            }
        }
        return packets
    }

    func testAnL16StreamReachesAPlainSocketAndDisconnects() async throws {
        var lab = LoopbackPeers()
        let sender = try await lab.start("a", ports: [.toneSender(name: "out", sampleRates: [44_100, 48_000])], rtpAllowed: ["127.0.0.1"])
        let socket = try UDPSocket()
        defer { socket.close() }
        let destination = loopback(socket.localPort)

        let response = try await connect(sender, to: destination)
        guard case .connected(let summary) = response else { return XCTFail("expected connected, got \(response)") }
        XCTAssertEqual(
            summary.format, StreamFormat(sampleRate: 48_000, channels: 2, sampleFormat: .l16, packetFrames: 64, targetLatencyFrames: 192))
        XCTAssertEqual(summary.destination.description, "rtp://127.0.0.1:\(socket.localPort)")
        XCTAssertEqual(summary.rtpDestination, destination)
        XCTAssertEqual(summary.payloadType, 96)
        XCTAssertEqual(summary.role, .sending)

        let packets = receive(on: socket, seconds: 0.5)
        XCTAssertGreaterThan(packets.count, 100, "750 packets a second")
        XCTAssertTrue(packets.allSatisfy { $0.header.payloadType == 96 && $0.payload == 64 * 2 * 2 })
        XCTAssertEqual(Set(packets.map(\.header.ssrc)).count, 1)
        for (previous, next) in zip(packets, packets.dropFirst()) {
            XCTAssertEqual(next.header.sequenceNumber, previous.header.sequenceNumber &+ 1)
            XCTAssertEqual(next.header.timestamp, previous.header.timestamp &+ 64)
        }
        XCTAssertNotNil(packets.first?.header.captureTime, "the capture-time extension is still there; receivers skip it")

        guard case .description(let description) = try await TestControl.send(.describe, to: sender.endpoint) else {
            return XCTFail("no description")
        }
        XCTAssertEqual(description.connections, [summary])
        if case .statistics(let list) = try await TestControl.send(.statistics, to: sender.endpoint) {
            XCTAssertGreaterThan(list.first?.packetsSent ?? 0, 100)
        }

        // Disconnect by the URL, as `tutti disconnect a:out rtp://127.0.0.1:PORT` does.
        let disconnected = try await TestControl.send(
            .disconnect(DisconnectRequest(source: PortReference(peer: "a", port: "out"), destination: destination.portReference)),
            to: sender.endpoint)
        XCTAssertEqual(disconnected, .disconnected(count: 1))
        _ = receive(on: socket, seconds: 0.05)  // what was in flight
        XCTAssertTrue(receive(on: socket, seconds: 0.2).isEmpty, "nothing is sent after the disconnect")
        await lab.stopAll()
    }

    func testOpusAndL24AreSentWhenAskedFor() async throws {
        var lab = LoopbackPeers()
        let sender = try await lab.start(
            "a", ports: [.toneSender(name: "out", channels: 4, sampleRates: [48_000])], rtpAllowed: ["127.0.0.1"])
        let opusSocket = try UDPSocket()
        let l24Socket = try UDPSocket()
        defer {
            opusSocket.close()
            l24Socket.close()
        }
        let opus = try await connect(
            sender, to: loopback(opusSocket.localPort),
            options: ConnectOptions(sampleFormat: .opus, opus: OpusSettings(frameDuration: .tenMilliseconds, bitrate: 96_000)))
        guard case .connected(let opusSummary) = opus else { return XCTFail("expected connected, got \(opus)") }
        XCTAssertEqual(opusSummary.format.channels, 2, "Opus carries the port's first two channels")
        XCTAssertEqual(opusSummary.format.packetFrames, 480)
        let l24 = try await connect(sender, to: loopback(l24Socket.localPort), options: ConnectOptions(channels: 1, sampleFormat: .l24))
        guard case .connected(let l24Summary) = l24 else { return XCTFail("expected connected, got \(l24)") }
        XCTAssertEqual(l24Summary.format.channels, 1)

        let opusPackets = receive(on: opusSocket, seconds: 0.3)
        XCTAssertGreaterThan(opusPackets.count, 15, "100 packets a second")
        XCTAssertTrue(
            opusPackets.allSatisfy { $0.header.payloadType == 96 && $0.payload > 0 && $0.payload <= OpusSettings.maximumPacketBytes })
        XCTAssertEqual(
            opusPackets.dropFirst().first.map { $0.header.timestamp &- opusPackets[0].header.timestamp }, 480, "48 kHz RTP clock")
        let l24Packets = receive(on: l24Socket, seconds: 0.1)
        XCTAssertTrue(!l24Packets.isEmpty && l24Packets.allSatisfy { $0.payload == 64 * 3 })
        await lab.stopAll()
    }

    func testRefusalsLeaveNothingConnected() async throws {
        var lab = LoopbackPeers()
        let sender = try await lab.start(
            "a", ports: [.toneSender(name: "out", channels: 4, sampleRates: [48_000]), .receiver(name: "in", sink: .null)],
            rtpAllowed: ["127.0.0.1"])
        let destination = loopback(9)  // nothing is sent: every request here is refused
        let cases: [(ConnectOptions, ControlFailure)] = [
            (
                ConnectOptions(channels: 4, sampleFormat: .opus),
                ControlFailure(.invalidOption, "Opus streams carry 1 or 2 channels, not 4; use --channels 2 or PCM")
            ),
            (
                ConnectOptions(sampleRate: 44_100),
                ControlFailure(.noCommonFormat, "a:out cannot send at 44100 Hz (its rates: 48000 Hz)")
            ),
            (ConnectOptions(channels: 5), ControlFailure(.invalidOption, "cannot stream 5 channels: a:out has 4")),
            (
                ConnectOptions(latencyMilliseconds: 20),
                ControlFailure(
                    .invalidOption,
                    "--latency and --sync set a Tutti receiver's buffer; rtp://127.0.0.1:9 is a standard RTP receiver with its own, so leave them out"
                )
            ),
        ]
        for (options, expected) in cases {
            let response = try await connect(sender, to: destination, options: options)
            XCTAssertEqual(response, .failure(expected))
        }
        let wrongDirection = try await TestControl.send(
            .connect(ConnectRequest(source: PortReference(peer: "a", port: "in"), rtpDestination: destination, options: ConnectOptions())),
            to: sender.endpoint)
        XCTAssertEqual(
            wrongDirection,
            .failure(ControlFailure(.wrongDirection, "a:in is a receiver port and cannot be a source; give a sender port first")))
        guard case .description(let description) = try await TestControl.send(.describe, to: sender.endpoint) else {
            return XCTFail("no description")
        }
        XCTAssertTrue(description.connections.isEmpty)
        await lab.stopAll()
    }

    func testOneRTPDestinationTakesOneStream() async throws {
        var lab = LoopbackPeers()
        let sender = try await lab.start(
            "a", ports: [.toneSender(name: "out", sampleRates: [48_000]), .toneSender(name: "other", sampleRates: [48_000])],
            rtpAllowed: ["127.0.0.1"])
        let socket = try UDPSocket()
        defer { socket.close() }
        guard case .connected(let first) = try await connect(sender, to: loopback(socket.localPort)) else {
            return XCTFail("not connected")
        }
        // The same pair again: nothing changes.
        let again = try await connect(sender, to: loopback(socket.localPort))
        XCTAssertEqual(again, .alreadyConnected(first))
        // Another port to the same receiver: refused, naming the stream it has.
        let request = ConnectRequest(
            source: PortReference(peer: "a", port: "other"), rtpDestination: loopback(socket.localPort), options: ConnectOptions())
        let second = try await TestControl.send(.connect(request), to: sender.endpoint, timeout: .seconds(5))
        XCTAssertEqual(
            second,
            .failure(ControlFailure(.busy, "rtp://127.0.0.1:\(socket.localPort) already receives a:out [\(first.id)]; disconnect it first"))
        )
        await lab.stopAll()
    }

    func testAPeerToPeerConnectionReportsWhereItsPacketsGo() async throws {
        var lab = LoopbackPeers()
        let sender = try await lab.start("a", ports: [.toneSender(name: "out", sampleRates: [48_000])], rtpAllowed: ["127.0.0.1"])
        let receiver = try await lab.start("b", ports: [.receiver(name: "in", sink: .null, sampleRates: [48_000])])
        let request = ConnectRequest(
            source: PortReference(peer: "a", port: "out"), destination: PortReference(peer: "b", port: "in"),
            destinationEndpoints: [receiver.endpoint], options: ConnectOptions())
        let response = try await TestControl.send(.connect(request), to: sender.endpoint, timeout: .seconds(5))
        guard case .connected(let summary) = response else { return XCTFail("expected connected, got \(response)") }
        XCTAssertEqual(summary.rtpDestination?.address, .ipv4(0x7F00_0001))
        XCTAssertNotEqual(summary.rtpDestination?.port ?? 0, 0)
        XCTAssertEqual(summary.payloadType, 96)
        let sdp = try XCTUnwrap(SessionDescription(connection: summary, originHost: "127.0.0.1"))
        XCTAssertTrue(sdp.lines.contains("m=audio \(summary.rtpDestination!.port) RTP/AVP 96"))
        XCTAssertTrue(sdp.lines.contains("a=rtpmap:96 L24/48000/2"))
        await lab.stopAll()
    }
}
