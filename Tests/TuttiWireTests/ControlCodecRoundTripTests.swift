import TuttiCore
import TuttiWire
import XCTest

/// Every control message survives encode → strip the length prefix → decode unchanged.
final class ControlCodecRoundTripTests: XCTestCase {
    func testEveryRequestTypeRoundTrips() throws {
        let requests = ControlFixtures.requests
        XCTAssertEqual(
            Set(requests.map(\.typeName)),
            ["describe", "statistics", "connect", "offer", "disconnect", "teardown", "hello", "bye", "upstream", "mute"])
        for (index, request) in requests.enumerated() {
            let envelope = ControlEnvelope(id: UInt32(index * 1_000_003), message: request)
            let frame = encodedRequest(envelope)
            XCTAssertEqual(try ControlCodec.frameLength(prefix: frame), frame.count - 4, request.typeName)
            XCTAssertEqual(try ControlCodec.decodeRequest(body(of: frame)), envelope, request.typeName)
        }
    }

    func testEveryResponseTypeRoundTrips() throws {
        let responses = ControlFixtures.responses
        XCTAssertEqual(
            Set(responses.map(\.typeName)),
            ["description", "connected", "already-connected", "answer", "disconnected", "done", "statistics", "muted", "error"])
        for (index, response) in responses.enumerated() {
            let envelope = ControlEnvelope(id: UInt32.max - UInt32(index), message: response)
            let frame = ControlCodec.encodeResponse(envelope)
            XCTAssertEqual(try ControlCodec.frameLength(prefix: frame), frame.count - 4, response.typeName)
            XCTAssertEqual(try ControlCodec.decodeResponse(body(of: frame)), envelope, response.typeName)
        }
    }

    func testEveryFailureCodeRoundTrips() throws {
        let codes: [ControlFailure.Code] = [
            .malformed, .unsupportedVersion, .unknownPeer, .unknownPort, .wrongDirection, .noCommonFormat,
            .invalidOption, .busy, .unreachable, .notFound, .internalError, .cycle, .selfConnection,
        ]
        for code in codes {
            let envelope = ControlEnvelope(id: 1, message: ControlResponse.failure(ControlFailure(code, "because \(code)")))
            XCTAssertEqual(try ControlCodec.decodeResponse(body(of: ControlCodec.encodeResponse(envelope))), envelope)
        }
    }

    func testNonFiniteNumbersAreRefusedAtEncodingNotCrashed() {
        let request = ControlRequest.connect(
            ConnectRequest(
                source: PortReference(peer: "a", port: "out"), destination: PortReference(peer: "b", port: "in"),
                destinationEndpoints: [ControlEndpoint(host: "::1", port: 7400)],
                options: ConnectOptions(latencyMilliseconds: .nan)))
        XCTAssertThrowsError(try ControlCodec.encodeRequest(ControlEnvelope(id: 1, message: request))) { error in
            XCTAssertEqual((error as? ControlFailure)?.code, .invalidOption)
        }
        var statistics = ConnectionStatistics(
            id: ControlFixtures.connectionID, role: .receiving, source: ControlFixtures.source,
            destination: ControlFixtures.destination, state: .playing, format: ControlFixtures.format)
        statistics.jitterMilliseconds = .infinity
        let frame = ControlCodec.encodeResponse(ControlEnvelope(id: 3, message: .statistics([statistics])))
        guard case .failure(let failure) = try? ControlCodec.decodeResponse(Array(frame.dropFirst(4))).message else {
            return XCTFail("a response that cannot be encoded becomes an error response")
        }
        XCTAssertEqual(failure.code, .internalError)
    }

    func testFrameIsBigEndianLengthThenSortedJSON() {
        let frame = encodedRequest(ControlEnvelope(id: 7, message: .describe))
        let json = #"{"id":7,"type":"describe","v":1}"#
        XCTAssertEqual(frame, [0, 0, 0, UInt8(json.utf8.count)] + Array(json.utf8))

        let done = ControlCodec.encodeResponse(ControlEnvelope(id: 0, message: .done))
        XCTAssertEqual(String(decoding: body(of: done), as: UTF8.self), #"{"id":0,"type":"done","v":1}"#)

        let disconnected = ControlCodec.encodeResponse(ControlEnvelope(id: 2, message: .disconnected(count: 4)))
        XCTAssertEqual(
            String(decoding: body(of: disconnected), as: UTF8.self), #"{"body":{"count":4},"id":2,"type":"disconnected","v":1}"#)

        let failure = ControlCodec.encodeResponse(ControlEnvelope(id: 3, message: .failure(ControlFailure(.wrongDirection, "x"))))
        XCTAssertEqual(
            String(decoding: body(of: failure), as: UTF8.self),
            #"{"body":{"code":"wrong-direction","message":"x"},"id":3,"type":"error","v":1}"#)
    }

    func testLargeFrameHasMultiByteLengthPrefix() throws {
        let ports = (0..<250).map {
            PortDescriptor(name: "port\($0)", title: String(repeating: "t", count: 250), kind: .sender, channels: 2, sampleRates: [48_000])
        }
        let message = ControlResponse.description(
            PeerDescription(
                id: ControlFixtures.peerID, name: "big", host: "big.local", protocolVersion: 1, ports: ports, connections: [],
                knownPeers: []))
        let frame = ControlCodec.encodeResponse(ControlEnvelope(id: 9, message: message))
        XCTAssertGreaterThan(frame.count, 65_536)
        let expectedLength = frame.count - 4
        XCTAssertEqual(
            Array(frame.prefix(4)),
            [
                UInt8(expectedLength >> 24), UInt8(expectedLength >> 16 & 0xFF), UInt8(expectedLength >> 8 & 0xFF),
                UInt8(expectedLength & 0xFF),
            ])
        XCTAssertEqual(try ControlCodec.frameLength(prefix: frame), expectedLength)
        XCTAssertEqual(try ControlCodec.decodeResponse(body(of: frame)).message, message)
    }

    func testFrameLengthNeedsFourBytes() throws {
        XCTAssertNil(try ControlCodec.frameLength(prefix: [UInt8]()))
        XCTAssertNil(try ControlCodec.frameLength(prefix: [0, 0, 1]))
        XCTAssertEqual(try ControlCodec.frameLength(prefix: [0, 0, 0, 0]), 0)
        XCTAssertEqual(try ControlCodec.frameLength(prefix: [0, 0, 1, 2]), 258)
        // Only the first four bytes count; the rest is the body.
        XCTAssertEqual(try ControlCodec.frameLength(prefix: [0, 1, 0, 0, 0xFF, 0xFF]), 65_536)
        // Works on slices of a larger receive buffer.
        let buffer: [UInt8] = [9, 9, 0, 0, 0, 42, 1]
        XCTAssertEqual(try ControlCodec.frameLength(prefix: buffer[2...]), 42)
    }

    func testFrameLengthAcceptsTheMaximumAndRejectsOneMore() {
        let maximum = ControlProtocol.maxFrameBytes
        XCTAssertEqual(maximum, 262_144)
        XCTAssertEqual(try ControlCodec.frameLength(prefix: bigEndian(UInt32(maximum))), maximum)
        XCTAssertThrowsError(try ControlCodec.frameLength(prefix: bigEndian(UInt32(maximum + 1)))) { error in
            XCTAssertEqual(error as? ControlDecodingError, .frameTooLarge(maximum + 1))
        }
        XCTAssertThrowsError(try ControlCodec.frameLength(prefix: [0xFF, 0xFF, 0xFF, 0xFF])) { error in
            XCTAssertEqual(error as? ControlDecodingError, .frameTooLarge(4_294_967_295))
        }
    }
}
