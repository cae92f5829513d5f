import Foundation
import TuttiCore
import TuttiWire
import XCTest

/// Control frames that must be refused, each with its typed `ControlDecodingError`.
final class ControlRejectionTests: XCTestCase {
    // MARK: Envelope

    func testNonJSONIsRejected() {
        for text in ["", "not json", "{", "{\"v\":1,", "\u{FEFF}}"] {
            assertRequest(text, failsWith: { if case .notJSON = $0 { true } else { false } }, text)
        }
        // Invalid UTF-8.
        let bytes: [UInt8] = [0x7B, 0xFF, 0xFE, 0x7D]
        switch Result(catching: { () throws(ControlDecodingError) in try ControlCodec.decodeRequest(bytes) }) {
        case .success: XCTFail("decoded invalid UTF-8")
        case .failure(let error):
            guard case .notJSON = error else { return XCTFail("\(error)") }
        }
    }

    func testOtherProtocolVersionsAreRejectedBeforeAnythingElse() {
        XCTAssertEqual(decodeRequest(#"{"v":2,"id":1,"type":"describe"}"#).failure, .unsupportedVersion(2))
        XCTAssertEqual(decodeRequest(#"{"v":0,"id":1,"type":"describe"}"#).failure, .unsupportedVersion(0))
        // A newer protocol may change everything else: the version is still what is reported.
        XCTAssertEqual(decodeRequest(#"{"v":2,"id":"x","type":"reboot","body":[]}"#).failure, .unsupportedVersion(2))
        XCTAssertEqual(decodeRequest(#"{"v":2}"#).failure, .unsupportedVersion(2))
        XCTAssertEqual(decodeResponse(#"{"v":3,"id":1,"type":"done"}"#).failure, .unsupportedVersion(3))
        XCTAssertEqual(ControlDecodingError.unsupportedVersion(2).failure.code, .unsupportedVersion)
        XCTAssertEqual(
            ControlDecodingError.unsupportedVersion(2).description,
            "control protocol version 2 is not supported (this peer speaks 1)")
    }

    func testUnknownTypesAreRejected() {
        XCTAssertEqual(decodeRequest(#"{"v":1,"id":1,"type":"reboot"}"#).failure, .unknownType("reboot"))
        XCTAssertEqual(decodeRequest(#"{"v":1,"id":1,"type":""}"#).failure, .unknownType(""))
        // Response types are not requests and vice versa.
        XCTAssertEqual(decodeRequest(#"{"v":1,"id":1,"type":"done"}"#).failure, .unknownType("done"))
        XCTAssertEqual(decodeResponse(#"{"v":1,"id":1,"type":"describe"}"#).failure, .unknownType("describe"))
        XCTAssertEqual(ControlDecodingError.unknownType("reboot").failure.code, .malformed)
    }

    func testMissingFieldsAreNamed() {
        XCTAssertEqual(decodeRequest(#"{"id":1,"type":"describe"}"#).failure, .invalidField("missing 'v'"))
        XCTAssertEqual(decodeRequest(#"{"v":1,"type":"describe"}"#).failure, .invalidField("missing 'id'"))
        XCTAssertEqual(decodeRequest(#"{"v":1,"id":1}"#).failure, .invalidField("missing 'type'"))
        XCTAssertEqual(decodeRequest(#"{"v":1,"id":1,"type":"connect"}"#).failure, .invalidField("missing 'body'"))
        XCTAssertEqual(
            decodeRequest(#"{"v":1,"id":1,"type":"disconnect","body":{"source":{"peer":"a"}}}"#).failure,
            .invalidField("missing 'body.source.port'"))
        var json = jsonBody(.connect(ControlFixtures.connect))
        json = json.replacingOccurrences(of: #""destination":{"peer":"foh-mixer","port":"in.main_1"},"#, with: "")
        XCTAssertEqual(decodeRequest(json).failure, .invalidField("missing 'body.destination'"))
        XCTAssertEqual(decodeResponse(#"{"v":1,"id":1,"type":"disconnected","body":{}}"#).failure, .invalidField("missing 'body.count'"))
    }

    func testWrongTypesAreNamed() {
        XCTAssertEqual(decodeRequest(#"{"v":"1","id":1,"type":"describe"}"#).failure, .invalidField("wrong type at 'v'"))
        XCTAssertEqual(decodeRequest(#"{"v":1,"id":"7","type":"describe"}"#).failure, .invalidField("wrong type at 'id'"))
        XCTAssertEqual(decodeRequest(#"{"v":1,"id":7,"type":7}"#).failure, .invalidField("wrong type at 'type'"))
        var json = jsonBody(.offer(ControlFixtures.offer))
        json = json.replacingOccurrences(of: #""channels":2"#, with: #""channels":"two""#)
        XCTAssertEqual(decodeRequest(json).failure, .invalidField("wrong type at 'body.channels'"))
        XCTAssertEqual(
            decodeResponse(#"{"v":1,"id":1,"type":"statistics","body":{}}"#).failure, .invalidField("wrong type at 'body'"))
        XCTAssertEqual(
            decodeRequest(#"{"v":1,"id":1,"type":"connect","body":null}"#).failure, .invalidField("null at 'body'"))
    }

    func testValuesThatAreNotRepresentableAreRejected() {
        // Out-of-range numbers and bad identifiers: rejected, whichever case the decoder classifies them under.
        for json in [
            #"{"v":1,"id":-1,"type":"describe"}"#,
            #"{"v":1,"id":4294967296,"type":"describe"}"#,
            #"{"v":1,"id":1.5,"type":"describe"}"#,
            jsonBody(.teardown(TeardownNotice(connectionID: ControlFixtures.connectionID, reason: "x")))
                .replacingOccurrences(of: "00112233aabbccdd", with: "00112233AABBCCDD"),
            jsonBody(.offer(ControlFixtures.offer)).replacingOccurrences(of: #""L16""#, with: #""L32""#),
            jsonBody(.offer(ControlFixtures.offer)).replacingOccurrences(of: "0123456789abcdef0123456789abcdef", with: "nope"),
            jsonBody(.offer(ControlFixtures.offer)).replacingOccurrences(of: #""realtime""#, with: #""sundial""#),
        ] {
            switch decodeRequest(json) {
            case .success: XCTFail("accepted \(json)")
            case .failure(let error):
                switch error {
                case .notJSON, .invalidField: break
                default: XCTFail("\(error) for \(json)")
                }
            }
        }
    }

    func testOversizeFrameIsRejectedBeforeParsing() {
        let limit = ControlProtocol.maxFrameBytes
        let tooLarge = [UInt8](repeating: 0x20, count: limit + 1)
        XCTAssertEqual(
            Result { () throws(ControlDecodingError) in try ControlCodec.decodeRequest(tooLarge) }.failure, .frameTooLarge(limit + 1))
        XCTAssertEqual(
            Result { () throws(ControlDecodingError) in try ControlCodec.decodeResponse(tooLarge) }.failure, .frameTooLarge(limit + 1))
        // Exactly the limit is parsed (and here fails as JSON, not as size).
        let atLimit = Array(#"{"v":1,"id":1,"type":"describe"}"#.utf8) + [UInt8](repeating: 0x20, count: limit - 32)
        XCTAssertEqual(atLimit.count, limit)
        XCTAssertEqual(Result { () throws(ControlDecodingError) in try ControlCodec.decodeRequest(atLimit) }.success?.message, .describe)
        XCTAssertEqual(ControlDecodingError.frameTooLarge(300_000).description, "control frame of 300000 bytes exceeds 262144")
    }

    // MARK: Field validation

    func testBadPortNamesAreRejected() {
        for name in ["", "a/b", "out put", "ü", String(repeating: "p", count: 33), "a:b"] {
            var connect = ControlFixtures.connect
            connect.source.port = name
            XCTAssertEqual(
                roundTrip(.connect(connect)), .invalidField("source.port '\(name)' is not a valid port name"), "name \(name)")
        }
        var connect = ControlFixtures.connect
        connect.source.port = String(repeating: "x", count: 32)
        XCTAssertNil(roundTrip(.connect(connect)))
        connect.source.port = "A-z_0.9"
        XCTAssertNil(roundTrip(.connect(connect)))
    }

    func testEmptyPeerIsRejected() {
        var connect = ControlFixtures.connect
        connect.destination.peer = ""
        XCTAssertEqual(roundTrip(.connect(connect)), .invalidField("destination.peer is empty"))
        var offer = ControlFixtures.offer
        offer.source.peer = ""
        XCTAssertEqual(roundTrip(.offer(offer)), .invalidField("source.peer is empty"))
    }

    func testControlCharactersAreRejected() {
        for bad in ["pe\u{07}er", "line\nbreak", "tab\there", "del\u{7F}", "\u{0}"] {
            var connect = ControlFixtures.connect
            connect.source.peer = bad
            XCTAssertEqual(roundTrip(.connect(connect)), .invalidField("source.peer contains control characters"))
            XCTAssertEqual(
                roundTrip(.teardown(TeardownNotice(connectionID: ControlFixtures.connectionID, reason: bad))),
                .invalidField("reason contains control characters"))
        }
        var connect = ControlFixtures.connect
        connect.destinationEndpoints = [ControlEndpoint(host: "evil\r\nhost", port: 1)]
        XCTAssertEqual(roundTrip(.connect(connect)), .invalidField("endpoint host contains control characters"))
    }

    func testPresenceFieldsAreValidated() {
        let presence = { (name: String, port: UInt16) in PeerPresence(id: ControlFixtures.peerID, name: name, controlPort: port) }
        XCTAssertNil(roundTrip(.hello(presence(String(repeating: "p", count: 63), 1))))
        XCTAssertEqual(roundTrip(.hello(presence("", 7_400))), .invalidField("name is empty"))
        XCTAssertEqual(roundTrip(.bye(presence(String(repeating: "p", count: 64), 7_400))), .invalidField("name is longer than 63 bytes"))
        XCTAssertEqual(roundTrip(.hello(presence("stage\n", 7_400))), .invalidField("name contains control characters"))
        XCTAssertEqual(roundTrip(.bye(presence("stage", 0))), .invalidField("controlPort must not be 0"))
    }

    func testTooLongTextIsRejected() {
        let teardown = { (reason: String) in
            ControlRequest.teardown(TeardownNotice(connectionID: ControlFixtures.connectionID, reason: reason))
        }
        XCTAssertNil(roundTrip(teardown(String(repeating: "r", count: 256))))
        XCTAssertEqual(roundTrip(teardown(String(repeating: "r", count: 257))), .invalidField("reason is longer than 256 bytes"))
        // Bytes, not characters: 129 two-byte characters are 258 bytes.
        XCTAssertEqual(roundTrip(teardown(String(repeating: "é", count: 129))), .invalidField("reason is longer than 256 bytes"))

        var connect = ControlFixtures.connect
        connect.source.peer = String(repeating: "p", count: 63)
        XCTAssertNil(roundTrip(.connect(connect)))
        connect.source.peer = String(repeating: "p", count: 64)
        XCTAssertEqual(roundTrip(.connect(connect)), .invalidField("source.peer is longer than 63 bytes"))

        let description = PeerDescription(
            id: ControlFixtures.peerID, name: String(repeating: "n", count: 257), host: "h", protocolVersion: 1, ports: [],
            connections: [], knownPeers: [])
        XCTAssertEqual(roundTrip(.description(description)), .invalidField("name is longer than 256 bytes"))
        XCTAssertEqual(
            roundTrip(.failure(ControlFailure(.busy, String(repeating: "m", count: 1_025)))),
            .invalidField("error message too long"))
        XCTAssertNil(roundTrip(.failure(ControlFailure(.busy, String(repeating: "m", count: 1_024)))))
    }

    func testSampleRatesOutOfRangeAreRejected() {
        var offer = ControlFixtures.offer
        offer.sampleRates = [48_000, 4_000]
        XCTAssertEqual(roundTrip(.offer(offer)), .invalidField("sample rate 4000 out of range"))
        offer.sampleRates = [192_001]
        XCTAssertEqual(roundTrip(.offer(offer)), .invalidField("sample rate 192001 out of range"))
        offer.sampleRates = []
        XCTAssertEqual(roundTrip(.offer(offer)), .invalidField("sampleRates must list 1 to 32 rates"))
        offer.sampleRates = Array(repeating: 48_000, count: 33)
        XCTAssertEqual(roundTrip(.offer(offer)), .invalidField("sampleRates must list 1 to 32 rates"))
        offer.sampleRates = [8_000, 192_000]
        XCTAssertNil(roundTrip(.offer(offer)))

        var connect = ControlFixtures.connect
        connect.options.sampleRate = 500_000
        XCTAssertEqual(roundTrip(.connect(connect)), .invalidField("sample rate 500000 out of range 8000...192000"))
    }

    func testOfferChannelsAndFormatsOutOfRangeAreRejected() {
        var offer = ControlFixtures.offer
        offer.channels = 0
        XCTAssertEqual(roundTrip(.offer(offer)), .invalidField("channels 0 out of range"))
        offer.channels = 33
        XCTAssertEqual(roundTrip(.offer(offer)), .invalidField("channels 33 out of range"))
        offer = ControlFixtures.offer
        offer.sampleFormats = []
        XCTAssertEqual(roundTrip(.offer(offer)), .invalidField("sampleFormats must list 1 to 8 formats"))
        offer.sampleFormats = Array(repeating: .l16, count: 9)
        XCTAssertEqual(roundTrip(.offer(offer)), .invalidField("sampleFormats must list 1 to 8 formats"))
    }

    func testOptionsOutOfRangeAreRejected() {
        func rejection(_ change: (inout ConnectOptions) -> Void) -> ControlDecodingError? {
            var connect = ControlFixtures.connect
            change(&connect.options)
            return roundTrip(.connect(connect))
        }
        XCTAssertEqual(rejection { $0.channels = 0 }, .invalidField("channels 0 out of range 1...32"))
        XCTAssertEqual(rejection { $0.packetFrames = 8 }, .invalidField("packet of 8 frames out of range 16...1024"))
        XCTAssertEqual(rejection { $0.packetFrames = 1_025 }, .invalidField("packet of 1025 frames out of range 16...1024"))
        XCTAssertEqual(rejection { $0.latencyMilliseconds = -5 }, .invalidField("latency -5.0 ms out of range (0, 2000]"))
        XCTAssertEqual(rejection { $0.latencyMilliseconds = 0 }, .invalidField("latency 0.0 ms out of range (0, 2000]"))
        XCTAssertEqual(rejection { $0.latencyMilliseconds = 1e9 }, .invalidField("latency 1000000000.0 ms out of range (0, 2000]"))
        XCTAssertEqual(rejection { $0.latencyMilliseconds = 2_000.5 }, .invalidField("latency 2000.5 ms out of range (0, 2000]"))
        XCTAssertNil(rejection { $0.latencyMilliseconds = 2_000 })
        XCTAssertNil(rejection { $0.latencyMilliseconds = 0.01 })
    }

    func testNonFiniteLatencyFailsValidation() {
        // JSON cannot carry NaN or infinity, so these can only be checked on the decoded value.
        for latency in [Double.nan, .infinity, -.infinity] {
            var connect = ControlFixtures.connect
            connect.options.latencyMilliseconds = latency
            XCTAssertEqual(
                Result { () throws(ControlDecodingError) in try ControlValidation.validate(ControlRequest.connect(connect)) }.failure,
                .invalidField("latency \(latency) ms out of range (0, 2000]"))
            var offer = ControlFixtures.offer
            offer.options.latencyMilliseconds = latency
            XCTAssertNotNil(
                Result { () throws(ControlDecodingError) in try ControlValidation.validate(ControlRequest.offer(offer)) }.failure)
        }
        XCTAssertEqual(
            decodeRequest(
                jsonBody(.connect(ControlFixtures.connect)).replacingOccurrences(
                    of: #""options":{}"#, with: #""options":{"latencyMilliseconds":NaN}"#)
            )
            .failure.map { if case .notJSON = $0 { true } else { false } },
            true)
    }

    func testDisconnectWithoutAnyFieldIsRejected() {
        XCTAssertEqual(
            roundTrip(.disconnect(DisconnectRequest())),
            .invalidField("disconnect needs a source, a destination or a connection id"))
        XCTAssertEqual(
            decodeRequest(#"{"v":1,"id":1,"type":"disconnect","body":{}}"#).failure,
            .invalidField("disconnect needs a source, a destination or a connection id"))
        XCTAssertEqual(
            roundTrip(.disconnect(DisconnectRequest(destination: PortReference(peer: "p", port: "bad name")))),
            .invalidField("destination.port 'bad name' is not a valid port name"))
    }

    func testAnswerWithReservedPayloadTypeOrZeroPortIsRejected() {
        for payloadType: UInt8 in [0, 95, 128, 255] {
            var answer = ControlFixtures.answer
            answer.payloadType = payloadType
            XCTAssertEqual(roundTrip(.answer(answer)), .invalidField("payloadType must be dynamic (96–127)"), "\(payloadType)")
        }
        for payloadType: UInt8 in [96, 127] {
            var answer = ControlFixtures.answer
            answer.payloadType = payloadType
            XCTAssertNil(roundTrip(.answer(answer)))
        }
        var answer = ControlFixtures.answer
        answer.mediaPort = 0
        XCTAssertEqual(roundTrip(.answer(answer)), .invalidField("mediaPort must not be 0"))
    }

    func testAnswerWithFormatOutsideLimitsIsRejected() {
        func rejection(_ change: (inout StreamFormat) -> Void) -> ControlDecodingError? {
            var answer = ControlFixtures.answer
            change(&answer.format)
            return roundTrip(.answer(answer))
        }
        XCTAssertEqual(rejection { $0.sampleRate = 0 }, .invalidField("sample rate 0 out of range"))
        XCTAssertEqual(rejection { $0.channels = 33 }, .invalidField("channels 33 out of range"))
        XCTAssertEqual(rejection { $0.packetFrames = 8 }, .invalidField("packet of 8 frames out of range"))
        XCTAssertEqual(
            rejection {
                $0.channels = 8
                $0.packetFrames = 128
            }, .invalidField("payload of 3072 bytes exceeds the MTU budget"))
        XCTAssertEqual(rejection { $0.targetLatencyFrames = 0 }, .invalidField("target latency of 0 frames out of range"))
        XCTAssertEqual(rejection { $0.targetLatencyFrames = 96_001 }, .invalidField("target latency of 96001 frames out of range"))
        XCTAssertNil(rejection { $0.targetLatencyFrames = 96_000 })
        XCTAssertEqual(
            roundTrip(
                .statistics([
                    ConnectionStatistics(
                        id: ControlFixtures.connectionID, role: .receiving, source: ControlFixtures.source,
                        destination: ControlFixtures.destination, state: .playing,
                        format: StreamFormat(sampleRate: 48_000, channels: 0, sampleFormat: .l16, packetFrames: 64, targetLatencyFrames: 1))
                ])),
            .invalidField("channels 0 out of range"))
    }

    func testEndpointsEmptyOrBadAreRejected() {
        var connect = ControlFixtures.connect
        connect.destinationEndpoints = []
        XCTAssertEqual(roundTrip(.connect(connect)), .invalidField("destinationEndpoints is empty"))
        connect.destinationEndpoints = [ControlEndpoint(host: "10.0.0.1", port: 0)]
        XCTAssertEqual(roundTrip(.connect(connect)), .invalidField("endpoint port must not be 0"))
        connect.destinationEndpoints = [ControlEndpoint(host: "", port: 1)]
        XCTAssertEqual(roundTrip(.connect(connect)), .invalidField("endpoint host is empty"))
        connect.destinationEndpoints = Array(repeating: ControlEndpoint(host: "h", port: 1), count: 257)
        XCTAssertEqual(roundTrip(.connect(connect)), .invalidField("destinationEndpoints has more than 256 entries"))
        connect.destinationEndpoints = Array(repeating: ControlEndpoint(host: "h", port: 1), count: 256)
        XCTAssertNil(roundTrip(.connect(connect)))
    }

    func testDescriptionWithBadPortsIsRejected() {
        func rejection(_ port: PortDescriptor) -> ControlDecodingError? {
            roundTrip(
                .description(
                    PeerDescription(
                        id: ControlFixtures.peerID, name: "n", host: "h", protocolVersion: 1, ports: [port], connections: [],
                        knownPeers: [])))
        }
        XCTAssertEqual(
            rejection(PortDescriptor(name: "bad name", title: "", kind: .sender, channels: 2, sampleRates: [48_000])),
            .invalidField("invalid port name"))
        XCTAssertEqual(
            rejection(PortDescriptor(name: "ok", title: "", kind: .sender, channels: 0, sampleRates: [48_000])),
            .invalidField("channels out of range"))
        XCTAssertEqual(
            rejection(PortDescriptor(name: "ok", title: "bell\u{07}", kind: .sender, channels: 1, sampleRates: [48_000])),
            .invalidField("title contains control characters"))
        XCTAssertEqual(
            rejection(PortDescriptor(name: "ok", title: "", kind: .sender, channels: 1, sampleRates: Array(repeating: 48_000, count: 33))),
            .invalidField("too many sample rates"))
        XCTAssertEqual(
            roundTrip(
                .description(
                    PeerDescription(
                        id: ControlFixtures.peerID, name: "n", host: "", protocolVersion: 1, ports: [], connections: [], knownPeers: []))),
            .invalidField("host is empty"))
    }

    func testNegativeDisconnectedCountIsRejected() {
        XCTAssertEqual(roundTrip(.disconnected(count: -1)), .invalidField("negative count"))
    }

    func testFailureRepliesAreMalformedExceptForVersion() {
        let error = ControlDecodingError.invalidField("negative count")
        XCTAssertEqual(error.failure, ControlFailure(.malformed, "invalid control message: negative count"))
        XCTAssertEqual(ControlDecodingError.notJSON("x").failure.code, .malformed)
        XCTAssertEqual(ControlDecodingError.frameTooLarge(1).failure.code, .malformed)
    }

    // MARK: Helpers

    /// Encodes `message` (the encoder does not validate) and decodes it, returning the rejection, or nil when accepted.
    private func roundTrip(_ message: ControlRequest, file: StaticString = #filePath, line: UInt = #line) -> ControlDecodingError? {
        let envelope = ControlEnvelope(id: 5, message: message)
        switch Result(catching: { () throws(ControlDecodingError) in try ControlCodec.decodeRequest(body(of: encodedRequest(envelope))) }) {
        case .success(let decoded):
            XCTAssertEqual(decoded, envelope, file: file, line: line)
            return nil
        case .failure(let error): return error
        }
    }

    private func roundTrip(_ message: ControlResponse, file: StaticString = #filePath, line: UInt = #line) -> ControlDecodingError? {
        let envelope = ControlEnvelope(id: 5, message: message)
        switch Result(catching: { () throws(ControlDecodingError) in
            try ControlCodec.decodeResponse(body(of: ControlCodec.encodeResponse(envelope)))
        }) {
        case .success(let decoded):
            XCTAssertEqual(decoded, envelope, file: file, line: line)
            return nil
        case .failure(let error): return error
        }
    }

    func testPipelinesBeyondTheirBoundsAndBadMuteTargetsAreRejected() {
        func validate(_ request: ControlRequest) -> ControlDecodingError? {
            Result { () throws(ControlDecodingError) in try ControlValidation.validate(request) }.failure
        }
        let hop = ControlFixtures.source
        let id = ControlFixtures.connectionID
        let longest = Pipeline(ports: Array(repeating: hop, count: Pipeline.maxLength), live: nil, originHost: nil)
        XCTAssertNil(validate(.upstream(UpstreamNotice(connectionID: id, upstream: [longest]))), "16 ports: the most a chain has")
        XCTAssertEqual(
            validate(.upstream(UpstreamNotice(connectionID: id, upstream: [longest.extended(to: hop)]))),
            .invalidField("upstream: a pipeline has 1 to 16 ports"))
        XCTAssertEqual(
            validate(.upstream(UpstreamNotice(connectionID: id, upstream: [Pipeline(ports: [], live: nil, originHost: nil)]))),
            .invalidField("upstream: a pipeline has 1 to 16 ports"))
        let many = Array(repeating: Pipeline(origin: hop, live: false, originHost: nil), count: Pipeline.maxCount + 1)
        var offer = ControlFixtures.offer
        offer.upstream = many
        XCTAssertEqual(validate(.offer(offer)), .invalidField("upstream lists more than 64 pipelines"))
        offer.upstream = [Pipeline(ports: [PortReference(peer: "a", port: "bad name")], live: nil, originHost: nil)]
        XCTAssertEqual(validate(.offer(offer)), .invalidField("upstream.port 'bad name' is not a valid port name"))
        offer.upstream = [Pipeline(origin: hop, live: true, originHost: "host\u{1B}[2J")]
        XCTAssertEqual(validate(.offer(offer)), .invalidField("upstream.originHost contains control characters"))
        XCTAssertEqual(validate(.mute(MuteRequest(port: "", muted: true))), .invalidField("port '' is not a port name"))
        XCTAssertEqual(
            validate(.mute(MuteRequest(port: "out", destination: PortReference(peer: "", port: "in"), muted: true))),
            .invalidField("destination.peer is empty"))
    }

    private func jsonBody(_ message: ControlRequest) -> String {
        String(decoding: body(of: encodedRequest(ControlEnvelope(id: 1, message: message))), as: UTF8.self)
    }

    private func assertRequest(
        _ json: String, failsWith matches: (ControlDecodingError) -> Bool, _ message: String = "",
        file: StaticString = #filePath, line: UInt = #line
    ) {
        switch decodeRequest(json) {
        case .success(let envelope): XCTFail("accepted \(envelope) \(message)", file: file, line: line)
        case .failure(let error): XCTAssertTrue(matches(error), "\(error) \(message)", file: file, line: line)
        }
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }

    var success: Success? {
        if case .success(let value) = self { return value }
        return nil
    }
}
