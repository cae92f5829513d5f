import TuttiCodec
import TuttiCore
@testable import TuttiEngine
import TuttiIO
import TuttiProcess
import TuttiStream
import TuttiWire
import XCTest

/// A filter port on a hand-driven engine clock: a stream comes in, goes through the processor and goes out in
/// the same period, its capture time carried on less the processor's latency; parameters change live; the port
/// joins its clock with its first connection and leaves it after its last.
final class FilterPortTests: XCTestCase, EngineTestCase {
    private let inputSSRC: UInt32 = 1_000

    private func filterPort(_ processor: String, engine: MediaEngine) throws -> FilterPort {
        FilterPort(
            descriptor: PortDescriptor(name: "fx", title: "fx", kind: .filter, channels: 2, sampleRates: [48_000]),
            processor: try ProcessorSpecification(parsing: processor), engine: engine, captureClock: captureClock,
            outputClock: .realtime)
    }

    /// A filter running `processor` on a hand-driven engine, one stream in and one out to `listener`.
    private struct Rig {
        let engine: MediaEngine
        let format: StreamFormat
        let fx: FilterPort
        let input: ReceiveConnection
        let output: SendConnection
        let listener: UDPSocket
    }

    private func connectedFilter(_ processor: String) async throws -> Rig {
        let engine = MediaEngine(periodFrames: periodFrames, threaded: false)
        let format = format()
        let fx = try filterPort(processor, engine: engine)
        let input = try receiveConnection(1, ssrc: inputSSRC, format: format)
        let listener = try UDPSocket()
        let output = try SendConnection(
            summary: summary(2, role: .sending, format: format),
            destination: try fx.sendingSocket().destination(try UDPAddress(host: "127.0.0.1", port: listener.localPort)),
            peerEndpoint: nil, ssrc: 7, payloadType: 96, maxPeriodFrames: periodFrames)
        try await fx.add(input)
        try await fx.add(output)
        return Rig(engine: engine, format: format, fx: fx, input: input, output: output, listener: listener)
    }

    /// The packets a listener received: each one's capture time and its decoded samples.
    private func received(on socket: UDPSocket, format: StreamFormat) -> [(captureTime: Int64?, samples: [Float])] {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: StreamLimits.maxDatagramBytes, alignment: 8)
        defer { buffer.deallocate() }
        var packets: [(Int64?, [Float])] = []
        while let count = socket.receive(into: buffer, timeoutMilliseconds: packets.isEmpty ? 1_000 : 50) {
            guard let packet = try? RTPPacketView.decode(UnsafeRawBufferPointer(rebasing: buffer[0..<count])) else { continue }
            var samples = [Float](repeating: 0, count: format.packetFrames * format.channels)
            samples.withUnsafeMutableBufferPointer { samples in
                PCMCodec.decode(
                    UnsafeRawBufferPointer(rebasing: buffer[packet.payloadOffset..<(packet.payloadOffset + packet.payloadCount)]),
                    as: format.sampleFormat, into: samples)
            }
            packets.append((packet.header.captureTime, samples))
        }
        return packets
    }

    /// Runs `periods` periods, the input stream's packet of a 0.5 sine arriving just before each; `between` runs
    /// before each period with its number.
    private func run(
        _ periods: Int, clock: EngineClock, input: ReceiveConnection, format: StreamFormat, between: (Int) -> Void = { _ in }
    ) -> [Int64] {
        let stream = SenderStream(
            Packetizer(format: format, payloadType: 96, ssrc: inputSSRC, initialSequenceNumber: 0, initialTimestamp: 0))
        let tone = UnsafeMutableBufferPointer<Float>.allocate(capacity: periodFrames * 2)
        defer { tone.deallocate() }
        var periodTimes: [Int64] = []
        let periodNanoseconds = Int64(periodFrames) * 1_000_000_000 / 48_000
        for period in 0..<periods {
            let now = HostTime(nanoseconds: 1_000_000_000 + Int64(period) * periodNanoseconds)
            for frame in 0..<periodFrames {
                let value = Float(0.5 * sin(2 * Double.pi * 1_000 * Double(period * periodFrames + frame) / 48_000))
                tone[2 * frame] = value
                tone[2 * frame + 1] = value
            }
            stream.packetizer.append(UnsafeBufferPointer(tone), frames: periodFrames, captureTime: now.nanoseconds) { datagram in
                input.receiver.accept(datagram: datagram, arrival: now)
            }
            between(period)
            clock.runPeriod(at: now)
            periodTimes.append(now.nanoseconds)
        }
        return periodTimes
    }

    /// Checks that packet `index` carries the input captured at its capture time, times `gain`: the tone's
    /// frames from the one the capture time names (the input's packets were stamped with their period's time,
    /// frame 0 at 1 s).
    private func assertCarriesTheInputOfItsCaptureTime(
        _ packets: [(captureTime: Int64?, samples: [Float])], _ index: Int, gain: Double, file: StaticString = #filePath,
        line: UInt = #line
    ) throws {
        let carried = try XCTUnwrap(packets[index].captureTime, file: file, line: line)
        let firstFrame = Int((Double(carried - 1_000_000_000) * 48_000 / 1e9).rounded())
        for frame in 0..<periodFrames {
            let expected = gain * 0.5 * sin(2 * Double.pi * 1_000 * Double(firstFrame + frame) / 48_000)
            XCTAssertEqual(
                Double(packets[index].samples[2 * frame]), expected, accuracy: 1e-4, "packet \(index) frame \(frame)", file: file,
                line: line)
        }
    }

    private func peak(_ packets: ArraySlice<(captureTime: Int64?, samples: [Float])>) -> Float {
        packets.map { $0.samples.map(abs).max() ?? 0 }.max() ?? 0
    }

    func testAGainFilterSendsItsInputOnAtMinusSixDecibelsInTheSamePeriodWithItsCaptureTime() async throws {
        let rig = try await connectedFilter("gain,db=-6")
        let (engine, format, fx, input, output, listener) = (rig.engine, rig.format, rig.fx, rig.input, rig.output, rig.listener)
        XCTAssertEqual(engine.allClocks.count, 1)
        XCTAssertEqual(fx.activeSampleRate, 48_000)
        let clock = try engine.clock(sampleRate: 48_000)

        let periodTimes = run(300, clock: clock, input: input, format: format)
        let packets = received(on: listener, format: format)
        XCTAssertEqual(packets.count, 300, "one packet out per period")
        XCTAssertEqual(clock.fanOut.pointee.systemCalls, 300, "sent with the period's other packets, one sendmmsg each")
        // After the input's buffer has filled (its 4-packet target), the tone comes out at half its level.
        XCTAssertEqual(Double(peak(packets[100...])), 0.5 * pow(10, -6.0 / 20), accuracy: 0.002)
        // The capture time carried on is the input's: each packet holds the input captured then, at −6 dB, a
        // steady buffer's latency before the period it left in.
        for index in 150..<300 { try assertCarriesTheInputOfItsCaptureTime(packets, index, gain: pow(10, -6.0 / 20)) }
        let delays = Set((150..<300).map { periodTimes[$0] - (packets[$0].captureTime ?? 0) })
        XCTAssertEqual(delays.count, 1, "one steady latency: \(delays)")
        await fx.remove(input)
        XCTAssertEqual(fx.activeSampleRate, 48_000, "still running for its outgoing connection")
        await fx.remove(output)
        XCTAssertNil(fx.activeSampleRate, "left its clock after the last connection")
        XCTAssertFalse(clock.isRunning)
    }

    func testAParameterSetLiveTakesEffectAtTheNextPeriodAndABadOneChangesNothing() async throws {
        let rig = try await connectedFilter("gain,db=0")
        let (engine, format, fx, input, listener) = (rig.engine, rig.format, rig.fx, rig.input, rig.listener)
        XCTAssertThrowsError(try fx.set("db", to: "40")) { error in
            XCTAssertEqual((error as? ProcessorError)?.message, "gain db must be between -96 and 24 dB (got 40)")
        }
        XCTAssertThrowsError(try fx.set("volume", to: "1"))
        XCTAssertEqual(fx.specification.description, "gain,db=0")
        _ = run(400, clock: try engine.clock(sampleRate: 48_000), input: input, format: format) { period in
            if period == 200 { try? fx.set("db", to: "-20") }
        }
        XCTAssertEqual(fx.specification.description, "gain,db=-20")
        let packets = received(on: listener, format: format)
        XCTAssertEqual(packets.count, 400)
        XCTAssertEqual(Double(peak(packets[100..<200])), 0.5, accuracy: 0.002)
        // After the 10 ms glide (8 periods), −20 dB.
        XCTAssertEqual(Double(peak(packets[210...])), 0.05, accuracy: 0.001)
        await fx.shutdown()
    }

    func testALimiterReportsItsLookaheadAndTheCarriedCaptureTimeIncludesIt() async throws {
        let rig = try await connectedFilter("limiter,ceiling=-12")
        let (engine, format, fx, input, listener) = (rig.engine, rig.format, rig.fx, rig.input, rig.listener)
        XCTAssertEqual(fx.latencyFrames, 72)
        _ = run(300, clock: try engine.clock(sampleRate: 48_000), input: input, format: format)
        let packets = received(on: listener, format: format)
        XCTAssertLessThanOrEqual(peak(packets[...]), Float(pow(10, -12.0 / 20)) * 1.000_01)
        // 72 frames later than a plain filter would carry: the packet holds the input of its capture time, at
        // the ceiling's gain.
        for index in 200..<300 { try assertCarriesTheInputOfItsCaptureTime(packets, index, gain: pow(10, -12.0 / 20) / 0.5) }
        await fx.shutdown()
        XCTAssertEqual(fx.latencyFrames, 0, "idle again: no processor")
    }
}
