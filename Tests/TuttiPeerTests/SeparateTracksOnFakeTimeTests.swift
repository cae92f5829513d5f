import Foundation
import TuttiAnalysis
import TuttiCore
import TuttiEngine
import TuttiWire
import XCTest

@testable import TuttiPeer

/// A receiver that takes its sources as separate tracks (`mode=separate`), on whole peers run period by period on
/// the fake clock: one track per pipeline, no crosstalk, the tracks aligned on the shared clock to the frame (the
/// streams' packets differ in size, so their packets fall on different frames), a pipeline that reconnects lands
/// on its track, and a port whose tracks all play refuses another pipeline in one line.
final class SeparateTracksOnFakeTimeTests: XCTestCase {
    /// Every period a block sink is given: the port's tracks side by side.
    final class Tape: @unchecked Sendable {
        var samples: [Float] = []
        func channel(_ channel: Int, of width: Int, from frame: Int = 0) -> [Float] {
            stride(from: frame * width + channel, to: samples.count, by: width).map { samples[$0] }
        }
    }

    private func separateReceiver(_ name: String, tape: Tape, tracks: Int = 2) -> PortConfiguration {
        var port = PortConfiguration.receiver(
            name: name,
            sink: .block(
                AudioBlock(name: name) { samples, frames, channels, _ in
                    tape.samples += samples[0..<(frames * channels)]
                }))
        port.descriptor = port.descriptor.separate(tracks: tracks, latencyMilliseconds: 10)
        return port
    }

    private func connect(_ from: String, _ to: String, packetFrames: Int, via peer: Peer) async -> ControlResponse {
        let (source, destination) = (from.split(separator: ":").map(String.init), to.split(separator: ":").map(String.init))
        return await peer.handle(
            .connect(
                ConnectRequest(
                    source: PortReference(peer: source[0], port: source[1]),
                    destination: PortReference(peer: destination[0], port: destination[1]),
                    destinationEndpoints: [], options: ConnectOptions(packetFrames: packetFrames))),
            remoteHost: "127.0.0.1")
    }

    private func untilKnown(_ peers: [Peer], count: Int) async throws {
        for peer in peers {
            let deadline = ContinuousClock.now + .seconds(5)
            while await peer.describe().knownPeers.count < count, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))
            }
        }
    }

    /// A host's two senders: `tone`, a sine of `tone` Hz at −6 dBFS, and `click`, a click every 100 ms of the shared clock.
    private func senders(tone frequency: Double) -> [PortConfiguration] {
        [
            .toneSender(name: "tone", frequency: frequency, amplitude: 0.5),
            PortConfiguration(
                descriptor: PortDescriptor(name: "click", title: "click", kind: .sender, channels: 2, sampleRates: [48_000]),
                role: .sender(.click(intervalMilliseconds: 100, amplitude: 0.8))),
        ]
    }

    /// The track of the connection from `source` at `peer` (nil when there is none).
    private func track(from source: String, at peer: Peer) async -> Int? {
        await peer.describe().connections.first { $0.role == .receiving && "\($0.source)" == source }?.track
    }

    func testEachPipelineHasItsOwnTrackWithoutCrosstalkAlignedToTheFrameAndKeepsItAcrossAReconnect() async throws {
        let tones = Tape()
        let clicks = Tape()
        var world = FakeWorld(mediaByHand: true)
        let a = try await world.start("a", host: "127.0.0.1", ports: senders(tone: 440))
        let b = try await world.start("b", host: "127.0.0.2", ports: senders(tone: 880))
        let c = try await world.start(
            "c", host: "127.0.0.3", ports: [separateReceiver("tones", tape: tones), separateReceiver("clicks", tape: clicks)])
        try await untilKnown([a, b, c], count: 2)
        // Packets of 64 frames from a, of 48 from b: their packets start on different frames.
        for (from, to, frames, peer) in [
            ("a:tone", "c:tones", 64, a), ("b:tone", "c:tones", 48, b), ("a:click", "c:clicks", 64, a), ("b:click", "c:clicks", 48, b),
        ] {
            let response = await connect(from, to, packetFrames: frames, via: peer)
            guard case .connected = response else { return XCTFail("\(from) → \(to): \(response)") }
        }
        for peer in [a, b, c] { await peer.settle() }
        let trackOfA = await track(from: "a:tone", at: c)
        let trackOfB = await track(from: "b:tone", at: c)
        XCTAssertEqual(trackOfA, 0, "the first pipeline takes track 1")
        XCTAssertEqual(trackOfB, 1, "the second, track 2")

        // A third pipeline into a port of two busy tracks: refused in one line, nothing connected.
        let third = await connect("a:click", "c:tones", packetFrames: 64, via: a)
        guard case .failure(let refusal) = third else { return XCTFail("a third pipeline into two tracks was accepted: \(third)") }
        XCTAssertTrue(refusal.message.contains("has 2 tracks and each plays a pipeline now"), refusal.message)
        XCTAssertFalse(refusal.message.contains("\n"))
        let receiving = await c.describe().connections.filter { $0.role == .receiving }.count
        XCTAssertEqual(receiving, 4, "nothing half-connected")

        await world.play(for: .seconds(1))

        // Tracks: 2 channels each, track 1 (a) in channels 0–1, track 2 (b) in 2–3. From 0.2 s on every stream plays.
        let settled = 9_600
        let trackA = tones.channel(0, of: 4, from: settled)
        let trackB = tones.channel(2, of: 4, from: settled)
        XCTAssertGreaterThan(trackA.count, 30_000)
        let aOwn = SineLevel.decibels(of: 440, in: trackA[...], sampleRate: 48_000)
        let aOther = SineLevel.decibels(of: 880, in: trackA[...], sampleRate: 48_000)
        let bOwn = SineLevel.decibels(of: 880, in: trackB[...], sampleRate: 48_000)
        let bOther = SineLevel.decibels(of: 440, in: trackB[...], sampleRate: 48_000)
        XCTAssertEqual(aOwn, -6.02, accuracy: 0.1, "track 1 holds a's 440 Hz at its level")
        XCTAssertEqual(bOwn, -6.02, accuracy: 0.1, "track 2 holds b's 880 Hz at its level")
        XCTAssertLessThan(aOther - aOwn, -90, "crosstalk of b into track 1")
        XCTAssertLessThan(bOther - bOwn, -90, "crosstalk of a into track 2")
        print("separate tracks: track 1 440 Hz \(aOwn) dB, 880 Hz \(aOther) dB; track 2 880 Hz \(bOwn) dB, 440 Hz \(bOther) dB")

        // The clicks of both hosts, made at the same instants of the shared clock, play on the same frame.
        let alignment = ClickAlignment(channels: [clicks.channel(0, of: 4), clicks.channel(2, of: 4)], minimumGapFrames: 2_400)
        let other = alignment.channels[1]
        XCTAssertGreaterThanOrEqual(other.clickFrames.count, 8, "a click every 100 ms of the second")
        XCTAssertEqual(other.unmatched, 0)
        XCTAssertGreaterThanOrEqual(other.minimumOffset ?? -99, -1, "aligned within one frame")
        XCTAssertLessThanOrEqual(other.maximumOffset ?? 99, 1, "aligned within one frame")
        print(
            "separate tracks: \(other.clickFrames.count) clicks on track 2, offsets to track 1's \(other.minimumOffset ?? 0)…\(other.maximumOffset ?? 0) frames"
        )
        // Synchronized playout: each click plays 10 ms after the instant it was made at, so clicks made every
        // 100 ms play every 4800 frames, on the same frame of each (within the one frame the capture clock's
        // reading of the wall clock may move it).
        let phases = alignment.channels[0].clickFrames.map { $0 % 4_800 }
        XCTAssertLessThanOrEqual(
            (phases.max() ?? 0) - (phases.min() ?? 99), 1, "a click every 4800 frames: \(alignment.channels[0].clickFrames)")

        // b's pipeline goes and comes back: it lands on track 2 again, and its audio with it.
        let gone = await b.handle(
            .disconnect(
                DisconnectRequest(source: PortReference(peer: "b", port: "tone"), destination: PortReference(peer: "c", port: "tones"))),
            remoteHost: "127.0.0.2")
        XCTAssertEqual(gone, .disconnected(count: 1))
        await world.play(for: .milliseconds(200))
        let again = await connect("b:tone", "c:tones", packetFrames: 48, via: b)
        guard case .connected = again else { return XCTFail("reconnecting b:tone: \(again)") }
        for peer in [b, c] { await peer.settle() }
        let trackAgain = await track(from: "b:tone", at: c)
        XCTAssertEqual(trackAgain, 1, "b's pipeline has track 2 again")
        let before = tones.samples.count / 4
        await world.play(for: .milliseconds(500))
        let after = tones.channel(2, of: 4, from: before + 4_800)
        XCTAssertEqual(SineLevel.decibels(of: 880, in: after[...], sampleRate: 48_000), -6.02, accuracy: 0.1, "b's 880 Hz on track 2")
        XCTAssertLessThan(SineLevel.decibels(of: 880, in: tones.channel(0, of: 4, from: before + 4_800)[...], sampleRate: 48_000), -90)
        await world.stopAll()
    }
}
