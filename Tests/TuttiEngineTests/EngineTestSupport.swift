#if canImport(Glibc)
import Glibc
#endif
import TuttiCore
@testable import TuttiEngine
import TuttiIO
import TuttiStream
import TuttiWire
import XCTest

/// A sender's packetizer, boxed (it is noncopyable) so that a test can keep one per stream.
final class SenderStream {
    var packetizer: Packetizer
    init(_ packetizer: consuming Packetizer) { self.packetizer = packetizer }
}

/// What the engine tests share: 64-frame periods, stereo L24 formats, ports and connections on loopback.
protocol EngineTestCase: XCTestCase {}

extension EngineTestCase {
    var periodFrames: Int { 64 }
    var captureClock: CaptureClockSource { CaptureClockSource(link: nil) }

    func format(sampleRate: Int = 48_000) -> StreamFormat {
        StreamFormat(
            sampleRate: sampleRate, channels: 2, sampleFormat: .l24, packetFrames: periodFrames,
            targetLatencyFrames: 4 * periodFrames)
    }

    func summary(_ number: Int, role: ConnectionRole, format: StreamFormat) -> ConnectionSummary {
        let hex = String(number, radix: 16)
        return ConnectionSummary(
            id: ConnectionID(String(repeating: "0", count: 16 - hex.count) + hex)!, role: role,
            source: PortReference(peer: "a", port: "out"), destination: PortReference(peer: "b", port: "in"), format: format,
            state: .playing)
    }

    func tonePort(_ name: String, engine: MediaEngine, sampleRates: [Int] = [48_000]) -> SenderPort {
        let configuration = PortConfiguration.toneSender(name: name, sampleRates: sampleRates)
        guard case .sender(let source) = configuration.role else { preconditionFailure() }
        return SenderPort(configuration: configuration, source: source, engine: engine, captureClock: captureClock)
    }

    func sendConnection(_ number: Int, to socket: UDPSocket, from port: SenderPort, format: StreamFormat) throws
        -> SendConnection
    {
        let address = try port.sendingSocket().destination(try UDPAddress(host: "127.0.0.1", port: socket.localPort))
        return try SendConnection(
            summary: summary(number, role: .sending, format: format), destination: address, peerEndpoint: nil,
            ssrc: UInt32(number + 1), payloadType: 96, maxPeriodFrames: periodFrames)
    }

    func receiveConnection(
        _ number: Int, ssrc: UInt32, format: StreamFormat, remoteClock: String? = nil
    ) throws -> ReceiveConnection {
        try ReceiveConnection(
            summary: summary(number, role: .receiving, format: format), ssrc: ssrc, payloadType: 96, peerEndpoint: nil,
            captureClock: .realtime, maxPeriodFrames: periodFrames, signalLossTimeout: .seconds(1), concealment: .repetition,
            outputSampleRate: 48_000, driftCompensation: remoteClock != nil, remoteClock: remoteClock)
    }

    /// Counts the datagrams waiting on `socket` (non-blocking).
    func drain(_ socket: UDPSocket) -> Int {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: StreamLimits.maxDatagramBytes, alignment: 8)
        defer { buffer.deallocate() }
        var count = 0
        while socket.receive(into: buffer, timeoutMilliseconds: count == 0 ? 1000 : 50) != nil { count += 1 }
        return count
    }
}
