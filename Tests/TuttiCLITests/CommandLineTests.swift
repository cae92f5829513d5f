import Foundation
import TuttiTesting
import XCTest

/// The `tutti` binary's configuration checks, completion scripts and one-line errors (it is built with the
/// tests: `swift build --build-tests`).
final class CommandLineTests: XCTestCase {
    private func run(_ arguments: [String], in directory: String? = nil) throws -> (status: Int32, output: String, error: String) {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.environment = TestSession.childEnvironment()
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        process.waitUntilExit()
        return (
            process.terminationStatus, String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self),
            String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        )
    }

    /// Every shipped example runs as written, from any working directory (`--dry-run` reads the files a
    /// config names, e.g. studio.toml's backing.wav beside it).
    func testEveryExampleConfigurationChecksOutFromAnyDirectory() throws {
        try requireBinary()
        let configs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../configs")
            .standardizedFileURL
        let files = try FileManager.default.contentsOfDirectory(atPath: configs.path).filter { $0.hasSuffix(".toml") }.sorted()
        XCTAssertEqual(files, ["jack.toml", "stage.toml", "studio.toml", "tracks.toml"])
        for file in files {
            let result = try run(["peer", "--config", configs.appendingPathComponent(file).path, "--dry-run"], in: "/")
            XCTAssertEqual(result.status, 0, "\(file): \(result.error)")
        }
        let studio = try run(["peer", "--config", "configs/studio.toml", "--dry-run"], in: configs.deletingLastPathComponent().path)
        XCTAssertTrue(studio.output.contains("wav \(configs.path)/backing.wav (loop)"), studio.output)
        let tracks = try run(["peer", "--config", configs.appendingPathComponent("tracks.toml").path, "--dry-run"], in: "/")
        XCTAssertTrue(
            tracks.output.contains(
                "wav \(configs.path)/tracks.wav, a file per track, separate: 4 tracks of 2ch played 20.0 ms after capture, monitor on stdout s16le"
            ),
            tracks.output)
    }

    func testCompletionScriptsAreGenerated() throws {
        try requireBinary()
        for shell in ["bash", "zsh", "fish"] {
            let result = try run(["--generate-completion-script", shell])
            XCTAssertEqual(result.status, 0, shell)
            for command in ["peer", "connect", "disconnect", "stats"] {
                XCTAssertTrue(result.output.contains(command), "\(shell) completion lacks \(command)")
            }
        }
    }

    func testTheExampleConfigurationParses() throws {
        try requireBinary()
        let configs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../configs")
            .standardizedFileURL
        // Run from elsewhere: a file a config names is found beside the config.
        let stage = try run(["peer", "--config", configs.appendingPathComponent("stage.toml").path, "--dry-run"], in: "/")
        XCTAssertEqual(stage.status, 0, stage.error)
        XCTAssertEqual(
            stage.output,
            """
            peer stage: control port any, period 64 frames, discovery on, beat clock on, realtime priority 70, members only (session key 738e0004)
              sender click "Click 1 kHz": 2ch, 48000/44100 Hz, L24/L16/OPUS, tone 1000.0 Hz at 0.5
              sender mic "stdin": 1ch, 48000 Hz, L24/L16/OPUS, stdin s16le
              receiver monitor "monitor.wav": 2ch, 48000/44100/96000 Hz, L24/L16/OPUS, wav \(configs.path)/monitor.wav

            """)
        // Flags override the file.
        let overridden = try run([
            "peer", "--config", configs.appendingPathComponent("stage.toml").path, "--name", "other", "--no-discovery",
            "--realtime-priority", "0", "--dry-run",
        ])
        XCTAssertTrue(
            overridden.output.hasPrefix(
                "peer other: control port any, period 64 frames, discovery off, beat clock on, realtime priority off"),
            overridden.output)

        let broken = FileManager.default.temporaryDirectory.appendingPathComponent("tutti-broken-\(UInt32.random(in: 0 ... .max)).toml")
        try "name = \"x\"\ncolour = 3\n".write(to: broken, atomically: true, encoding: .utf8)
        let refused = try run(["peer", "--config", broken.path, "--dry-run"])
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.error.hasPrefix("tutti: config \(broken.path): unknown key 'colour'"), refused.error)
    }

    func testJACKPortSpecificationsParse() throws {
        try requireBinary()
        let flags = try run([
            "peer", "--name", "desk", "--no-discovery", "--no-link", "--dry-run", "--sender", "send=jack",
            "--receiver", "return=jack,channels=1,connect=system:playback_",
        ])
        XCTAssertEqual(flags.status, 0, flags.error)
        XCTAssertEqual(
            flags.output,
            """
            peer desk: control port any, period 64 frames, discovery off, beat clock off, realtime priority 70, members only (session key 738e0004)
              sender send "JACK send": 2ch, the JACK server's rate, L24/L16/OPUS, jack tutti-desk:send_1…send_2
              receiver return "JACK return": 1ch, the JACK server's rate, L24/L16/OPUS, jack tutti-desk:return_1, connect system:playback_

            """)
        let configs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../configs")
        let file = try run(["peer", "--config", configs.appendingPathComponent("jack.toml").path, "--dry-run"])
        XCTAssertEqual(file.status, 0, file.error)
        XCTAssertEqual(
            file.output,
            """
            peer desk: control port any, period 64 frames, discovery on, beat clock on, realtime priority 70, members only (session key 738e0004)
              sender send "JACK send": 2ch, the JACK server's rate, L24/L16/OPUS, jack tutti-desk:send_1…send_2, connect system:capture_
              receiver return "JACK return": 2ch, the JACK server's rate, L24/L16/OPUS, jack tutti-desk:return_1…return_2

            """)
        let refusals = [
            ("in=jack,rates=48000", "tutti: port in: a jack port runs at the JACK server's rate (no rates=)\n"),
            ("in=jack,connect=system", "tutti: port in: connect=system is not CLIENT:PORT_PREFIX, e.g. connect=system:playback_\n"),
            ("in=jack,path=x.wav", "tutti: port in: unknown key 'path' for a jack receiver\n"),
            ("in=jack,channels=0", "tutti: port in: channels must be between 1 and 32\n"),
        ]
        for (spec, message) in refusals {
            let refused = try run(["peer", "--no-discovery", "--dry-run", "--receiver", spec])
            XCTAssertEqual(refused.status, 1, spec)
            XCTAssertEqual(refused.error, message, spec)
        }
    }

    func testSeparateTracksAndClickPortSpecificationsParse() throws {
        try requireBinary()
        let directory = FileManager.default.temporaryDirectory.path
        let flags = try run([
            "peer", "--name", "desk", "--no-discovery", "--no-link", "--dry-run", "--sender", "beat=click,every=250",
            "--receiver", "rec=wav,path=\(directory)/takes.wav,mode=separate,tracks=3,latency=15,files=per-track",
            "--receiver", "mon=null,mode=separate,monitor=stdout", "--receiver", "deck=jack,mode=separate,monitor=jack",
        ])
        XCTAssertEqual(flags.status, 0, flags.error)
        XCTAssertEqual(
            flags.output,
            """
            peer desk: control port any, period 64 frames, discovery off, beat clock off, realtime priority 70, members only (session key 738e0004)
              sender beat "Click every 250 ms": 2ch, 48000/44100/96000 Hz, L24/L16/OPUS, click every 250.0 ms of the shared clock at 0.5
              receiver rec "takes.wav": 2ch, 48000/44100/96000 Hz, L24/L16/OPUS, wav \(directory)/takes.wav, a file per track, separate: 3 tracks of 2ch played 15.0 ms after capture
              receiver mon "mon": 2ch, 48000/44100/96000 Hz, L24/L16/OPUS, null, separate: 2 tracks of 2ch played 10.0 ms after capture, monitor on stdout s16le
              receiver deck "JACK deck": 2ch, the JACK server's rate, L24/L16/OPUS, jack tutti-desk:deck_1…deck_4, separate: 2 tracks of 2ch played 10.0 ms after capture, monitor on deck_5…deck_6

            """)
        let refusals = [
            ("in=null,tracks=2", "tutti: port in: tracks= goes with mode=separate\n"),
            ("in=null,mode=solo", "tutti: port in: mode=solo is not mixed or separate\n"),
            ("in=null,mode=separate,tracks=17", "tutti: port in: tracks=17 is not between 1 and 16\n"),
            ("in=null,mode=separate,tracks=3,channels=32", "tutti: port in: 3 tracks of 32 channels are 96 channels, more than 64\n"),
            ("in=null,mode=separate,latency=0.5", "tutti: port in: latency=0.5 is not between 1 and 2000 ms\n"),
            ("in=wav,path=x.wav,files=per-track", "tutti: port in: files=per-track is for separate tracks (mode=separate)\n"),
            ("in=wav,path=x.wav,mode=separate,files=many", "tutti: port in: files=many is not one or per-track\n"),
            ("in=null,files=one", "tutti: port in: unknown key 'files' for a null receiver\n"),
            (
                "in=null,monitor=stdout",
                "tutti: port in: monitor= is for separate tracks (mode=separate); a receiver that mixes plays its mix already\n"
            ),
            (
                "in=null,mode=separate,monitor=jack",
                "tutti: port in: monitor=jack is for jack receivers (a wav or null receiver takes monitor=stdout)\n"
            ),
            (
                "in=jack,mode=separate,monitor=stdout",
                "tutti: port in: monitor=stdout is for wav and null receivers (a jack receiver takes monitor=jack)\n"
            ),
            ("in=null,mode=separate,monitor=speakers", "tutti: port in: monitor=speakers is not stdout[:ENCODING] or jack\n"),
        ]
        for (spec, message) in refusals {
            let refused = try run(["peer", "--no-discovery", "--dry-run", "--receiver", spec])
            XCTAssertEqual(refused.status, 1, spec)
            XCTAssertEqual(refused.error, message, spec)
        }
        let badClick = try run(["peer", "--no-discovery", "--dry-run", "--sender", "beat=click,every=0.5"])
        XCTAssertEqual(badClick.error, "tutti: port beat: every must be between 1 and 60000 ms\n")
        let onSender = try run(["peer", "--no-discovery", "--dry-run", "--sender", "out=tone,mode=separate"])
        XCTAssertEqual(onSender.error, "tutti: port out: unknown key 'mode' for a tone sender\n")
    }

    func testErrorsAreOneLineOnStandardErrorWithAFailingStatus() throws {
        try requireBinary()
        let badPort = try run(["peer", "--no-discovery", "--sender", "out=bogus"])
        XCTAssertEqual(badPort.status, 1)
        XCTAssertEqual(badPort.error, "tutti: port out: unknown sender kind 'bogus' (one of: tone, click, wav, stdin, jack)\n")
        let noPorts = try run(["peer", "--no-discovery"])
        XCTAssertEqual(noPorts.status, 1)
        XCTAssertEqual(noPorts.error.split(separator: "\n").count, 1)
        let unreachable = try run(["connect", "x:out", "y:in", "--no-discovery", "--peer", "127.0.0.1:9", "--browse", "0.5"])
        XCTAssertEqual(unreachable.status, 1)
        XCTAssertTrue(
            unreachable.error.hasPrefix("tutti: peer x does not answer") || unreachable.error.hasPrefix("tutti: no peer named 'x'"),
            unreachable.error)
        let badArgument = try run(["connect", "nocolon", "y:in"])
        XCTAssertNotEqual(badArgument.status, 0)
    }

    /// `--control-address` (or `control-address` in a config) keeps the control channel on the addresses
    /// given; anything but an IP address is refused in one line before the peer starts.
    func testControlAddressesAreCheckedAndShown() throws {
        try requireBinary()
        let one = try run(["peer", "--sender", "out=tone", "--control-address", "127.0.0.1", "--control-address", "::1", "--dry-run"])
        XCTAssertEqual(one.status, 0, one.error)
        XCTAssertTrue(one.output.contains("control port any on 127.0.0.1, ::1,"), one.output)
        let name = try run(["peer", "--sender", "out=tone", "--control-address", "localhost", "--dry-run"])
        XCTAssertEqual(name.status, 1)
        XCTAssertEqual(
            name.error, "tutti: --control-address 'localhost' is not an IP address; give one of this host's, e.g. 192.168.1.20 or ::1\n")
        let directory = NSTemporaryDirectory() + "tutti-control-address-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let config = directory + "/peer.toml"
        try "name = \"desk\"\ncontrol-address = [\"127.0.0.1\"]\n[[sender]]\nname = \"out\"\nsource = \"tone\"\n".write(
            toFile: config, atomically: true, encoding: .utf8)
        let file = try run(["peer", "--config", config, "--dry-run"])
        XCTAssertEqual(file.status, 0, file.error)
        XCTAssertTrue(file.output.contains("control port any on 127.0.0.1,"), file.output)
        // Bound to an address this host does not have: one line, naming the flag.
        let foreign = try run(["peer", "--sender", "out=tone", "--no-discovery", "--no-link", "--control-address", "198.18.255.254"])
        XCTAssertEqual(foreign.status, 1)
        XCTAssertTrue(
            foreign.error.hasSuffix(
                "cannot listen on 198.18.255.254: it is not an address of this host; give one of its own with --control-address (see 'ip address')\n"
            ),
            foreign.error)
    }

    func testBadRTPDestinationsAreRefusedBeforeAnyPeerIsAsked() throws {
        try requireBinary()
        let cases: [(String, String)] = [
            (
                "rtp://receiver.local:5004",
                "'receiver.local' is a host name: rtp:// needs a numeric IPv4 or [IPv6] address (Tutti does not look names up in DNS)"
            ),
            ("rtp://127.0.0.1", "'rtp://127.0.0.1' has no port: write rtp://HOST:PORT, e.g. rtp://127.0.0.1:5004"),
            ("rtp://127.0.0.1:70000", "'rtp://127.0.0.1:70000': the port must be a number from 1 to 65535"),
            ("rtp://::1:5004", "'rtp://::1:5004': write an IPv6 address in brackets, e.g. rtp://[::1]:5004"),
            ("rtp://224.0.0.56:46000", "rtp://224.0.0.56:46000: multicast destinations are not supported yet; give a unicast address"),
            ("a:not a port", "'a:not a port': a port name is 1–32 of A–Z a–z 0–9 _ . - (write PEER:PORT, e.g. stage:out)"),
        ]
        for (destination, message) in cases {
            // --peer points at the discard port: a request that got that far would fail differently.
            let result = try run(["connect", "a:out", destination, "--no-discovery", "--peer", "127.0.0.1:9"])
            XCTAssertEqual(result.status, 64, destination)
            XCTAssertTrue(result.error.hasPrefix("Error: \(message)\n"), "\(destination): \(result.error)")
            XCTAssertEqual(result.output, "")
        }
        let disconnect = try run(["disconnect", "a:out", "rtp://stage.local:5004", "--no-discovery", "--peer", "127.0.0.1:9"])
        XCTAssertEqual(disconnect.status, 64)
    }
}
