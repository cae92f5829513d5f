import Foundation
import TuttiAnalysis
import TuttiCore
import TuttiIO
import TuttiPeer
import TuttiTesting
import TuttiWire
import XCTest

/// A standard RTP receiver plays Tutti streams: ffmpeg records a 1 kHz tone port on 127.0.0.1 from the SDP
/// that `tutti connect … rtp://` prints (the same `SessionDescription` of the connection), and the
/// recording is analysed. Only loopback traffic; each case takes its recording time plus about half a second.
///
/// What this established about ffmpeg 5.1 (Debian 12): its SDP/RTP demuxer takes L16, L24 and Opus
/// (`opus/48000/2`), accepts `a=ptime:1.333`, and skips Tutti's RFC 8285 capture-time extension, which no
/// `a=extmap` declares.
final class StandardReceiverInteropTests: XCTestCase {
    private func ffmpeg() throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":") where FileManager.default.isExecutableFile(atPath: "\(directory)/ffmpeg") {
            return "\(directory)/ffmpeg"
        }
        throw XCTSkip("ffmpeg is not installed (scripts/setup installs it), so playback by a standard RTP receiver is not checked")
    }

    /// An even UDP port whose odd neighbour (where ffmpeg listens for RTCP) is free as well.
    private func freePortPair() throws -> UInt16 {
        for _ in 0..<64 {
            let port = UInt16.random(in: 20_000...40_000) & ~1
            guard let rtp = try? UDPSocket(port: port) else { continue }
            defer { rtp.close() }
            guard let rtcp = try? UDPSocket(port: port + 1) else { continue }
            rtcp.close()
            return port
        }
        throw XCTSkip("no free pair of UDP ports for ffmpeg")
    }

    /// Streams a 1 kHz tone port to ffmpeg with `options` and returns the connection and what ffmpeg recorded
    /// in `seconds` (`codec`: ffmpeg's WAV encoder).
    ///
    /// - Parameter srtpKey: stream SRTP (AES_CM_128_HMAC_SHA1_80) with this key, which the SDP's `a=crypto`
    ///   line gives ffmpeg.
    private func record(
        _ options: ConnectOptions, seconds: Double, codec: String = "pcm_s16le", srtpKey: [UInt8]? = nil,
        file: StaticString = #filePath, line: UInt = #line
    ) async throws -> (ConnectionSummary, WAVAudio) {
        let ffmpeg = try ffmpeg()
        var lab = LoopbackPeers()
        let sender = try await lab.start(
            "a", ports: [.toneSender(name: "out", frequency: 1000, amplitude: 0.5, sampleRates: [44_100, 48_000])],
            rtpAllowed: ["127.0.0.1"])
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tutti-interop-\(UInt32.random(in: 0 ... .max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        let destination = RTPDestination(address: .ipv4(0x7F00_0001), port: try freePortPair())
        var request = ConnectRequest(source: PortReference(peer: "a", port: "out"), rtpDestination: destination, options: options)
        request.rtpKey = srtpKey.map { MediaKeying(suite: "AES_CM_128_HMAC_SHA1_80", key: $0) }
        let response = try await TestControl.send(.connect(request), to: sender.endpoint, timeout: .seconds(5))
        guard case .connected(let summary) = response else {
            await lab.stopAll()
            throw ControlFailure(.internalError, "not connected: \(response)")
        }
        let sdp = try XCTUnwrap(
            SessionDescription(connection: summary, originHost: sender.endpoint.host, srtpKey: srtpKey), file: file, line: line)
        let sdpFile = directory.appendingPathComponent("stream.sdp")
        let wavFile = directory.appendingPathComponent("out.wav")
        try sdp.text.write(to: sdpFile, atomically: true, encoding: .utf8)

        let (status, _, errors) = try await runChildProcess(
            ffmpeg,
            [
                "-hide_banner", "-nostdin", "-loglevel", "error", "-protocol_whitelist", "file,udp,rtp", "-i", sdpFile.path,
                "-t", String(seconds), "-c:a", codec, "-y", wavFile.path,
            ], timeout: .seconds(seconds + 8))
        _ = try await TestControl.send(.disconnect(DisconnectRequest(connectionID: summary.id)), to: sender.endpoint)
        await lab.stopAll()
        XCTAssertEqual(status, 0, "ffmpeg: \(errors)", file: file, line: line)
        return (summary, try WAVAudio.read(path: wavFile.path))
    }

    /// The tone analysis of one channel of a recording, printed for the test log.
    private func analyze(_ audio: WAVAudio, channel: Int, _ label: String) -> ToneReport {
        let report = ToneAnalysis.analyze(audio.channel(channel), sampleRate: audio.sampleRate)
        print(
            "ffmpeg \(label) channel \(channel): \(report.frequency) Hz, rms \(report.rms), active \(report.activeSeconds) s, "
                + "gaps \(report.gaps.count), discontinuities \(report.discontinuities)")
        return report
    }

    func testFFmpegPlaysTheDefaultL16StreamWithoutAGap() async throws {
        let (summary, audio) = try await record(ConnectOptions(), seconds: 2)
        XCTAssertEqual(summary.format.sampleFormat, .l16)
        XCTAssertEqual(audio.sampleRate, 48_000)
        XCTAssertEqual(audio.channels, 2)
        XCTAssertEqual(audio.frames, 96_000, "2 s at 48 kHz")
        for channel in 0..<2 {
            let report = analyze(audio, channel: channel, "L16")
            XCTAssertEqual(report.frequency, 1000, accuracy: 0.5)
            XCTAssertEqual(report.rms, 0.5 / 2.squareRoot(), accuracy: 0.01)
            XCTAssertEqual(report.gaps, [], "no packet missing")
            XCTAssertEqual(report.discontinuities, 0, "no packet missing, repeated or out of order")
            XCTAssertEqual(report.activeSeconds, 2, accuracy: 0.01)
        }
    }

    func testFFmpegPlaysAnOpusStream() async throws {
        let settings = OpusSettings(frameDuration: .tenMilliseconds, bitrate: 128_000)
        let (summary, audio) = try await record(ConnectOptions(sampleFormat: .opus, opus: settings), seconds: 2)
        XCTAssertEqual(summary.format.sampleFormat, .opus)
        XCTAssertEqual(audio.sampleRate, 48_000)
        XCTAssertEqual(audio.channels, 2)
        let report = analyze(audio, channel: 0, "Opus")
        XCTAssertEqual(report.frequency, 1000, accuracy: 1)
        XCTAssertEqual(report.rms, 0.5 / 2.squareRoot(), accuracy: 0.05)
        XCTAssertGreaterThan(report.activeSeconds, 1.9)
    }

    /// ffmpeg reads the SDES key from the SDP's `a=crypto` line (RFC 4568) and decrypts the stream.
    func testFFmpegPlaysAnSRTPStreamFromTheKeyInTheSDP() async throws {
        let key = (0..<30).map { _ in UInt8.random(in: 0 ... .max) }
        let (summary, audio) = try await record(ConnectOptions(), seconds: 2, srtpKey: key)
        XCTAssertEqual(summary.srtp, "AES_CM_128_HMAC_SHA1_80")
        XCTAssertEqual(audio.frames, 96_000, "2 s at 48 kHz")
        for channel in 0..<2 {
            let report = analyze(audio, channel: channel, "SRTP L16")
            XCTAssertEqual(report.frequency, 1000, accuracy: 0.5)
            XCTAssertEqual(report.rms, 0.5 / 2.squareRoot(), accuracy: 0.01)
            XCTAssertEqual(report.gaps, [], "no packet missing")
            XCTAssertEqual(report.discontinuities, 0)
        }
    }

    func testFFmpegPlaysAnL24Stream() async throws {
        let (summary, audio) = try await record(ConnectOptions(channels: 1, sampleFormat: .l24), seconds: 1, codec: "pcm_s24le")
        XCTAssertEqual(summary.format.sampleFormat, .l24)
        XCTAssertEqual(audio.channels, 1)
        XCTAssertEqual(audio.frames, 48_000)
        let report = analyze(audio, channel: 0, "L24")
        XCTAssertEqual(report.frequency, 1000, accuracy: 0.5)
        XCTAssertEqual(report.gaps, [])
        XCTAssertEqual(report.discontinuities, 0)
    }
}
