import Foundation
import TuttiCore
import TuttiPeer
import TuttiTesting
import TuttiWire
import XCTest

/// `tutti connect` / `disconnect` / `ls` against real peers on loopback: what the user reads (exact lines)
/// and the exit status, for the mistakes a newcomer makes in the first hour.
final class ConnectCommandLineTests: XCTestCase {
    private var lab = LoopbackPeers()
    private var stage: Peer!
    private var foh: Peer!

    override func setUp() async throws {
        try TuttiBinary.require()
        stage = try await lab.start(
            "stage", ports: [.toneSender(name: "out", channels: 8), .toneSender(name: "click")], rtpAllowed: ["127.0.0.1"])
        foh = try await lab.start(
            "foh", ports: [.receiver(name: "in", sink: .null), .receiver(name: "mon", sink: .null, channels: 4)])
    }

    override func tearDown() async throws {
        await lab.stopAll()
    }

    /// `tutti ARGUMENTS` with the two peers named explicitly (no DNS-SD in the test's namespace).
    private func tutti(_ arguments: String...) async throws -> (status: Int32, output: String, error: String) {
        try await TuttiBinary.run(arguments + ["--no-discovery", "--peer", "\(stage.endpoint)", "--peer", "\(foh.endpoint)"])
    }

    private func connections(of peer: Peer) async throws -> [ConnectionSummary] {
        guard case .description(let description) = try await TestControl.send(.describe, to: peer.endpoint) else { return [] }
        return description.connections
    }

    func testConnectingThePairTwiceSaysSoAndKeepsOneConnection() async throws {
        let first = try await tutti("connect", "stage:click", "foh:in")
        XCTAssertEqual(first.status, 0, first.error)
        let id = try await XCTUnwrapAsync(await connections(of: stage).first?.id)
        XCTAssertEqual(first.output, "connected stage:click → foh:in: L24/48000/2ch, 64 frames/packet, target latency 4.00ms [\(id)]\n")

        let second = try await tutti("connect", "stage:click", "foh:in")
        XCTAssertEqual(second.status, 0)
        XCTAssertEqual(
            second.output,
            "already connected stage:click → foh:in: L24/48000/2ch, 64 frames/packet, target latency 4.00ms [\(id)]; nothing changed\n")
        XCTAssertEqual(second.error, "")
        let onSender = try await connections(of: stage)
        let onReceiver = try await connections(of: foh)
        XCTAssertEqual(onSender.map(\.id), [id])
        XCTAssertEqual(onReceiver.map(\.id), [id], "the receiver mixes the source in once")
    }

    func testConcurrentConnectsOfOnePairMakeOneConnection() async throws {
        let request = ConnectRequest(
            source: PortReference(peer: "stage", port: "click"), destination: PortReference(peer: "foh", port: "in"),
            destinationEndpoints: [foh.endpoint], options: ConnectOptions())
        let endpoint = stage.endpoint
        async let first = TestControl.send(.connect(request), to: endpoint, timeout: .seconds(5))
        async let second = TestControl.send(.connect(request), to: endpoint, timeout: .seconds(5))
        let responses = try await [first, second]
        let connected = responses.filter { if case .connected = $0 { true } else { false } }
        XCTAssertEqual(connected.count, 1, "\(responses)")
        let onReceiver = try await connections(of: foh)
        XCTAssertEqual(onReceiver.count, 1)
    }

    func testAConnectionTheReceiverNoLongerHasIsReplaced() async throws {
        let first = try await tutti("connect", "stage:click", "foh:in")
        XCTAssertEqual(first.status, 0, first.error)
        // The receiver drops its end without telling the sender (as a restarted receiver has forgotten it).
        let id = try await XCTUnwrapAsync(await connections(of: foh).first?.id)
        _ = await foh.handle(.teardown(TeardownNotice(connectionID: id, reason: "test")), remoteHost: nil)
        let again = try await tutti("connect", "stage:click", "foh:in")
        XCTAssertEqual(again.status, 0, again.error)
        XCTAssertTrue(again.output.hasPrefix("connected stage:click → foh:in"), again.output)
        let onSender = try await connections(of: stage)
        let onReceiver = try await connections(of: foh)
        XCTAssertEqual(onSender.count, 1)
        XCTAssertEqual(onReceiver.map(\.id), onSender.map(\.id))
        XCTAssertNotEqual(onSender.first?.id, id)
    }

    func testAPeerWithoutAPortIsAnsweredWithItsPorts() async throws {
        let result = try await tutti("connect", "stage", "foh")
        XCTAssertEqual(result.status, 1)
        XCTAssertEqual(result.error, "tutti: 'stage' is a peer; the source is one of its sender ports: stage:out, stage:click\n")
        let destination = try await tutti("connect", "stage:out", "foh")
        XCTAssertEqual(destination.error, "tutti: 'foh' is a peer; the destination is one of its receiver ports: foh:in, foh:mon\n")
    }

    func testNearMissNamesGetADidYouMean() async throws {
        let port = try await tutti("connect", "stage:ot", "foh:in")
        XCTAssertEqual(port.status, 1)
        XCTAssertEqual(port.error, "tutti: stage has no port 'ot' (did you mean 'out'?); its sender ports: stage:out, stage:click\n")
        let peer = try await tutti("connect", "stgae:out", "foh:in")
        XCTAssertEqual(peer.status, 1)
        XCTAssertEqual(peer.error, "tutti: no peer named 'stgae' found (did you mean 'stage'?); found: foh, stage\n")
        let far = try await tutti("connect", "stage:xyz", "foh:in")
        XCTAssertEqual(far.error, "tutti: stage has no port 'xyz'; its sender ports: stage:out, stage:click\n")
    }

    func testAPortOfTheWrongDirectionIsNamedAsSuch() async throws {
        let result = try await tutti("connect", "foh:in", "stage:out")
        XCTAssertEqual(result.status, 1)
        XCTAssertEqual(result.error, "tutti: foh:in is a receiver port; the source must be a sender port (foh has none)\n")
    }

    func testOptionsOutOfRangeAreRefusedLocallyWithTheRange() async throws {
        for (arguments, line) in [
            (["--frames", "7"], "Error: --frames must be 16–1024 (got 7)"),
            (["--rate", "4000"], "Error: --rate must be 8000–192000 Hz (got 4000)"),
            (["--channels", "0"], "Error: --channels must be 1–32 (got 0)"),
            (
                ["--latency", "-3"],
                "Error: --latency must be a number of milliseconds above 0 and at most 2000, a range MIN..MAX, or auto (got '-3')"
            ),
            (
                ["--latency", "5000"],
                "Error: --latency must be a number of milliseconds above 0 and at most 2000, a range MIN..MAX, or auto (got '5000')"
            ),
            (["--sync", "-1"], "Error: --sync must be a number of milliseconds above 0 and at most 2000 (got '-1')"),
        ] {
            let result = try await TuttiBinary.run(
                ["connect", "stage:out", "foh:in"] + arguments + ["--no-discovery", "--peer", "127.0.0.1:9"])
            XCTAssertEqual(result.status, 64, "\(arguments)")
            XCTAssertEqual(result.error.split(separator: "\n").first.map(String.init), line, "\(arguments)")
        }
        let help = try await TuttiBinary.run(["connect", "--help"])
        XCTAssertTrue(help.output.contains("Frames per packet, 16–1024 (default 64)."), help.output)
    }

    func testARateOtherThanTheRunningOneNamesTheConnectionThatHoldsIt() async throws {
        let first = try await tutti("connect", "stage:click", "foh:in")
        XCTAssertEqual(first.status, 0, first.error)
        let id = try await XCTUnwrapAsync(await connections(of: stage).first?.id)
        let second = try await tutti("connect", "stage:click", "foh:mon", "--rate", "44100")
        XCTAssertEqual(second.status, 1)
        XCTAssertEqual(
            second.error,
            "tutti: cannot connect stage:click to foh:mon: stage:click is running at 48000 Hz for foh:in [\(id)]; connect at 48000 Hz, or disconnect that first\n"
        )
        let listed = try await tutti("ls")
        XCTAssertTrue(listed.output.contains("  sender   click  2ch  48000 Hz now (48000/44100/96000)  Tone 1000 Hz\n"), listed.output)
        XCTAssertTrue(listed.output.contains("  sender   out    8ch  48000/44100/96000 Hz  Tone 1000 Hz\n"), listed.output)
    }

    func testChannelsNotCarriedAreNoted() async throws {
        let result = try await tutti("connect", "stage:out", "foh:mon")
        XCTAssertEqual(result.status, 0, result.error)
        XCTAssertEqual(
            result.error,
            """
            note: stage:out has 8 channels and the stream carries 4 (channels 1–4); channels 5–8 are not sent

            """)
        let stereo = try await tutti("connect", "stage:click", "foh:mon")
        XCTAssertEqual(stereo.error, "note: foh:mon has 4 channels; the stream fills 2 of them, the rest stay silent\n")
    }

    func testAnOddRTPPortIsNoted() async throws {
        let result = try await tutti("connect", "stage:click", "rtp://127.0.0.1:5005")
        XCTAssertEqual(result.status, 0, result.error)
        XCTAssertEqual(
            result.error,
            "note: rtp://127.0.0.1:5005 is an odd port: RTP receivers listen on an even port and take RTCP on the next one (RFC 3550 §11); most will not play it\n"
        )
    }

    func testConnectAndDisconnectPrintOneJSONObject() async throws {
        let connected = try await tutti("connect", "stage:click", "foh:in", "--json")
        XCTAssertEqual(connected.status, 0, connected.error)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(connected.output.utf8)) as? [String: Any])
        XCTAssertEqual(object["status"] as? String, "connected")
        let listed = try await connections(of: stage)
        XCTAssertEqual((object["connection"] as? [String: Any])?["id"] as? String, listed.first?.id.rawValue)
        let again = try await tutti("connect", "stage:click", "foh:in", "--json")
        XCTAssertEqual(
            (try JSONSerialization.jsonObject(with: Data(again.output.utf8)) as? [String: Any])?["status"] as? String, "already-connected")

        let refused = try await tutti("connect", "stage:nope", "foh:in", "--json")
        XCTAssertEqual(refused.status, 1)
        XCTAssertEqual(
            refused.output,
            #"{"error":"stage has no port 'nope'; its sender ports: stage:out, stage:click","notes":[],"status":"error"}"# + "\n")

        let disconnected = try await tutti("disconnect", "stage:click", "foh:in", "--json")
        XCTAssertEqual(disconnected.status, 0, disconnected.error)
        XCTAssertEqual(disconnected.output, #"{"count":1,"status":"disconnected"}"# + "\n")
        let nothing = try await tutti("disconnect", "stage:click", "foh:in", "--json")
        XCTAssertEqual(nothing.status, 1)
        XCTAssertEqual(
            nothing.output, #"{"error":"cannot disconnect: peer foh has no connection from stage:click to foh:in","status":"error"}"# + "\n"
        )
    }

    func testVersion() async throws {
        let result = try await TuttiBinary.run(["--version"])
        XCTAssertEqual(result.status, 0)
        XCTAssertEqual(result.output, "\(TuttiVersion.description)\n")
        XCTAssertEqual(TuttiVersion.description, "0.1.0 (control protocol \(ControlProtocol.version))")
    }
}
