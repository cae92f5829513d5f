import TuttiCore
import TuttiPeer
import TuttiWire
import XCTest

/// Connect, refuse and disconnect through real peers talking over their control channels on loopback.
final class ConnectionNegotiationTests: XCTestCase {
    private func connect(
        _ source: String, _ destination: String, via sender: Peer, receiver: Peer, options: ConnectOptions = ConnectOptions()
    ) async throws -> ControlResponse {
        let request = ConnectRequest(
            source: PortReference(parsing: source)!, destination: PortReference(parsing: destination)!,
            destinationEndpoints: [receiver.endpoint], options: options)
        return try await TestControl.send(.connect(request), to: sender.endpoint, timeout: .seconds(5))
    }

    private func connections(of peer: Peer) async throws -> [ConnectionSummary] {
        guard case .description(let description) = try await TestControl.send(.describe, to: peer.endpoint) else {
            XCTFail("describe did not answer a description")
            return []
        }
        return description.connections
    }

    func testConnectAgreesOnAFormatAndStreams() async throws {
        var lab = LoopbackPeers()
        let sender = try await lab.start("a", ports: [.toneSender(name: "out", sampleRates: [44_100, 48_000])])
        let receiver = try await lab.start("b", ports: [.receiver(name: "in", sink: .null, channels: 1, sampleRates: [48_000])])

        let response = try await connect("a:out", "b:in", via: sender, receiver: receiver, options: ConnectOptions(latencyMilliseconds: 20))
        guard case .connected(let summary) = response else { return XCTFail("expected connected, got \(response)") }
        XCTAssertEqual(
            summary.format, StreamFormat(sampleRate: 48_000, channels: 1, sampleFormat: .l24, packetFrames: 64, targetLatencyFrames: 960))

        // Media flows: the receiver counts packets within a second.
        var received: UInt64 = 0
        for _ in 0..<40 where received < 50 {
            try await Task.sleep(for: .milliseconds(50))
            if case .statistics(let list) = try await TestControl.send(.statistics, to: receiver.endpoint) {
                received = list.first?.packetsReceived ?? 0
            }
        }
        XCTAssertGreaterThanOrEqual(received, 50)

        let disconnected = try await TestControl.send(
            .disconnect(DisconnectRequest(source: PortReference(peer: "a", port: "out"))), to: sender.endpoint)
        XCTAssertEqual(disconnected, .disconnected(count: 1))
        let remainingOnSender = try await connections(of: sender)
        let remainingOnReceiver = try await connections(of: receiver)
        XCTAssertTrue(remainingOnSender.isEmpty)
        XCTAssertTrue(remainingOnReceiver.isEmpty, "the teardown reaches the receiver")
        await lab.stopAll()
    }

    func testAnOpusStreamConnectsAndPlays() async throws {
        var lab = LoopbackPeers()
        let sender = try await lab.start("a", ports: [.toneSender(name: "out", sampleRates: [48_000])])
        let receiver = try await lab.start("b", ports: [.receiver(name: "in", sink: .null, sampleRates: [48_000])])
        let settings = OpusSettings(frameDuration: .twoAndAHalfMilliseconds, bitrate: 96_000)
        let response = try await connect(
            "a:out", "b:in", via: sender, receiver: receiver,
            options: ConnectOptions(sampleFormat: .opus, latencyMilliseconds: 20, opus: settings))
        guard case .connected(let summary) = response else { return XCTFail("expected connected, got \(response)") }
        XCTAssertEqual(summary.format.sampleFormat, .opus)
        XCTAssertEqual(summary.format.packetFrames, 120)
        XCTAssertEqual(summary.format.opus, settings)
        XCTAssertEqual(summary.format.description, "OPUS/96k/48000/2ch, 120 frames/packet, target latency 20.00ms")

        var statistics: ConnectionStatistics?
        for _ in 0..<40 where (statistics?.packetsReceived ?? 0) < 200 {
            try await Task.sleep(for: .milliseconds(50))
            if case .statistics(let list) = try await TestControl.send(.statistics, to: receiver.endpoint) { statistics = list.first }
        }
        let received = try XCTUnwrap(statistics)
        XCTAssertGreaterThanOrEqual(received.packetsReceived, 200)
        XCTAssertEqual(received.packetsInvalid, 0, "every Opus packet decodes")
        XCTAssertEqual(received.packetsLost, 0)
        XCTAssertEqual(received.bitrate, 96_000)
        let latency = try XCTUnwrap(received.latencyMilliseconds)
        // The target (20 ms), the codec's lookahead (2.5 ms) and the drift resampler's delay (0.4 ms), within
        // a period or two.
        XCTAssertEqual(latency, 22.9, accuracy: 2, "capture-to-playout latency counts the codec's and the resampler's delay")
        await lab.stopAll()
    }

    func testOpusRefusals() async throws {
        var lab = LoopbackPeers()
        let sender = try await lab.start("a", ports: [.toneSender(name: "out", channels: 4, sampleRates: [44_100, 48_000])])
        let receiver = try await lab.start("b", ports: [.receiver(name: "in", sink: .null, channels: 4, sampleRates: [44_100, 48_000])])
        let atCDRate = try await connect(
            "a:out", "b:in", via: sender, receiver: receiver, options: ConnectOptions(sampleRate: 44_100, channels: 2, sampleFormat: .opus))
        XCTAssertEqual(
            atCDRate,
            .failure(ControlFailure(.noCommonFormat, "Opus streams run at 48000 Hz, and a:out sends at 44100 Hz; use --rate 48000 or PCM")))
        let fourChannels = try await connect("a:out", "b:in", via: sender, receiver: receiver, options: ConnectOptions(sampleFormat: .opus))
        XCTAssertEqual(
            fourChannels, .failure(ControlFailure(.invalidOption, "Opus streams carry 1 or 2 channels, not 4; use --channels 2 or PCM")))
        let remaining = try await connections(of: receiver)
        XCTAssertTrue(remaining.isEmpty)
        await lab.stopAll()
    }

    func testAStreamAtAnotherRateIsConvertedByTheReceiver() async throws {
        var lab = LoopbackPeers()
        let sender = try await lab.start("a", ports: [.toneSender(name: "out", sampleRates: [44_100])])
        let receiver = try await lab.start("b", ports: [.receiver(name: "in", sink: .null, sampleRates: [48_000])])
        let response = try await connect("a:out", "b:in", via: sender, receiver: receiver, options: ConnectOptions(latencyMilliseconds: 10))
        guard case .connected(let summary) = response else { return XCTFail("expected connected, got \(response)") }
        XCTAssertEqual(summary.format.sampleRate, 44_100)
        var statistics: ConnectionStatistics?
        for _ in 0..<40 where (statistics?.packetsReceived ?? 0) < 100 {
            try await Task.sleep(for: .milliseconds(50))
            if case .statistics(let list) = try await TestControl.send(.statistics, to: receiver.endpoint) { statistics = list.first }
        }
        let received = try XCTUnwrap(statistics)
        XCTAssertGreaterThanOrEqual(received.packetsReceived, 100)
        let ratio = try XCTUnwrap(received.resamplingRatio)
        XCTAssertEqual(ratio, 44_100.0 / 48_000, accuracy: 0.001, "44.1 kHz stream frames per 48 kHz output frame")
        XCTAssertNotNil(received.driftPartsPerMillion)
        await lab.stopAll()
    }

    func testRefusalsLeaveNothingHalfConnected() async throws {
        var lab = LoopbackPeers()
        let sender = try await lab.start(
            "a", ports: [.toneSender(name: "out", sampleRates: [44_100]), .receiver(name: "ret", sink: .null)])
        let receiver = try await lab.start(
            "b", ports: [.receiver(name: "in", sink: .null, sampleRates: [48_000]), .toneSender(name: "gen")])

        let cases: [(String, String, ConnectOptions, ControlFailure)] = [
            (
                "a:out", "b:in", ConnectOptions(channels: 3),
                ControlFailure(.invalidOption, "cannot stream 3 channels: a:out has 2, b:in has 2")
            ),
            (
                "a:out", "b:nope", ConnectOptions(),
                ControlFailure(.unknownPort, "peer b has no port 'nope' (ports: in, gen)")
            ),
            (
                "a:ret", "b:in", ConnectOptions(),
                ControlFailure(.wrongDirection, "a:ret is a receiver port and cannot be a source; give a sender port first")
            ),
            (
                "a:out", "b:gen", ConnectOptions(),
                ControlFailure(.wrongDirection, "b:gen is a sender port and cannot receive audio; choose a receiver port")
            ),
            (
                "a:out", "b:in", ConnectOptions(sampleRate: 48_000),
                ControlFailure(.noCommonFormat, "a:out cannot send at 48000 Hz (its rates: 44100 Hz)")
            ),
        ]
        for (source, destination, options, expected) in cases {
            let response = try await connect(source, destination, via: sender, receiver: receiver, options: options)
            XCTAssertEqual(response, .failure(expected), "\(source) → \(destination)")
        }
        let onSender = try await connections(of: sender)
        let onReceiver = try await connections(of: receiver)
        XCTAssertTrue(onSender.isEmpty)
        XCTAssertTrue(onReceiver.isEmpty)
        await lab.stopAll()
    }

    func testUnreachableReceiverIsReportedInOneLine() async throws {
        var lab = LoopbackPeers()
        let sender = try await lab.start("a", ports: [.toneSender(name: "out")])
        let request = ConnectRequest(
            source: PortReference(peer: "a", port: "out"), destination: PortReference(peer: "gone", port: "in"),
            destinationEndpoints: [ControlEndpoint(host: "127.0.0.1", port: 9)], options: ConnectOptions())
        let response = try await TestControl.send(.connect(request), to: sender.endpoint, timeout: .seconds(8))
        guard case .failure(let failure) = response else { return XCTFail("expected a failure, got \(response)") }
        XCTAssertEqual(failure.code, .unreachable)
        XCTAssertTrue(failure.message.hasPrefix("cannot reach gone: "), failure.message)
        XCTAssertFalse(failure.message.contains("\n"))
        await lab.stopAll()
    }
}
