import TuttiCore
import TuttiSession
import TuttiWire
import XCTest

/// The receiver's choice of stream format, and every refusal with the exact line the user sees.
final class NegotiationTests: XCTestCase {
    private let source = PortReference(peer: "stage", port: "out")
    private let destination = PortReference(peer: "foh", port: "in")

    private func offer(
        channels: Int = 2, sampleRates: [Int] = [48_000, 44_100], sampleFormats: [SampleFormat] = [.l24, .l16],
        options: ConnectOptions = ConnectOptions()
    ) -> StreamOffer {
        StreamOffer(
            connectionID: ConnectionID("0123456789abcdef")!, senderPeerID: PeerID(String(repeating: "a", count: 32))!,
            source: source, destination: destination, channels: channels, sampleRates: sampleRates,
            sampleFormats: sampleFormats, options: options, captureClock: .realtime, senderControlPort: 7_400)
    }

    private func receiver(
        kind: PortKind = .receiver, channels: Int = 8, sampleRates: [Int] = [96_000, 48_000, 44_100],
        sampleFormats: [SampleFormat] = [.l24, .l16], activeSampleRate: Int? = nil
    ) -> ReceiverCapabilities {
        ReceiverCapabilities(
            port: PortDescriptor(
                name: "in", title: "Main in", kind: kind, channels: channels, sampleRates: sampleRates, sampleFormats: sampleFormats),
            activeSampleRate: activeSampleRate)
    }

    private func agreed(
        _ offer: StreamOffer, _ receiver: ReceiverCapabilities, file: StaticString = #filePath, line: UInt = #line
    ) -> StreamFormat? {
        switch Negotiation.chooseFormat(offer: offer, receiver: receiver) {
        case .success(let format):
            // Whatever negotiation agrees on must pass the wire validation of the answer.
            XCTAssertNoThrow(try ControlValidation.check(format), file: file, line: line)
            return format
        case .failure(let refusal):
            XCTFail("refused: \(refusal.message)", file: file, line: line)
            return nil
        }
    }

    private func refusal(
        _ offer: StreamOffer, _ receiver: ReceiverCapabilities, file: StaticString = #filePath, line: UInt = #line
    ) -> NegotiationRefusal? {
        switch Negotiation.chooseFormat(offer: offer, receiver: receiver) {
        case .success(let format):
            XCTFail("agreed on \(format)", file: file, line: line)
            return nil
        case .failure(let refusal): return refusal
        }
    }

    // MARK: Agreement

    func testDefaults() {
        let format = agreed(offer(), receiver())
        XCTAssertEqual(
            format, StreamFormat(sampleRate: 48_000, channels: 2, sampleFormat: .l24, packetFrames: 64, targetLatencyFrames: 192))
        XCTAssertEqual(format?.description, "L24/48000/2ch, 64 frames/packet, target latency 4.00ms")
    }

    func testAnAdaptiveRangeStartsAtTheDefaultInsideIt() {
        let format = agreed(offer(options: ConnectOptions(latencyFloorMilliseconds: 2, latencyCeilingMilliseconds: 20)), receiver())
        XCTAssertEqual(format?.adaptiveLatencyFrames, 96...960)
        XCTAssertEqual(format?.targetLatencyFrames, 192)
        XCTAssertEqual(format?.description, "L24/48000/2ch, 64 frames/packet, target latency 4.00ms (adaptive 2.00–20.00ms)")
        // The floor is at least one packet (1.33 ms).
        let low = agreed(offer(options: ConnectOptions(latencyFloorMilliseconds: 0.5, latencyCeilingMilliseconds: 20)), receiver())
        XCTAssertEqual(low?.adaptiveLatencyFrames, 64...960)
        let high = agreed(offer(options: ConnectOptions(latencyFloorMilliseconds: 10, latencyCeilingMilliseconds: 40)), receiver())
        XCTAssertEqual(high?.targetLatencyFrames, 480, "starts at the floor when the default is below it")
    }

    func testAdaptiveLatencyIsRefusedWithSynchronizedPlayoutOrBelowOnePacket() {
        let synchronized = ConnectOptions(synchronizedLatencyMilliseconds: 20, latencyFloorMilliseconds: 2, latencyCeilingMilliseconds: 20)
        XCTAssertEqual(
            refusal(offer(options: synchronized), receiver())?.message,
            "synchronized playout needs a fixed latency: use --latency MS with --sync, not a range")
        let tiny = ConnectOptions(packetFrames: 128, latencyMilliseconds: 5.34, latencyFloorMilliseconds: 1, latencyCeilingMilliseconds: 2)
        XCTAssertEqual(
            refusal(offer(options: tiny), receiver())?.message,
            "latency range 1–2 ms is below one packet (2.67 ms at 128 frames, 48 kHz): the lowest is 2.67 ms; raise the ceiling or lower --frames"
        )
    }

    func testRateIsFirstCommonInReceiversOrder() {
        XCTAssertEqual(agreed(offer(sampleRates: [48_000, 44_100]), receiver(sampleRates: [44_100, 48_000]))?.sampleRate, 44_100)
        XCTAssertEqual(agreed(offer(sampleRates: [44_100, 48_000]), receiver(sampleRates: [48_000, 44_100]))?.sampleRate, 48_000)
        XCTAssertEqual(agreed(offer(sampleRates: [8_000, 96_000]), receiver())?.sampleRate, 96_000)
    }

    func testChannelsAreTheSmallerEnd() {
        XCTAssertEqual(agreed(offer(channels: 2), receiver(channels: 8))?.channels, 2)
        XCTAssertEqual(agreed(offer(channels: 6), receiver(channels: 1))?.channels, 1)
    }

    func testSampleFormatIsReceiversFirstSupported() {
        XCTAssertEqual(agreed(offer(sampleFormats: [.l16, .l24]), receiver(sampleFormats: [.l24, .l16]))?.sampleFormat, .l24)
        XCTAssertEqual(agreed(offer(sampleFormats: [.l24, .l16]), receiver(sampleFormats: [.l16, .l24]))?.sampleFormat, .l16)
        XCTAssertEqual(agreed(offer(sampleFormats: [.l16]), receiver())?.sampleFormat, .l16)
    }

    func testExplicitOptionsAreHonoured() {
        let options = ConnectOptions(sampleRate: 44_100, channels: 1, sampleFormat: .l16, packetFrames: 128, latencyMilliseconds: 10)
        XCTAssertEqual(
            agreed(offer(options: options), receiver()),
            StreamFormat(sampleRate: 44_100, channels: 1, sampleFormat: .l16, packetFrames: 128, targetLatencyFrames: 441))
    }

    func testPortAlreadyRunningAt44100ForcesIt() {
        let format = agreed(offer(sampleRates: [48_000, 44_100]), receiver(sampleRates: [48_000, 44_100], activeSampleRate: 44_100))
        XCTAssertEqual(format?.sampleRate, 44_100)
        XCTAssertEqual(format?.targetLatencyFrames, 176)  // 4 ms × 44.1 = 176.4, rounded
        // An explicit request for the running rate is fine too.
        XCTAssertEqual(
            agreed(offer(options: ConnectOptions(sampleRate: 44_100)), receiver(activeSampleRate: 44_100))?.sampleRate, 44_100)
    }

    func testLargePacketsRaiseTheDefaultLatencyToOnePacketPlusTwoMilliseconds() {
        // Mono, so 256 frames of L24 (768 bytes) fit a packet: 5.33 ms, and 2 ms of slack.
        let format = agreed(offer(channels: 1, options: ConnectOptions(packetFrames: 256)), receiver())
        XCTAssertEqual(format?.packetFrames, 256)
        XCTAssertEqual(format?.targetLatencyFrames, 256 + 96)
    }

    func testLatencyOfExactlyOnePacketIsAccepted() {
        let onePacket = 64 * 1_000 / 48_000.0
        let format = agreed(offer(options: ConnectOptions(latencyMilliseconds: onePacket)), receiver())
        XCTAssertEqual(format?.targetLatencyFrames, 64)
        let large = agreed(offer(options: ConnectOptions(packetFrames: 128, latencyMilliseconds: 128 * 1_000 / 48_000.0)), receiver())
        XCTAssertEqual(large?.targetLatencyFrames, 128)
        XCTAssertEqual(
            agreed(offer(options: ConnectOptions(latencyMilliseconds: 2_000)), receiver())?.targetLatencyFrames, 96_000)
    }

    func testFilterPortsMayReceive() {
        XCTAssertNotNil(agreed(offer(), receiver(kind: .filter)))
    }

    func testLargestPacketThatFits() {
        // 8 channels of L24: 58 frames × 24 bytes = 1392 bytes.
        XCTAssertEqual(
            agreed(offer(channels: 8, options: ConnectOptions(packetFrames: 58)), receiver(channels: 8))?.payloadBytes, 1_392)
    }

    // MARK: Refusals, each with its exact message

    func testSenderPortAsDestinationIsWrongDirection() {
        let refusal = refusal(offer(), receiver(kind: .sender))
        XCTAssertEqual(refusal?.code, .wrongDirection)
        XCTAssertEqual(refusal?.message, "foh:in is a sender port and cannot receive audio; choose a receiver port")
        XCTAssertEqual(
            refusal?.failure, ControlFailure(.wrongDirection, "foh:in is a sender port and cannot receive audio; choose a receiver port"))
    }

    func testWithoutACommonRateTheStreamRunsAtTheSendersRateAndTheReceiverConverts() {
        let receiver = receiver(sampleRates: [96_000, 192_000])
        let format = agreed(offer(sampleRates: [48_000, 44_100]), receiver)
        XCTAssertEqual(format?.sampleRate, 48_000)
        XCTAssertEqual(format.map { Negotiation.deviceRate(for: $0, receiver: receiver) }, 96_000)
    }

    func testRequestedRateTheSenderCannotProduce() {
        let refusal = refusal(offer(options: ConnectOptions(sampleRate: 96_000)), receiver())
        XCTAssertEqual(refusal?.code, .noCommonFormat)
        XCTAssertEqual(refusal?.message, "stage:out cannot send at 96000 Hz (it offers 48000, 44100 Hz)")
    }

    func testARequestedRateTheReceiverDoesNotRunAtIsConverted() {
        let receiver = receiver(sampleRates: [48_000, 44_100])
        let format = agreed(offer(sampleRates: [48_000, 44_100, 32_000], options: ConnectOptions(sampleRate: 32_000)), receiver)
        XCTAssertEqual(format?.sampleRate, 32_000)
        XCTAssertEqual(format.map { Negotiation.deviceRate(for: $0, receiver: receiver) }, 48_000)
    }

    func testAReceiverAlreadyRunningAtAnotherRateConvertsToIt() {
        let at44 = receiver(activeSampleRate: 44_100)
        let requested = agreed(offer(options: ConnectOptions(sampleRate: 48_000)), at44)
        XCTAssertEqual(requested?.sampleRate, 48_000)
        XCTAssertEqual(requested.map { Negotiation.deviceRate(for: $0, receiver: at44) }, 44_100)
        let at96 = receiver(activeSampleRate: 96_000)
        let unrequested = agreed(offer(sampleRates: [48_000, 44_100]), at96)
        XCTAssertEqual(unrequested?.sampleRate, 48_000)
        XCTAssertEqual(unrequested.map { Negotiation.deviceRate(for: $0, receiver: at96) }, 96_000)
    }

    func testTooManyChannelsRequested() {
        let refusal = refusal(offer(channels: 2, options: ConnectOptions(channels: 4)), receiver(channels: 8))
        XCTAssertEqual(refusal?.code, .invalidOption)
        XCTAssertEqual(refusal?.message, "cannot stream 4 channels: stage:out has 2, foh:in has 8")
        let receiverSide = self.refusal(offer(channels: 8, options: ConnectOptions(channels: 4)), receiver(channels: 2))
        XCTAssertEqual(receiverSide?.message, "cannot stream 4 channels: stage:out has 8, foh:in has 2")
    }

    func testRequestedFormatNotSupportedByBoth() {
        let refusal = refusal(offer(options: ConnectOptions(sampleFormat: .l16)), receiver(sampleFormats: [.l24]))
        XCTAssertEqual(refusal?.code, .noCommonFormat)
        XCTAssertEqual(refusal?.message, "L16 is not supported by both ends (stage:out: L24, L16; foh:in: L24)")
    }

    func testNoCommonSampleFormat() {
        let refusal = refusal(offer(sampleFormats: [.l16]), receiver(sampleFormats: [.l24]))
        XCTAssertEqual(refusal?.code, .noCommonFormat)
        XCTAssertEqual(refusal?.message, "no common sample format: stage:out sends L16, foh:in accepts L24")
    }

    func testPacketSizeOutOfRange() {
        for frames in [8, 15, 1_025, 4_096] {
            let refusal = refusal(offer(options: ConnectOptions(packetFrames: frames)), receiver())
            XCTAssertEqual(refusal?.code, .invalidOption)
            XCTAssertEqual(refusal?.message, "packet size \(frames) frames is outside 16–1024")
        }
    }

    func testPayloadOverTheMTUBudget() {
        let refusal = refusal(offer(channels: 8, options: ConnectOptions(packetFrames: 128)), receiver(channels: 8))
        XCTAssertEqual(refusal?.code, .invalidOption)
        XCTAssertEqual(refusal?.message, "packets of 128 frames × 8 channels of L24 exceed 1400 bytes; use at most 58 frames")
        let l16 = self.refusal(
            offer(channels: 8, options: ConnectOptions(sampleFormat: .l16, packetFrames: 128)), receiver(channels: 8))
        XCTAssertEqual(l16?.message, "packets of 128 frames × 8 channels of L16 exceed 1400 bytes; use at most 87 frames")
    }

    func testLatencyBelowOnePacketIsRefusedWithTheLowestPossible() {
        let refusal = refusal(offer(channels: 1, options: ConnectOptions(packetFrames: 256, latencyMilliseconds: 5)), receiver())
        XCTAssertEqual(refusal?.code, .invalidOption)
        XCTAssertEqual(
            refusal?.message,
            "latency 5 ms is below one packet (5.33 ms at 256 frames, 48 kHz): the lowest is 5.33 ms; raise --latency or lower --frames")
        let fractional = self.refusal(offer(options: ConnectOptions(latencyMilliseconds: 1)), receiver())
        XCTAssertEqual(
            fractional?.message,
            "latency 1 ms is below one packet (1.33 ms at 64 frames, 48 kHz): the lowest is 1.33 ms; raise --latency or lower --frames")
        let cd = self.refusal(
            offer(sampleRates: [44_100], options: ConnectOptions(packetFrames: 128, latencyMilliseconds: 2.5)),
            receiver(sampleRates: [44_100]))
        XCTAssertEqual(
            cd?.message,
            "latency 2.5 ms is below one packet (2.9 ms at 128 frames, 44.1 kHz): the lowest is 2.9 ms; raise --latency or lower --frames")
        // Two packets were the lowest before; 2.5 ms at 64 frames is now a packet and 1.17 ms of slack.
        XCTAssertEqual(agreed(offer(options: ConnectOptions(latencyMilliseconds: 2.5)), receiver())?.targetLatencyFrames, 120)
    }

    func testLatencyAboveTwoSeconds() {
        let refusal = refusal(offer(options: ConnectOptions(latencyMilliseconds: 2_500)), receiver())
        XCTAssertEqual(refusal?.code, .invalidOption)
        XCTAssertEqual(refusal?.message, "latency 2500 ms exceeds 2000 ms")
        let justOver = self.refusal(offer(options: ConnectOptions(latencyMilliseconds: 2_000.25)), receiver())
        XCTAssertEqual(justOver?.message, "latency 2000.25 ms exceeds 2000 ms")
    }

    // MARK: Separate tracks

    private func separate(latency: Double = 12) -> ReceiverCapabilities {
        var capabilities = receiver()
        capabilities.port = capabilities.port.separate(tracks: 2, latencyMilliseconds: latency)
        return capabilities
    }

    func testASeparateTrackPlaysAtThePortsLatencyAfterCapture() {
        let format = agreed(offer(), separate())
        XCTAssertEqual(format?.synchronizedLatencyNanoseconds, 12_000_000, "synchronized playout at the port's latency")
        XCTAssertEqual(format?.targetLatencyFrames, 576, "the buffer holds what waits for its playout time")
        let same = agreed(offer(options: ConnectOptions(synchronizedLatencyMilliseconds: 12)), separate())
        XCTAssertEqual(same?.synchronizedLatencyNanoseconds, 12_000_000, "--sync at the port's latency is no conflict")
        let low = agreed(offer(), separate(latency: 3))
        XCTAssertEqual(low?.synchronizedLatencyNanoseconds, 3_000_000, "a port latency under the default buffer's: the buffer follows it")
    }

    func testASeparateTrackRefusesAnotherSyncALatencyRangeAndALatencyBelowAPacket() {
        XCTAssertEqual(
            refusal(offer(options: ConnectOptions(synchronizedLatencyMilliseconds: 20)), separate())?.message,
            "foh:in plays every track 12 ms after capture so that they line up; --sync 20 would put this one off the others: leave --sync out"
        )
        XCTAssertEqual(
            refusal(offer(options: ConnectOptions(latencyFloorMilliseconds: 2, latencyCeilingMilliseconds: 20)), separate())?.message,
            "foh:in plays its separate tracks at a fixed 12 ms after capture; leave out the latency range")
        XCTAssertEqual(
            refusal(offer(options: ConnectOptions(packetFrames: 200)), separate(latency: 4))?.message,
            "foh:in plays its tracks 4 ms after capture, less than one packet (4.17 ms at 200 frames, 48 kHz); lower --frames or raise the port's latency="
        )
    }
}
