import TuttiCore
import TuttiSession
import TuttiWire
import XCTest

/// The sender's side of negotiation: the offer it makes, the rates its port can take now, and the answers it
/// accepts, each refusal with the exact line the user sees.
final class SenderNegotiationTests: XCTestCase {
    private let source = PortReference(peer: "stage", port: "out")
    private let destination = PortReference(peer: "foh", port: "in")
    private let port = PortDescriptor(
        name: "out", title: "Tone", kind: .sender, channels: 2, sampleRates: [48_000, 44_100], sampleFormats: [.l24, .l16, .opus])
    private let id = ConnectionID("0123456789abcdef")!
    private let peerID = PeerID(String(repeating: "a", count: 32))!

    private func offer(currentRates: [Int] = [48_000, 44_100]) -> StreamOffer {
        Negotiation.offer(
            id: id, peerID: peerID, source: source, destination: destination, port: port, currentRates: currentRates,
            senderClock: "jack", options: ConnectOptions(channels: 1), captureClock: .linkGhost, controlPort: 7_400)
    }

    private func answer(_ format: StreamFormat) -> StreamAnswer {
        StreamAnswer(connectionID: id, format: format, mediaPort: 5_004, ssrc: 7, payloadType: 96)
    }

    private func format(
        rate: Int = 48_000, channels: Int = 2, sampleFormat: SampleFormat = .l24, opus: OpusSettings? = nil
    ) -> StreamFormat {
        StreamFormat(
            sampleRate: rate, channels: channels, sampleFormat: sampleFormat, packetFrames: opus == nil ? 64 : 480,
            targetLatencyFrames: 192, opus: opus)
    }

    private func refusal(_ result: Result<StreamFormat, NegotiationRefusal>) -> NegotiationRefusal? {
        if case .failure(let refusal) = result { return refusal }
        return nil
    }

    func testTheOfferCarriesCurrentRatesCaptureClockAndDeviceClock() {
        let offer = offer(currentRates: [44_100])
        XCTAssertEqual(offer.connectionID, id)
        XCTAssertEqual(offer.senderPeerID, peerID)
        XCTAssertEqual(offer.source, source)
        XCTAssertEqual(offer.destination, destination)
        XCTAssertEqual(offer.channels, 2)
        XCTAssertEqual(offer.sampleRates, [44_100])
        XCTAssertEqual(offer.sampleFormats, [.l24, .l16, .opus])
        XCTAssertEqual(offer.options, ConnectOptions(channels: 1))
        XCTAssertEqual(offer.captureClock, .linkGhost)
        XCTAssertEqual(offer.senderControlPort, 7_400)
        XCTAssertEqual(offer.senderClock, "jack")
        XCTAssertEqual(offer.remoteClockKey, "\(peerID.rawValue)/jack")
    }

    func testAnAnswerInsideTheOfferIsAccepted() {
        XCTAssertEqual(try Negotiation.acceptAnswer(answer(format()), to: offer(), port: port).get(), format())
        XCTAssertEqual(
            try Negotiation.acceptAnswer(answer(format(rate: 44_100, channels: 1, sampleFormat: .l16)), to: offer(), port: port).get(),
            format(rate: 44_100, channels: 1, sampleFormat: .l16))
        let opus = format(sampleFormat: .opus, opus: .lan)
        XCTAssertEqual(try Negotiation.acceptAnswer(answer(opus), to: offer(), port: port).get(), opus)
    }

    func testAnAnswerAtARateNotOfferedIsRefused() {
        let refused = refusal(Negotiation.acceptAnswer(answer(format(rate: 44_100)), to: offer(currentRates: [48_000]), port: port))
        XCTAssertEqual(refused?.code, .noCommonFormat)
        XCTAssertEqual(refused?.message, "foh chose a format outside the offer: \(format(rate: 44_100))")
    }

    func testAnAnswerWithMoreChannelsThanThePortIsRefused() {
        XCTAssertEqual(refusal(Negotiation.acceptAnswer(answer(format(channels: 3)), to: offer(), port: port))?.code, .noCommonFormat)
        XCTAssertEqual(refusal(Negotiation.acceptAnswer(answer(format(channels: 0)), to: offer(), port: port))?.code, .noCommonFormat)
    }

    func testAnAnswerInAFormatThePortCannotSendIsRefused() {
        let l16Only = PortDescriptor(name: "out", title: "", kind: .sender, channels: 2, sampleRates: [48_000], sampleFormats: [.l16])
        XCTAssertEqual(
            refusal(Negotiation.acceptAnswer(answer(format(sampleFormat: .l24)), to: offer(), port: l16Only))?.code, .noCommonFormat)
        // Opus only at 48 kHz with 1 or 2 channels.
        let opus441 = format(rate: 44_100, sampleFormat: .opus, opus: .lan)
        XCTAssertNotNil(refusal(Negotiation.acceptAnswer(answer(opus441), to: offer(), port: port)))
        let wide = PortDescriptor(name: "out", title: "", kind: .sender, channels: 4, sampleRates: [48_000], sampleFormats: [.opus])
        XCTAssertNotNil(
            refusal(Negotiation.acceptAnswer(answer(format(channels: 3, sampleFormat: .opus, opus: .lan)), to: offer(), port: wide)))
    }

    func testARateThePortOffersNowIsAccepted() {
        XCTAssertNil(Negotiation.senderRate(44_100, source: source, port: port, currentRates: [48_000, 44_100], runningFor: nil))
    }

    func testARateThePortNeverOffersIsRefusedWithItsRates() {
        let refused = Negotiation.senderRate(96_000, source: source, port: port, currentRates: [48_000, 44_100], runningFor: nil)
        XCTAssertEqual(refused, NegotiationRefusal(.noCommonFormat, "stage:out cannot send at 96000 Hz (its rates: 48000/44100 Hz)"))
    }

    func testARunningPortRefusesAnotherRateAndNamesItsUser() {
        let user = ConnectionSummary(
            id: ConnectionID("00000000000000aa")!, role: .sending, source: source, destination: destination, format: format(),
            state: .playing)
        XCTAssertEqual(
            Negotiation.senderRate(44_100, source: source, port: port, currentRates: [48_000], runningFor: user),
            NegotiationRefusal(
                .noCommonFormat,
                "stage:out is running at 48000 Hz for foh:in [00000000000000aa]; connect at 48000 Hz, or disconnect that first"))
        XCTAssertEqual(
            Negotiation.senderRate(44_100, source: source, port: port, currentRates: [48_000], runningFor: nil)?.message,
            "stage:out is running at 48000 Hz (its JACK server's rate); connect at 48000 Hz, or disconnect that first")
    }
}
