// Golden vectors: every Link datagram of every reference capture decodes, and re-encodes to the same bytes.

import TuttiClock
import TuttiLinkCapture
import XCTest

final class LinkWireCaptureTests: XCTestCase {
    /// Datagrams per message type in one capture.
    struct Tally: Equatable, CustomStringConvertible {
        var alive = 0, response = 0, byebye = 0, ping = 0, pong = 0
        /// ALIVE/RESPONSE announcing an IPv6 (`mep6`) endpoint.
        var ipv6States = 0
        /// UDP datagrams of neither protocol.
        var other = 0

        var total: Int { alive + response + byebye + ping + pong }
        var description: String {
            "ALIVE \(alive), RESPONSE \(response), BYEBYE \(byebye), PING \(ping), PONG \(pong) "
                + "(total \(total); \(ipv6States) states via IPv6; \(other) other UDP)"
        }
    }

    /// Counted independently from the files (a Python walk of the pcapng blocks, checked against tshark's
    /// UDP frame counts).
    static let expected: [String: Tally] = [
        "late-joiner-startstop": Tally(alive: 68, response: 44, byebye: 4, ping: 104, pong: 104, ipv6States: 56),
        "minipeer-founder-aalink-joins": Tally(alive: 138, response: 76, byebye: 3, ping: 104, pong: 104, ipv6States: 51),
        "minipeer-joins-aalink": Tally(alive: 146, response: 79, byebye: 3, ping: 104, pong: 104, ipv6States: 54),
        "three-peers-remeasure-30s-crash-timeout": Tally(
            alive: 755, response: 829, byebye: 4, ping: 260, pong: 260, ipv6States: 793),
        "three-peers-tempo-startstop": Tally(alive: 400, response: 493, byebye: 6, ping: 208, pong: 208, ipv6States: 446),
        "tie-break-lower-session-id": Tally(alive: 48, response: 44, byebye: 4, ping: 104, pong: 104, ipv6States: 46),
        "two-peers-join-tempo-startstop-bye": Tally(alive: 182, response: 140, byebye: 4, ping: 104, pong: 104, ipv6States: 161),
        "unanswered-measurement-retries": Tally(alive: 55, response: 12, byebye: 3, ping: 36, pong: 0, ipv6States: 23),
    ]

    func testEveryCapturedDatagramDecodesAndReencodesByteForByte() throws {
        var grandTotal = Tally()
        for name in LinkWireFixtures.captureNames {
            var tally = Tally()
            for datagram in try LinkWireFixtures.datagrams(name) {
                let bytes = datagram.payload
                let context = "\(name) frame #\(datagram.frameNumber)"
                if LinkWireFixtures.isDiscovery(bytes) {
                    let message: LinkDiscoveryMessage
                    do { message = try LinkDiscoveryMessage.decode(bytes) } catch {
                        XCTFail("\(context): \(error)")
                        continue
                    }
                    XCTAssertEqual(try message.encode(), bytes, context)
                    XCTAssertEqual(message.encodedSize, bytes.count, context)
                    var buffer = [UInt8](repeating: 0xAA, count: 600)
                    let written = try buffer.withUnsafeMutableBytes { try message.encode(into: $0) }
                    XCTAssertEqual(Array(buffer[..<written]), bytes, context)
                    switch message.kind {
                    case .alive: tally.alive += 1
                    case .response: tally.response += 1
                    case .byebye: tally.byebye += 1
                    }
                    if message.state?.measurementEndpoint.isIPv6 == true { tally.ipv6States += 1 }
                } else if LinkWireFixtures.isMeasurement(bytes) {
                    let message: LinkMeasurementMessage
                    do { message = try LinkMeasurementMessage.decode(bytes) } catch {
                        XCTFail("\(context): \(error)")
                        continue
                    }
                    XCTAssertEqual(try message.encode(), bytes, context)
                    XCTAssertEqual(message.encodedSize, bytes.count, context)
                    switch message {
                    case .ping: tally.ping += 1
                    case .pong: tally.pong += 1
                    }
                } else {
                    tally.other += 1
                }
            }
            print("LinkWire capture \(name): \(tally)")
            XCTAssertEqual(tally, Self.expected[name], name)
            grandTotal.alive += tally.alive
            grandTotal.response += tally.response
            grandTotal.byebye += tally.byebye
            grandTotal.ping += tally.ping
            grandTotal.pong += tally.pong
            grandTotal.ipv6States += tally.ipv6States
            grandTotal.other += tally.other
        }
        print("LinkWire captures, all: \(grandTotal)")
        XCTAssertEqual(grandTotal.total, 5552)
    }

    /// What real peers send: Link's own entry order, `stst` always present, no Link Audio or unknown
    /// entries, the endpoint family matching the datagram's, ttl 5 (0 in BYEBYE), printable NodeIDs.
    func testCapturedStateMessagesHaveLinksShape() throws {
        for name in LinkWireFixtures.captureNames {
            for datagram in try LinkWireFixtures.datagrams(name) where LinkWireFixtures.isDiscovery(datagram.payload) {
                guard let message = LinkWireFixtures.discovery(datagram.payload) else { continue }
                let context = "\(name) #\(datagram.frameNumber)"
                XCTAssertTrue(message.entryOrder.isEmpty, context)
                XCTAssertTrue(message.unknownEntries.isEmpty, context)
                XCTAssertEqual(message.groupID, 0, context)
                XCTAssertTrue(message.sender.bytes.allSatisfy { (33...126).contains($0) }, context)
                guard let state = message.state else {
                    XCTAssertEqual(message.kind, .byebye, context)
                    XCTAssertEqual(message.ttl, 0, context)
                    XCTAssertEqual(datagram.payload.count, 20, context)
                    continue
                }
                XCTAssertEqual(message.ttl, 5, context)
                XCTAssertNotNil(state.startStop, context)
                XCTAssertNil(state.audioEndpoint, context)
                XCTAssertEqual(state.measurementEndpoint.isIPv6, datagram.isIPv6, context)
                // Link announces the measurement socket on the gateway's own address.
                XCTAssertEqual(state.measurementEndpoint.addressBytes, datagram.sourceAddress, context)
                XCTAssertEqual(datagram.payload.count, datagram.isIPv6 ? 119 : 107, context)
                XCTAssertGreaterThan(state.timeline.tempo.microsecondsPerBeat, 0, context)
            }
        }
    }

    /// Every captured PONG is what the responder fast path builds from the PING it answers, and echoes
    /// that ping's `__ht`/`_pgt`.
    func testCapturedPongsAreRebuiltFromTheirPings() throws {
        var checked = 0
        for name in LinkWireFixtures.captureNames {
            var lastPing: [String: [UInt8]] = [:]  // "source>destination" → ping datagram
            for datagram in try LinkWireFixtures.datagrams(name) where LinkWireFixtures.isMeasurement(datagram.payload) {
                guard let message = LinkWireFixtures.measurement(datagram.payload) else { continue }
                let context = "\(name) #\(datagram.frameNumber)"
                switch message {
                case .ping:
                    XCTAssertTrue([25, 41].contains(datagram.payload.count), context)
                    lastPing["\(datagram.source)>\(datagram.destination)"] = datagram.payload
                case .pong(let sessionID, let ghostTime, let echo):
                    guard let pingBytes = lastPing["\(datagram.destination)>\(datagram.source)"],
                        case .ping(let hostTime, let previousGhostTime)? = LinkWireFixtures.measurement(pingBytes)
                    else {
                        XCTFail("\(context): PONG without a PING before it")
                        continue
                    }
                    XCTAssertEqual(echo, Array(pingBytes[9...]), context)
                    XCTAssertEqual(message.echoedHostTime, hostTime, context)
                    XCTAssertEqual(message.echoedPreviousGhostTime, previousGhostTime, context)
                    var buffer = [UInt8](repeating: 0, count: 128)
                    let length = try buffer.withUnsafeMutableBytes { out in
                        try pingBytes.withUnsafeBytes { ping in
                            try LinkMeasurementMessage.writePong(
                                answering: ping, sessionID: sessionID, ghostTime: ghostTime, into: out)
                        }
                    }
                    XCTAssertEqual(Array(buffer[..<length]), datagram.payload, context)
                    XCTAssertEqual(
                        try LinkWireFixtures.measurement(pingBytes)?.pong(sessionID: sessionID, ghostTime: ghostTime)?.encode(),
                        datagram.payload, context)
                    checked += 1
                }
            }
        }
        XCTAssertEqual(checked, 988)
    }

    /// The forged session never answers: every ping to it is the first of a chain (no `_pgt`), six per
    /// attempt.
    func testUnansweredMeasurementSendsOnlyFirstPings() throws {
        let datagrams = try LinkWireFixtures.datagrams("unanswered-measurement-retries")
        var silentEndpoints: Set<String> = []
        for datagram in datagrams where LinkWireFixtures.isDiscovery(datagram.payload) {
            if let message = LinkWireFixtures.discovery(datagram.payload), message.sender == LinkWireFixtures.nodeID("SILENT!!"),
                let state = message.state
            {
                XCTAssertEqual(state.sessionID, message.sender)
                silentEndpoints.insert(state.measurementEndpoint.description)
            }
        }
        XCTAssertFalse(silentEndpoints.isEmpty)
        var pings = 0
        for datagram in datagrams where LinkWireFixtures.isMeasurement(datagram.payload) {
            guard case .ping(_, let previousGhostTime)? = LinkWireFixtures.measurement(datagram.payload) else {
                XCTFail("only pings expected")
                continue
            }
            XCTAssertNil(previousGhostTime)
            XCTAssertTrue(silentEndpoints.contains(datagram.destination), datagram.destination)
            pings += 1
        }
        XCTAssertEqual(pings, 36)
        XCTAssertEqual(pings % 6, 0)
    }
}
