#if canImport(Glibc)
import Glibc
#endif
import Foundation
import TuttiEngine
import TuttiIO
import TuttiPeer
import TuttiWire
import XCTest

/// A WAV receiver records takes: a file per stretch of connected time, nothing written between them, each
/// with its timing sidecar; a write error fails the connection with its reason.
final class ReceiverTakeTests: XCTestCase {
    private func temporaryDirectory(_ name: String) throws -> String {
        let path = "/tmp/tutti-take-tests-\(getpid())-\(name)-\(UInt32.random(in: 0 ... .max))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    private func connect(_ sender: Peer, to receiver: Peer, port: String, sampleRate: Int? = nil) async throws -> ConnectionID {
        let request = ConnectRequest(
            source: PortReference(peer: "tx", port: "out"), destination: PortReference(peer: "rx", port: port),
            destinationEndpoints: [receiver.endpoint], options: ConnectOptions(sampleRate: sampleRate))
        let answer = try await TestControl.send(.connect(request), to: sender.endpoint, timeout: .seconds(5))
        guard case .connected(let summary) = answer else { throw PeerError("expected connected, got \(answer)") }
        return summary.id
    }

    /// Disconnects on the sender, and waits until the receiver has let the connection go.
    private func disconnect(_ sender: Peer, from receiver: Peer) async throws {
        let answer = try await TestControl.send(
            .disconnect(DisconnectRequest(source: PortReference(peer: "tx", port: "out"))), to: sender.endpoint)
        XCTAssertEqual(answer, .disconnected(count: 1))
        for _ in 0..<100 {
            if case .description(let description) = try await TestControl.send(.describe, to: receiver.endpoint),
                description.connections.isEmpty
            {
                return
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        XCTFail("the receiver kept its connection")
    }

    private func size(_ path: String) -> Int? {
        var status = stat()
        return stat(path, &status) == 0 ? Int(status.st_size) : nil
    }

    private func sidecar(_ path: String) throws -> [String: Any] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path + ".timing.json"))
        return try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    func testASeparateTrackPortWithAFilePerTrackWritesEachTrackToItsOwnFileWithItsTiming() async throws {
        let directory = try temporaryDirectory("tracks")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/desk.wav"
        // A take whose track 2 file exists already moves to the next number, leaving no file half made.
        _ = FileManager.default.createFile(atPath: directory + "/desk-track2.wav", contents: Data("an earlier take".utf8))
        var lab = LoopbackPeers()
        let sender = try await lab.start("tx", ports: [.toneSender(name: "out", sampleRates: [48_000])])
        var port = PortConfiguration.receiver(name: "desk", sink: .wavFilePerTrack(path: path), sampleRates: [48_000])
        port.descriptor = port.descriptor.separate(tracks: 2, latencyMilliseconds: 20)
        let receiver = try await lab.start("rx", ports: [port])
        _ = try await connect(sender, to: receiver, port: "desk")
        try await Task.sleep(for: .milliseconds(1200))
        try await disconnect(sender, from: receiver)

        XCTAssertNil(size(path), "no single file")
        XCTAssertNil(size(directory + "/desk-track1.wav"), "take 1's names were not all free: none of its files stays")
        XCTAssertEqual(
            String(decoding: try Data(contentsOf: URL(fileURLWithPath: directory + "/desk-track2.wav")), as: UTF8.self), "an earlier take")
        let track1 = try WAVAudio.read(path: directory + "/desk-2-track1.wav")
        let track2 = try WAVAudio.read(path: directory + "/desk-2-track2.wav")
        XCTAssertEqual(track1.channels, 2, "a track's own channels")
        XCTAssertEqual(track2.channels, 2)
        XCTAssertEqual(track1.frames, track2.frames, "both tracks cover the take")
        XCTAssertGreaterThan(track1.frames, 24_000)
        XCTAssertGreaterThan(track1.samples.map(abs).max() ?? 0, 0.4, "the one pipeline plays on track 1")
        XCTAssertEqual(track2.samples.map(abs).max() ?? 1, 0, "track 2 is silent: nothing plays on it")
        for file in ["desk-2-track1.wav", "desk-2-track2.wav"] {
            let timing = try sidecar(directory + "/" + file)
            XCTAssertEqual(timing["sampleRate"] as? Int, 48_000, file)
        }
        await lab.stopAll()
    }

    func testEachConnectionIsATakeInItsOwnFileAndNothingIsWrittenBetween() async throws {
        let directory = try temporaryDirectory("takes")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/foh.wav"
        var lab = LoopbackPeers()
        let sender = try await lab.start("tx", ports: [.toneSender(name: "out", sampleRates: [48_000, 44_100])])
        let receiver = try await lab.start("rx", ports: [.receiver(name: "foh", sink: .wavFile(path: path))])
        XCTAssertNil(size(path), "no take before a connection")

        // Take 1, at 48 kHz.
        let first = ContinuousClock.now
        _ = try await connect(sender, to: receiver, port: "foh")
        try await Task.sleep(for: .milliseconds(1200))
        try await disconnect(sender, from: receiver)
        let firstDuration = ContinuousClock.now - first

        // Idle: the file is closed and does not grow; no new file appears.
        let closedSize = try XCTUnwrap(size(path))
        try await Task.sleep(for: .seconds(1))
        XCTAssertEqual(size(path), closedSize, "nothing is written while nothing is connected")
        XCTAssertNil(size(directory + "/foh-2.wav"))

        // Take 2, at another rate: the port's clock stopped with take 1, so it may.
        let second = ContinuousClock.now
        _ = try await connect(sender, to: receiver, port: "foh", sampleRate: 44_100)
        try await Task.sleep(for: .milliseconds(800))
        try await disconnect(sender, from: receiver)
        let secondDuration = ContinuousClock.now - second
        await lab.stopAll()

        let takes = [(path, 48_000, firstDuration), (directory + "/foh-2.wav", 44_100, secondDuration)]
        for (file, rate, connected) in takes {
            let audio = try WAVAudio.read(path: file)
            XCTAssertEqual(audio.sampleRate, rate, file)
            XCTAssertEqual(audio.channels, 2, file)
            XCTAssertEqual(size(file), WAVWriter.headerBytes + audio.frames * 2 * 3, "\(file): the header's sizes are final")
            // The take lasts as long as the connection did, give or take the set-up and teardown.
            let seconds = Double(audio.frames) / Double(rate)
            let expected = Double(connected.components.seconds) + Double(connected.components.attoseconds) / 1e18
            XCTAssertEqual(seconds, expected, accuracy: 0.25, "\(file): \(seconds) s recorded for \(expected) s connected")
            // The tone is in it (not a file of silence).
            XCTAssertGreaterThan(audio.channel(0).map(abs).max() ?? 0, 0.4, file)
            let timing = try sidecar(file)
            XCTAssertEqual(timing["sampleRate"] as? Int, rate, file)
            XCTAssertNotNil(timing["firstFrameHostTimeNs"] as? Int, file)
        }
        XCTAssertNil(size(directory + "/foh-3.wav"))
        let firstStart = try XCTUnwrap(try sidecar(path)["firstFrameHostTimeNs"] as? Int)
        let secondStart = try XCTUnwrap(try sidecar(directory + "/foh-2.wav")["firstFrameHostTimeNs"] as? Int)
        XCTAssertGreaterThan(secondStart - firstStart, 2_000_000_000, "take 2 began when its connection did")
    }

    func testATakeNeverOverwritesAFile() async throws {
        let directory = try temporaryDirectory("existing")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/foh.wav"
        let earlier = Data("yesterday's take".utf8)
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: earlier))
        XCTAssertTrue(FileManager.default.createFile(atPath: directory + "/foh-3.wav", contents: earlier))
        var lab = LoopbackPeers()
        let sender = try await lab.start("tx", ports: [.toneSender(name: "out")])
        let receiver = try await lab.start("rx", ports: [.receiver(name: "foh", sink: .wavFile(path: path))])
        for _ in 0..<2 {
            _ = try await connect(sender, to: receiver, port: "foh")
            try await Task.sleep(for: .milliseconds(300))
            try await disconnect(sender, from: receiver)
        }
        await lab.stopAll()
        XCTAssertEqual(FileManager.default.contents(atPath: path), earlier)
        XCTAssertEqual(FileManager.default.contents(atPath: directory + "/foh-3.wav"), earlier)
        XCTAssertGreaterThan(try WAVAudio.read(path: directory + "/foh-2.wav").frames, 0)
        XCTAssertGreaterThan(try WAVAudio.read(path: directory + "/foh-4.wav").frames, 0)
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: directory).sorted(),
            ["foh-2.wav", "foh-2.wav.timing.json", "foh-3.wav", "foh-4.wav", "foh-4.wav.timing.json", "foh.wav"])
    }

    func testAWavPathInAMissingDirectoryIsRefusedBeforeThePeerStarts() async throws {
        var lab = LoopbackPeers()
        do {
            _ = try await lab.start("rx", ports: [.receiver(name: "foh", sink: .wavFile(path: "/tmp/tutti-missing-\(getpid())/foh.wav"))])
            XCTFail("the peer started")
        } catch let error as PeerError {
            XCTAssertEqual(
                error.message,
                "port foh: cannot record to /tmp/tutti-missing-\(getpid())/foh.wav: directory /tmp/tutti-missing-\(getpid()) does not exist"
            )
        }
        await lab.stopAll()
    }

    /// A WAV on a full file system (a 256 KiB tmpfs, under a second of 48 kHz stereo L24): the connection
    /// fails with the reason, within a second of the failure.
    func testAFullDiskFailsTheConnectionWithItsReason() async throws {
        try XCTSkipUnless(getuid() == 0, "mounting a tmpfs needs root")
        let directory = try temporaryDirectory("full")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        guard mount("tmpfs", directory, "tmpfs", 0, "size=256k") == 0 else {
            return XCTFail("cannot mount a tmpfs on \(directory): \(String(cString: strerror(errno)))")
        }
        defer { umount(directory) }
        let path = directory + "/foh.wav"
        var lab = LoopbackPeers()
        let sender = try await lab.start("tx", ports: [.toneSender(name: "out", sampleRates: [48_000])])
        let receiver = try await lab.start("rx", ports: [.receiver(name: "foh", sink: .wavFile(path: path))])
        _ = try await connect(sender, to: receiver, port: "foh")

        var failed: ConnectionSummary?
        var full: ContinuousClock.Instant?
        let start = ContinuousClock.now
        while failed == nil, ContinuousClock.now - start < .seconds(5) {
            try await Task.sleep(for: .milliseconds(20))
            if full == nil, (size(path) ?? 0) >= 240 * 1024 { full = .now }
            if case .description(let description) = try await TestControl.send(.describe, to: receiver.endpoint),
                let connection = description.connections.first, connection.state == .failed
            {
                failed = connection
            }
        }
        let connection = try XCTUnwrap(failed, "the connection never failed")
        XCTAssertEqual(connection.failureReason, "cannot write \(path): No space left on device; recording stopped")
        let filled = try XCTUnwrap(full, "the file never filled the disk")
        XCTAssertLessThan(ContinuousClock.now - filled, .seconds(1))
        if case .statistics(let list) = try await TestControl.send(.statistics, to: receiver.endpoint) {
            XCTAssertEqual(list.first?.state, .failed)
            XCTAssertEqual(list.first?.failureReason, connection.failureReason)
        } else {
            XCTFail("no statistics")
        }
        try await disconnect(sender, from: receiver)
        await lab.stopAll()
        // What was written before the disk filled is a valid file.
        XCTAssertGreaterThan(try WAVAudio.read(path: path).frames, 20_000)
    }
}
