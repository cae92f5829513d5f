import Foundation
import TuttiCore
import TuttiEngine
import TuttiProcess
import TuttiStream
import TuttiWire
import XCTest

@testable import TuttiPeer

/// Whole peers whose media engines run their periods by hand on the fake clock (`FakeWorld(mediaByHand:)`):
/// streams and pipelines play period by period, deterministically, so their counters and latencies are exact.
/// Every peer's period falls at the same instant and datagrams cross loopback within the period that sends
/// them, so this is a network without jitter: a stream plays at the latency its target gives, to the frame,
/// with nothing lost or late, and a pipeline's latency is the sum of its hops' and its filters' latency.
final class MediaOnFakeTimeTests: XCTestCase {
    private static let frameMilliseconds = 1000.0 / 48_000

    /// The capture-to-playout latency (ms) of one hop from a paced source at `target` ms, 64-frame packets and
    /// periods, every period at the same instant, as the latency policy places it: its reads aligned to the
    /// packet grid (`LatencyPolicy.alignedLatency`: the lowest latency at or above the target at which every
    /// read keeps the target's slack, for reads that come as the packet arrives), less the packet a paced
    /// source does not wait for (it stamps a period's audio with the period's start and sends it at once,
    /// where a sound card's period is whole only at its end).
    private static func hopLatency(_ target: Double) -> Double {
        let frames = Int((target * 48).rounded())
        let aligned = LatencyPolicy.alignedLatency(targetFrames: frames, packetFrames: 64, readFrames: 64, phaseFrames: 0)
        return Double(aligned - 64) * frameMilliseconds
    }

    /// Waits (real time, at most 5 s) until every peer knows `count` others.
    private func untilKnown(_ peers: [Peer], count: Int) async throws {
        for peer in peers {
            let deadline = ContinuousClock.now + .seconds(5)
            while await peer.describe().knownPeers.count < count, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))
            }
        }
    }

    private func connect(
        _ from: PortReference, _ to: PortReference, latency: Double, via peer: Peer, file: StaticString = #filePath,
        line: UInt = #line
    ) async -> Bool {
        let response = await peer.handle(
            .connect(
                ConnectRequest(
                    source: from, destination: to, destinationEndpoints: [], options: ConnectOptions(latencyMilliseconds: latency))),
            remoteHost: "127.0.0.1")
        guard case .connected = response else {
            XCTFail("\(from) → \(to): \(response)", file: file, line: line)
            return false
        }
        return true
    }

    private func receiving(at peer: Peer) async -> ConnectionStatistics? {
        await peer.statistics().first { $0.role == .receiving }
    }

    private func sending(at peer: Peer) async -> ConnectionStatistics? {
        await peer.statistics().first { $0.role == .sending }
    }

    func testAStreamPlaysAtTheLatencyItsTargetGivesToTheFrameWithNothingLostOrLate() async throws {
        // One packet plus slack (the floor), 1.5 packets, and a target off the packet grid.
        for target in [1.5, 2.0, 3.1] {
            var world = FakeWorld(mediaByHand: true)
            let a = try await world.start("a", host: "127.0.0.1", ports: [.toneSender(name: "out", amplitude: 0.5)])
            let b = try await world.start("b", host: "127.0.0.2", ports: [.receiver(name: "in", sink: .null)])
            try await untilKnown([a, b], count: 1)
            guard await connect(PortReference(peer: "a", port: "out"), PortReference(peer: "b", port: "in"), latency: target, via: a)
            else { return }
            for peer in [a, b] { await peer.settle() }

            await world.play(for: .seconds(2))

            let sent = await sending(at: a)
            let received = await receiving(at: b)
            XCTAssertEqual(sent?.packetsSent, 1500, "target \(target) ms: a sends one 64-frame packet a period for 2 s")
            // Every packet arrives; the last ones are still in the buffer, within the target.
            XCTAssertLessThanOrEqual((sent?.packetsSent ?? 0) - (received?.packetsReceived ?? 0), 2, "target \(target) ms")
            XCTAssertEqual(received?.state, .playing, "target \(target) ms")
            XCTAssertEqual(received?.packetsLost, 0, "target \(target) ms")
            XCTAssertEqual(received?.packetsLate, 0, "target \(target) ms")
            XCTAssertEqual(received?.underruns, 0, "target \(target) ms")
            XCTAssertEqual(received?.concealedFrames, 0, "target \(target) ms")
            XCTAssertEqual(
                received?.latencyMilliseconds ?? 0, Self.hopLatency(target), accuracy: Self.frameMilliseconds,
                "target \(target) ms: capture to playout, to the frame")
            XCTAssertLessThanOrEqual(received?.latencyMilliseconds ?? 99, target, "target \(target) ms: never later than asked")
            XCTAssertEqual(received?.peakDBFS ?? 0, 20 * log10(0.5), accuracy: 0.1, "target \(target) ms: the tone, whole")
            await world.stopAll()
        }
    }

    func testAPipelinesLatencyIsTheSumOfItsHopsAndItsFiltersOwnLatency() async throws {
        var world = FakeWorld(mediaByHand: true)
        let a = try await world.start("a", host: "127.0.0.1", ports: [.toneSender(name: "out", amplitude: 0.25)])
        let limiter = try ProcessorSpecification(parsing: "limiter")
        let b = try await world.start("b", host: "127.0.0.2", ports: [.filter(name: "fx", processor: limiter)])
        let c = try await world.start("c", host: "127.0.0.3", ports: [.receiver(name: "in", sink: .null)])
        try await untilKnown([a, b, c], count: 2)
        guard await connect(PortReference(peer: "a", port: "out"), PortReference(peer: "b", port: "fx"), latency: 2.0, via: a),
            await connect(PortReference(peer: "b", port: "fx"), PortReference(peer: "c", port: "in"), latency: 3.0, via: b)
        else { return }
        for peer in [a, b, c] { await peer.settle() }

        await world.play(for: .seconds(2))

        let filterLatency = limiter.latencyFrames(sampleRate: 48_000)
        XCTAssertGreaterThan(filterLatency, 0, "the limiter looks ahead")
        let listed = await b.describe().filters?.first?.latencyFrames
        XCTAssertEqual(listed, filterLatency, "b lists the latency its limiter adds")
        let first = await receiving(at: b)
        let last = await receiving(at: c)
        XCTAssertEqual(
            first?.latencyMilliseconds ?? 0, Self.hopLatency(2.0), accuracy: Self.frameMilliseconds, "a → b:fx plays as its target gives")
        XCTAssertEqual(
            last?.latencyMilliseconds ?? 0, Self.hopLatency(2.0) + Double(filterLatency) * Self.frameMilliseconds + Self.hopLatency(3.0),
            accuracy: Self.frameMilliseconds, "c hears a's capture after both hops and the limiter's look-ahead, nothing more")
        for figures in [first, last] {
            XCTAssertEqual(figures?.packetsLost, 0)
            XCTAssertEqual(figures?.packetsLate, 0)
            XCTAssertEqual(figures?.underruns, 0)
        }
        XCTAssertEqual(last?.peakDBFS ?? 0, 20 * log10(0.25), accuracy: 0.1, "a tone under the limiter's threshold passes unchanged")
        await world.stopAll()
    }

    private func peak(at peer: Peer) async -> Double? { await receiving(at: peer)?.peakDBFS }

    func testAMutedConnectionPlaysSilenceWithoutAGapAndAMutedPortSilencesEveryConnection() async throws {
        var world = FakeWorld(mediaByHand: true)
        let a = try await world.start("a", host: "127.0.0.1", ports: [.toneSender(name: "out", amplitude: 0.5)])
        let b = try await world.start("b", host: "127.0.0.2", ports: [.receiver(name: "in", sink: .null)])
        let c = try await world.start("c", host: "127.0.0.3", ports: [.receiver(name: "in", sink: .null)])
        try await untilKnown([a, b, c], count: 2)
        guard await connect(PortReference(peer: "a", port: "out"), PortReference(peer: "b", port: "in"), latency: 3, via: a),
            await connect(PortReference(peer: "a", port: "out"), PortReference(peer: "c", port: "in"), latency: 3, via: a)
        else { return }
        for peer in [a, b, c] { await peer.settle() }
        let tone = 20 * log10(0.5)
        await world.play(for: .seconds(1))
        let before = await peak(at: b)
        XCTAssertEqual(before ?? 0, tone, accuracy: 0.1)

        let muted = await a.handle(
            .mute(MuteRequest(port: "out", destination: PortReference(peer: "b", port: "in"), muted: true)), remoteHost: nil)
        guard case .muted(let state) = muted else { return XCTFail("\(muted)") }
        XCTAssertEqual(state.connections.count, 1, "the one connection a:out → b:in")
        await world.play(for: .seconds(1))
        let (silentB, stillC) = (await peak(at: b), await peak(at: c))
        XCTAssertEqual(silentB, -120, "b hears silence")
        XCTAssertEqual(stillC ?? 0, tone, accuracy: 0.1, "c, another connection of the port, is untouched")
        let mutedConnections = await a.describe().connections.filter { $0.muted == true }.map(\.destination)
        XCTAssertEqual(mutedConnections, [PortReference(peer: "b", port: "in")])

        _ = await a.handle(
            .mute(MuteRequest(port: "out", destination: PortReference(peer: "b", port: "in"), muted: false)), remoteHost: nil)
        await world.play(for: .seconds(1))
        let back = await peak(at: b)
        XCTAssertEqual(back ?? 0, tone, accuracy: 0.1, "back after the unmute")

        _ = await a.handle(.mute(MuteRequest(port: "out", muted: true)), remoteHost: nil)
        await world.play(for: .seconds(1))
        let (portMutedB, portMutedC) = (await peak(at: b), await peak(at: c))
        XCTAssertEqual(portMutedB, -120, "the port muted: b hears silence")
        XCTAssertEqual(portMutedC, -120, "and c")
        let portMuted = await a.describe().routes?.first { $0.port == "out" }?.muted
        XCTAssertEqual(portMuted, true, "ls shows the port muted")
        for peer in [b, c] {
            let figures = await receiving(at: peer)
            XCTAssertEqual(figures?.packetsLost, 0, "muted is silence, not a gap: the stream runs on")
            XCTAssertEqual(figures?.underruns, 0)
        }

        let unknown = await a.handle(.mute(MuteRequest(port: "nope", muted: true)), remoteHost: nil)
        guard case .failure(let failure) = unknown else { return XCTFail("\(unknown)") }
        XCTAssertEqual(failure.code, .unknownPort)
        let unconnected = await a.handle(
            .mute(MuteRequest(port: "out", destination: PortReference(peer: "d", port: "in"), muted: true)), remoteHost: nil)
        XCTAssertEqual(unconnected, .failure(ControlFailure(.notFound, "a:out is not connected to d:in")))
        await world.stopAll()
    }

    // MARK: - The embedding API

    /// What an application's block saw or made, period by period (the test's own record: a real block would
    /// not allocate; here the engine runs on the test's thread).
    final class BlockRecord: @unchecked Sendable {
        var periods: [(captureTime: Int64, samples: [Float])] = []
        /// A source's noise generator state.
        var seed: UInt32 = 12_345
    }

    func testAnApplicationsSourceFilterAndSinkBlocksMakeAPipelineThatInvertsPolaritySampleBySample() async throws {
        let made = BlockRecord()
        let heard = BlockRecord()
        // The source: noise in ±0.5, from a fixed seed, each sample its own.
        let source = AudioBlock(name: "noise") { samples, frames, channels, captureTime in
            for index in 0..<(frames * channels) {
                made.seed = made.seed &* 1_103_515_245 &+ 12_345
                samples[index] = Float(made.seed >> 8) / Float(1 << 24) - 0.5
            }
            made.periods.append((captureTime, Array(samples[0..<(frames * channels)])))
        }
        let inverter = AudioBlock(name: "invert") { samples, frames, channels, _ in
            for index in 0..<(frames * channels) { samples[index] = -samples[index] }
        }
        let sink = AudioBlock(name: "tape") { samples, frames, channels, captureTime in
            guard captureTime != .min else { return }
            heard.periods.append((captureTime, Array(samples[0..<(frames * channels)])))
        }
        var world = FakeWorld(mediaByHand: true)
        let a = try await world.start("a", host: "127.0.0.1", ports: [.application(.sender, name: "out", block: source)])
        let b = try await world.start("b", host: "127.0.0.2", ports: [.application(.filter, name: "fx", block: inverter)])
        let c = try await world.start("c", host: "127.0.0.3", ports: [.application(.receiver, name: "in", block: sink)])
        try await untilKnown([a, b, c], count: 2)
        guard await connect(PortReference(peer: "a", port: "out"), PortReference(peer: "b", port: "fx"), latency: 2, via: a),
            await connect(PortReference(peer: "b", port: "fx"), PortReference(peer: "c", port: "in"), latency: 3, via: b)
        else { return }
        let processor = await b.describe().filters?.first?.processor
        XCTAssertEqual(processor, "app:invert", "ls names the application's filter")
        for peer in [a, b, c] { await peer.settle() }

        await world.play(for: .seconds(1))
        await world.stopAll()

        // Each period c's block heard, at its capture time, is what a's block made at that time, inverted: the
        // same frames, to the 24-bit wire's last bit (quantized once, on the first hop; the inversion is exact).
        // Before a's audio reaches it, b's filter sends silence stamped with its own period's time: c's first
        // periods (no more than the pipeline's two hops take to fill) are that silence; then the fade-in.
        let first = try XCTUnwrap(made.periods.first)
        let sent = made.periods.flatMap(\.samples)
        let filling = heard.periods.prefix { $0.samples.allSatisfy { $0 == 0 } }.count
        XCTAssertLessThanOrEqual(filling, 4, "silence only while the hops fill")
        // The first period of a's audio fades in (the stream's click-free start): each sample a's, inverted, at a
        // gain rising to 1 within the period.
        let (fadeTime, fadeSamples) = try XCTUnwrap(heard.periods.dropFirst(filling).first)
        let fadeStart = Int((Double(fadeTime - first.captureTime) * 48_000 / 1e9).rounded()) * 2
        let gains = fadeSamples.indices.map { -fadeSamples[$0] / sent[fadeStart + $0] }
        XCTAssertEqual(gains.first ?? 1, 0, accuracy: 0.1, "the fade starts near silence")
        XCTAssertEqual(gains.last ?? 0, 1, accuracy: 1e-5, "and ends whole")
        XCTAssertTrue(zip(gains, gains.dropFirst()).allSatisfy { $1 >= $0 - 1e-4 }, "rising")
        var compared = 0
        var worst: Float = 0
        for (captureTime, samples) in heard.periods.dropFirst(filling + 1) {
            let frame = Int((Double(captureTime - first.captureTime) * 48_000 / 1e9).rounded())
            XCTAssertGreaterThanOrEqual(frame, 0, "c hears nothing from before a's first period")
            guard frame >= 0, (frame * 2 + samples.count) <= sent.count else { continue }
            for (index, sample) in samples.enumerated() {
                worst = max(worst, abs(sample + sent[frame * 2 + index]))
            }
            compared += samples.count / 2
        }
        XCTAssertLessThanOrEqual(worst, 1.0 / Float(1 << 23), "every sample inverted, to the last bit of L24")
        XCTAssertGreaterThan(compared, 24_000, "at least half a second compared, frame by frame (got \(compared) frames)")
    }
}
