#if canImport(Glibc)
import Glibc
#endif
import Foundation
import TuttiIO
import TuttiPeer
import TuttiTesting
import TuttiWire
import XCTest

/// Output failures where the musician looks, against the `tutti` binary: a receiver whose pipe is closed
/// (`tutti peer --receiver mon=stdout | aplay` without aplay) and WAV paths that cannot be recorded to.
final class OutputFailureCommandLineTests: XCTestCase {
    private var tutti: String { TuttiBinary.path }

    private func temporaryDirectory(_ name: String) throws -> String {
        let path = "/tmp/tutti-output-tests-\(getpid())-\(name)-\(UInt32.random(in: 0 ... .max))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Every `"failureReason"` of a connection whose `"state"` is `"failed"`, wherever it sits in the JSON.
    private func failedReasons(inJSON text: String) throws -> [String] {
        var reasons = [String]()
        func visit(_ value: Any) {
            if let object = value as? [String: Any] {
                if object["state"] as? String == "failed" { reasons.append(object["failureReason"] as? String ?? "(no reason)") }
                object.values.forEach(visit)
            } else if let array = value as? [Any] {
                array.forEach(visit)
            }
        }
        for line in text.split(separator: "\n") where line.first == "[" || line.first == "{" {
            // stats --json prints one document per line; ls --json one pretty-printed document.
            if let value = try? JSONSerialization.jsonObject(with: Data(line.utf8)) { visit(value) }
        }
        if reasons.isEmpty, let value = try? JSONSerialization.jsonObject(with: Data(text.utf8)) { visit(value) }
        return reasons
    }

    func testADeadOutputPipeFailsTheConnectionWithinASecondAndIsLoggedOnce() async throws {
        try requireBinary()
        let directory = try temporaryDirectory("pipe")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let log = directory + "/peer.log"
        XCTAssertTrue(FileManager.default.createFile(atPath: log, contents: nil))

        // The receiver's standard output is a pipe whose reader is gone, as with `| aplay` on a host without aplay.
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tutti)
        process.arguments = [
            "peer", "--name", "rx", "--no-discovery", "--no-link", "--control-port", "0", "--realtime-priority", "0",
            "--state-dir", directory, "--receiver", "mon=stdout",
        ]
        process.environment = TestSession.childEnvironment()
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle(forWritingAtPath: log)
        process.standardInput = FileHandle.nullDevice
        try process.run()
        try output.fileHandleForReading.close()
        defer { if process.isRunning { process.terminate() } }

        // Its control port, from its log.
        let controlPort = await RunningChildProcess.controlPort(loggedTo: log)
        let started = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        let port = try XCTUnwrap(controlPort, "the peer did not start: \(started)")
        let receiver = ControlEndpoint(host: "127.0.0.1", port: port)

        var lab = LoopbackPeers()
        let sender = try await lab.start("tx", ports: [.toneSender(name: "out")])
        let request = ConnectRequest(
            source: PortReference(peer: "tx", port: "out"), destination: PortReference(peer: "rx", port: "mon"),
            destinationEndpoints: [receiver], options: ConnectOptions())
        let answer = try await TestControl.send(.connect(request), to: sender.endpoint, timeout: .seconds(5))
        guard case .connected = answer else { return XCTFail("expected connected, got \(answer)") }
        let connected = ContinuousClock.now

        // The receiving peer shows the failure within a second.
        var failedAfter: Duration?
        while failedAfter == nil, ContinuousClock.now - connected < .seconds(3) {
            if case .description(let description) = try await TestControl.send(.describe, to: receiver),
                description.connections.first?.state == .failed
            {
                failedAfter = ContinuousClock.now - connected
            } else {
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        let elapsed = try XCTUnwrap(failedAfter, "the connection never showed the failure")
        XCTAssertLessThan(elapsed, .seconds(1))

        // The peer logs it within a second too.
        var logged = false
        while !logged, ContinuousClock.now - connected < .seconds(3) {
            logged = try String(contentsOfFile: log, encoding: .utf8).contains("Z error ")
            if !logged { try await Task.sleep(for: .milliseconds(20)) }
        }
        XCTAssertTrue(logged, "no error line")
        XCTAssertLessThan(ContinuousClock.now - connected, .seconds(1))

        // `ls --json` and `stats --json` say so, with the reason; so do the tables.
        let reason = "standard output is closed (the program reading it has exited: Broken pipe); nothing is played"
        let session = ["--no-discovery", "--peer", "127.0.0.1:\(port)", "--browse", "0.5"]
        let list = try await runChildProcess(tutti, ["ls", "--json"] + session, timeout: .seconds(20))
        XCTAssertEqual(list.status, 0, list.error)
        XCTAssertEqual(try failedReasons(inJSON: list.output), [reason], list.output)
        let statistics = try await runChildProcess(tutti, ["stats", "--json"] + session, timeout: .seconds(20))
        XCTAssertEqual(statistics.status, 0, statistics.error)
        XCTAssertEqual(try failedReasons(inJSON: statistics.output), [reason], statistics.output)
        let table = try await runChildProcess(tutti, ["ls"] + session, timeout: .seconds(20))
        XCTAssertTrue(table.output.contains("  failed   mon ← tx:out"), table.output)
        XCTAssertTrue(table.output.contains(reason), table.output)
        let stats = try await runChildProcess(tutti, ["stats", "--count", "1", "--wide"] + session, timeout: .seconds(20))
        XCTAssertTrue(stats.output.contains("output failed: \(reason)"), stats.output)

        // A new connection to the dead output is refused, with the reason.
        let again = try await TestControl.send(.connect(request), to: sender.endpoint, timeout: .seconds(5))
        guard case .failure(let refusal) = again else { return XCTFail("expected a refusal, got \(again)") }
        XCTAssertTrue(refusal.message.contains("mon cannot play: \(reason)"), refusal.message)

        // The peer is alive (not killed by SIGPIPE), stops cleanly, and logged the failure once at error level.
        XCTAssertTrue(process.isRunning)
        await lab.stopAll()
        process.terminate()
        while process.isRunning { try await Task.sleep(for: .milliseconds(20)) }
        XCTAssertEqual(process.terminationStatus, 0)
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        let errors = lines.filter { $0.contains("Z error ") }
        XCTAssertEqual(errors.count, 1, lines.joined(separator: "\n"))
        let id = try XCTUnwrap(answerID(answer))
        XCTAssertTrue(errors.first?.hasSuffix("receiver mon: \(reason) (connection \(id) failed)") == true, "\(errors)")
    }

    /// A disk that fills under a WAV sink (here a file size limit, `prlimit --fsize`, which fails writes as a full
    /// disk does): the peer stays up, the connection fails with the reason and how much audio was not recorded,
    /// and the file's header matches the bytes on disk, whole frames only.
    func testAFullDiskUnderAWAVSinkKeepsThePeerUpAndTheHeaderTrue() async throws {
        try requireBinary()
        let directory = try temporaryDirectory("full")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let log = directory + "/peer.log"
        XCTAssertTrue(FileManager.default.createFile(atPath: log, contents: nil))
        let take = directory + "/take.wav"
        let limit = 300_001  // about a second of 24-bit stereo, and not on a frame's edge
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/prlimit")
        process.arguments = [
            "--fsize=\(limit)", "--", tutti, "peer", "--name", "rx", "--no-discovery", "--no-link", "--control-port", "0",
            "--realtime-priority", "0", "--state-dir", directory, "--receiver", "in=wav,path=\(take)",
        ]
        process.environment = TestSession.childEnvironment()
        process.standardError = FileHandle(forWritingAtPath: log)
        process.standardInput = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        let controlPort = await RunningChildProcess.controlPort(loggedTo: log)
        let port = try XCTUnwrap(controlPort, "the peer did not start: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
        let receiver = ControlEndpoint(host: "127.0.0.1", port: port)

        var lab = LoopbackPeers()
        let sender = try await lab.start("tx", ports: [.toneSender(name: "out")])
        let request = ConnectRequest(
            source: PortReference(peer: "tx", port: "out"), destination: PortReference(peer: "rx", port: "in"),
            destinationEndpoints: [receiver], options: ConnectOptions(sampleFormat: .l24))
        let answer = try await TestControl.send(.connect(request), to: sender.endpoint, timeout: .seconds(5))
        guard case .connected = answer else { return XCTFail("expected connected, got \(answer)") }

        // About a second fills the file; the connection fails with the reason soon after, and counts what is lost.
        var reason: String?
        let connected = ContinuousClock.now
        while ContinuousClock.now - connected < .seconds(6) {
            if case .description(let description) = try await TestControl.send(.describe, to: receiver),
                let connection = description.connections.first, connection.state == .failed,
                let failure = connection.failureReason, failure.hasSuffix("s not recorded since)")
            {
                reason = failure
                break
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        let failure = try XCTUnwrap(
            reason, "no failure with the audio not recorded; log: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
        XCTAssertTrue(failure.hasPrefix("cannot write \(take): File too large; recording stopped ("), failure)
        XCTAssertTrue(process.isRunning, "the peer is still up")
        // The log says so once, at error level, within a second of the failure.
        var logged = false
        let failed = ContinuousClock.now
        while !logged, ContinuousClock.now - failed < .seconds(3) {
            logged = try String(contentsOfFile: log, encoding: .utf8).contains("Z error ")
            if !logged { try await Task.sleep(for: .milliseconds(20)) }
        }
        XCTAssertTrue(logged, "no error line")
        XCTAssertLessThan(ContinuousClock.now - failed, .seconds(1))

        await lab.stopAll()
        process.terminate()
        while process.isRunning { try await Task.sleep(for: .milliseconds(20)) }
        XCTAssertEqual(process.terminationStatus, 0)

        // The file: under the limit, its header's sizes are the file's, and it holds whole frames only.
        let bytes = try XCTUnwrap(FileManager.default.contents(atPath: take))
        func u32(_ offset: Int) -> Int { (0..<4).reduce(0) { $0 | Int(bytes[offset + $1]) << (8 * $1) } }
        XCTAssertLessThanOrEqual(bytes.count, limit)
        XCTAssertGreaterThan(bytes.count, limit - 6 - WAVWriter.headerBytes, "the file filled up to the limit, less a frame")
        XCTAssertEqual(String(decoding: bytes[0..<4], as: UTF8.self), "RIFF")
        XCTAssertEqual(u32(4), bytes.count - 8, "RIFF size")
        XCTAssertEqual(String(decoding: bytes[72..<76], as: UTF8.self), "data")
        XCTAssertEqual(u32(76), bytes.count - WAVWriter.headerBytes, "data size")
        let audio = try WAVAudio.read(path: take)
        XCTAssertEqual(audio.samples.count * 3, bytes.count - WAVWriter.headerBytes, "whole 24-bit samples")
        XCTAssertEqual(audio.samples.count % 2, 0, "whole stereo frames")
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(lines.filter { $0.contains("Z error ") }.count, 1, lines.joined(separator: "\n"))
    }

    private func answerID(_ answer: ControlResponse) -> ConnectionID? {
        if case .connected(let summary) = answer { return summary.id }
        return nil
    }

    func testAWavPathInAMissingDirectoryIsRefusedByDryRunAndAtStartUp() async throws {
        try requireBinary()
        let missing = "/tmp/tutti-no-such-directory-\(getpid())"
        let flags = ["peer", "--name", "rec", "--no-discovery", "--no-link", "--receiver", "foh=wav,path=\(missing)/foh.wav"]
        let line = "tutti: port foh: cannot record to \(missing)/foh.wav: directory \(missing) does not exist\n"
        for arguments in [
            flags + ["--dry-run"], flags + ["--control-port", "0", "--state-dir", "/tmp/tutti-output-tests-state-\(getpid())"],
        ] {
            let result = try await runChildProcess(tutti, arguments, timeout: .seconds(10))
            XCTAssertEqual(result.status, 1, arguments.joined(separator: " "))
            XCTAssertEqual(result.error, line, arguments.joined(separator: " "))
            XCTAssertEqual(result.output, "")
        }
        // A path that is a directory, and a directory that is a file.
        let file = "/tmp/tutti-output-tests-file-\(getpid())"
        XCTAssertTrue(FileManager.default.createFile(atPath: file, contents: Data()))
        defer { unlink(file) }
        let refusals = [
            ("foh=wav,path=/tmp", "tutti: port foh: cannot record to /tmp: it is a directory; give a file name, e.g. path=/tmp/foh.wav\n"),
            ("foh=wav,path=\(file)/foh.wav", "tutti: port foh: cannot record to \(file)/foh.wav: \(file) is not a directory\n"),
        ]
        for (spec, message) in refusals {
            let result = try await runChildProcess(
                tutti, ["peer", "--no-discovery", "--dry-run", "--receiver", spec], timeout: .seconds(10))
            XCTAssertEqual(result.status, 1, spec)
            XCTAssertEqual(result.error, message, spec)
        }
        // A good path passes and is printed.
        let good = try await runChildProcess(
            tutti, ["peer", "--name", "rec", "--no-discovery", "--dry-run", "--receiver", "foh=wav,path=/tmp/foh.wav"],
            timeout: .seconds(10))
        XCTAssertEqual(good.status, 0, good.error)
        XCTAssertTrue(
            good.output.contains("receiver foh \"foh.wav\": 2ch, 48000/44100/96000 Hz, L24/L16/OPUS, wav /tmp/foh.wav"), good.output)
    }

    /// Musicians run peers as themselves: a directory they cannot write is refused for them (root could).
    func testADirectoryTheUserCannotWriteIsRefusedForAnOrdinaryUser() async throws {
        try requireBinary()
        try XCTSkipUnless(
            getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"), "needs root and setpriv to become nobody")
        let directory = try temporaryDirectory("readonly")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        chmod(directory, 0o755)  // root's: nobody may enter but not write
        var parent = directory
        while parent != "/tmp", let slash = parent.lastIndex(of: "/") {
            parent = String(parent[..<slash])
            chmod(parent, 0o755)
        }
        // The test binary must be reachable by nobody too.
        let result = try await runChildProcess(
            "/usr/bin/setpriv",
            [
                "--reuid=nobody", "--regid=nogroup", "--clear-groups", tutti, "peer", "--no-discovery", "--dry-run", "--receiver",
                "foh=wav,path=\(directory)/foh.wav",
            ],
            timeout: .seconds(10))
        try XCTSkipIf(
            result.error.contains("Permission denied") && !result.error.contains("tutti:"), "nobody cannot run \(tutti): \(result.error)")
        XCTAssertEqual(result.status, 1, result.error)
        XCTAssertEqual(
            result.error,
            "tutti: port foh: cannot record to \(directory)/foh.wav: directory \(directory) is not writable (Permission denied)\n")
        // The same directory opened to everyone is accepted.
        chmod(directory, 0o777)
        let opened = try await runChildProcess(
            "/usr/bin/setpriv",
            [
                "--reuid=nobody", "--regid=nogroup", "--clear-groups", tutti, "peer", "--name", "rec", "--no-discovery", "--dry-run",
                "--receiver", "foh=wav,path=\(directory)/foh.wav",
            ],
            timeout: .seconds(10))
        XCTAssertEqual(opened.status, 0, opened.error)
    }
}
