// Round trips of freshly built messages: seeded random states, both address families, with and without
// the optional entries, unknown entries in any position; and the layouts of freshly built messages.

import TuttiClock
import TuttiLinkCapture
import TuttiTesting
import XCTest

final class LinkWireRoundTripTests: XCTestCase {
    static func randomEndpoint(ipv6: Bool, using generator: inout SeededGenerator) -> LinkEndpoint {
        let address: LinkEndpoint.Address =
            ipv6 ? .ipv6(high: generator.next(), low: generator.next()) : .ipv4(UInt32.random(in: .min ... .max, using: &generator))
        return LinkEndpoint(address: address, port: UInt16.random(in: .min ... .max, using: &generator))
    }

    static func randomState(
        ipv6: Bool, withStartStop: Bool, withAudio: Bool, using generator: inout SeededGenerator
    ) -> LinkPeerState {
        LinkPeerState(
            timeline: Timeline(
                tempo: Tempo(microsecondsPerBeat: Int64.random(in: 60_000...3_000_000, using: &generator)),
                beatOrigin: Beats(microBeats: Int64.random(in: .min ... .max, using: &generator)),
                timeOrigin: Int64.random(in: .min ... .max, using: &generator)),
            sessionID: NodeID.random(using: &generator),
            startStop: withStartStop
                ? StartStopState(
                    isPlaying: Bool.random(using: &generator),
                    beats: Beats(microBeats: Int64.random(in: .min ... .max, using: &generator)),
                    timestamp: Int64.random(in: .min ... .max, using: &generator)) : nil,
            measurementEndpoint: randomEndpoint(ipv6: ipv6, using: &generator),
            audioEndpoint: withAudio ? randomEndpoint(ipv6: Bool.random(using: &generator), using: &generator) : nil)
    }

    static func randomUnknownEntries(using generator: inout SeededGenerator) -> [LinkUnknownEntry] {
        let known: Set<UInt32> = [
            LinkEntryKey.timeline, .sessionID, .startStop, .measurementEndpointV4, .measurementEndpointV6,
            .audioEndpointV4, .audioEndpointV6,
        ].reduce(into: []) { $0.insert($1.rawValue) }
        return (0..<Int.random(in: 0...3, using: &generator)).map { _ in
            var key = UInt32.random(in: .min ... .max, using: &generator)
            while known.contains(key) { key &+= 1 }
            let size = Int.random(in: 0...40, using: &generator)
            return LinkUnknownEntry(
                key: LinkEntryKey(rawValue: key), value: (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) })
        }
    }

    func testRandomDiscoveryMessagesRoundTrip() throws {
        var generator = SeededGenerator(seed: 0x4C49_4E4B)
        var sizes: [Int: Int] = [:]
        for iteration in 0..<2000 {
            let kind = LinkDiscoveryMessage.Kind.allCases[iteration % 3]
            var message = LinkDiscoveryMessage(
                kind: kind, ttl: UInt8.random(in: 0...255, using: &generator), sender: NodeID.random(using: &generator),
                state: kind == .byebye
                    ? nil
                    : Self.randomState(
                        ipv6: iteration % 2 == 0, withStartStop: iteration % 5 != 0, withAudio: iteration % 7 == 0,
                        using: &generator),
                unknownEntries: iteration % 4 == 0 ? Self.randomUnknownEntries(using: &generator) : [])
            if iteration % 8 == 4, !message.unknownEntries.isEmpty, message.state != nil {
                // Put the first unknown entry in front of everything else.
                message.entryOrder = [message.unknownEntries[0].key, .timeline, .sessionID]
            }
            let bytes = try message.encode()
            XCTAssertEqual(bytes.count, message.encodedSize)
            sizes[bytes.count, default: 0] += 1
            let decoded = try LinkDiscoveryMessage.decode(bytes)
            if message.entryOrder.isEmpty {
                XCTAssertEqual(decoded, message, "iteration \(iteration)")
            } else {
                // Decoding records the complete wire order.
                XCTAssertEqual(decoded.entryOrder, message.encodedEntryKeys, "iteration \(iteration)")
                XCTAssertEqual(decoded.encodedEntryKeys, message.encodedEntryKeys, "iteration \(iteration)")
                XCTAssertEqual(decoded.state, message.state, "iteration \(iteration)")
                XCTAssertEqual(decoded.unknownEntries, message.unknownEntries, "iteration \(iteration)")
            }
            XCTAssertEqual(try decoded.encode(), bytes, "iteration \(iteration)")
        }
        // The plain shapes: IPv4 and IPv6 states with `stst` as Link sends them, BYEBYE.
        XCTAssertNotNil(sizes[107])
        XCTAssertNotNil(sizes[119])
        XCTAssertNotNil(sizes[20])
    }

    func testFreshStateMessagesUseLinksEntryOrderAndSizes() throws {
        var generator = SeededGenerator(seed: 7)
        let cases: [(ipv6: Bool, startStop: Bool, audio: Bool, size: Int)] = [
            (false, true, false, 107), (true, true, false, 119), (false, false, false, 82), (true, false, false, 94),
        ]
        for item in cases {
            let state = Self.randomState(ipv6: item.ipv6, withStartStop: item.startStop, withAudio: item.audio, using: &generator)
            let bytes = try LinkDiscoveryMessage.alive(sender: NodeID.random(using: &generator), state: state).encode()
            XCTAssertEqual(bytes.count, item.size)
            XCTAssertEqual(Array(bytes[20..<24]), Array("tmln".utf8))
            XCTAssertEqual(Array(bytes[52..<56]), Array("sess".utf8))
            if item.startStop {
                XCTAssertEqual(Array(bytes[68..<72]), Array("stst".utf8))
                XCTAssertEqual(Array(bytes[93..<97]), Array((item.ipv6 ? "mep6" : "mep4").utf8))
            } else {
                XCTAssertEqual(Array(bytes[68..<72]), Array((item.ipv6 ? "mep6" : "mep4").utf8))
            }
            let decoded = try LinkDiscoveryMessage.decode(bytes)
            XCTAssertEqual(decoded.state, state)
            XCTAssertEqual(decoded.state?.effectiveStartStop, state.startStop ?? .default)
        }
        // With both endpoints of Link Audio: aep after mep.
        var state = Self.randomState(ipv6: false, withStartStop: true, withAudio: false, using: &generator)
        state.audioEndpoint = LinkEndpoint(ipv4: 10, 0, 0, 7, port: 4000)
        let bytes = try LinkDiscoveryMessage.response(sender: NodeID.random(using: &generator), state: state).encode()
        XCTAssertEqual(bytes.count, 121)
        XCTAssertEqual(bytes[8], 2)
        XCTAssertEqual(Array(bytes[107..<121]), LinkWireFixtures.hex("61657034 00000006 0a000007 0fa0"))
    }

    /// Rebuilding frame #21 from its values gives the captured bytes.
    func testBuiltFromValuesMatchesCapturedFrame() throws {
        let sender = LinkWireFixtures.nodeID("A\"ww<0pV")
        let state = LinkPeerState(
            timeline: Timeline(tempo: Tempo(bpm: 90), beatOrigin: Beats(microBeats: 624), timeOrigin: 0),
            sessionID: sender, startStop: .default, measurementEndpoint: LinkEndpoint(ipv4: 198, 18, 1, 2, port: 47623))
        XCTAssertEqual(try LinkDiscoveryMessage.alive(sender: sender, state: state).encode(), LinkWireFixtures.frame21)
    }

    /// An IPv4 message decoded, switched to an IPv6 endpoint and re-encoded writes `mep6` in place.
    func testChangingEndpointFamilyKeepsPosition() throws {
        var message = try LinkDiscoveryMessage.decode(LinkWireFixtures.frame21)
        message.unknownEntries = [LinkUnknownEntry(key: LinkEntryKey("tuti")!, value: [1, 2, 3])]
        message.entryOrder = [.timeline, .sessionID, .startStop, .measurementEndpointV4, LinkEntryKey("tuti")!]
        message.state?.measurementEndpoint = LinkEndpoint(address: .ipv6(high: 0xfe80 << 48, low: 1), port: 9)
        let bytes = try message.encode()
        XCTAssertEqual(bytes.count, 119 + 11)
        XCTAssertEqual(Array(bytes[93..<97]), Array("mep6".utf8))
        XCTAssertEqual(Array(bytes[119..<123]), Array("tuti".utf8))
        XCTAssertEqual(try LinkDiscoveryMessage.decode(bytes).state?.measurementEndpoint.description, "[fe80::1]:9")
    }

    func testRandomMeasurementMessagesRoundTrip() throws {
        var generator = SeededGenerator(seed: 0x5049_4E47)
        for iteration in 0..<2000 {
            let hostTime = Int64.random(in: .min ... .max, using: &generator)
            let previous: Int64? = iteration % 3 == 0 ? nil : Int64.random(in: .min ... .max, using: &generator)
            let ping = LinkMeasurementMessage.ping(hostTime: hostTime, previousGhostTime: previous)
            let pingBytes = try ping.encode()
            XCTAssertEqual(pingBytes.count, previous == nil ? 25 : 41)
            XCTAssertEqual(try LinkMeasurementMessage.decode(pingBytes), ping)

            let session = NodeID.random(using: &generator)
            let ghost = Int64.random(in: .min ... .max, using: &generator)
            let pong = try XCTUnwrap(ping.pong(sessionID: session, ghostTime: ghost))
            let pongBytes = try pong.encode()
            XCTAssertEqual(pongBytes.count, previous == nil ? 57 : 73)
            let decoded = try LinkMeasurementMessage.decode(pongBytes)
            XCTAssertEqual(decoded, pong)
            XCTAssertEqual(decoded.echoedHostTime, hostTime)
            XCTAssertEqual(decoded.echoedPreviousGhostTime, previous)

            // The responder fast path builds the same bytes from the raw ping.
            var buffer = [UInt8](repeating: 0, count: 73)
            let length = try buffer.withUnsafeMutableBytes { out in
                try pingBytes.withUnsafeBytes {
                    try LinkMeasurementMessage.writePong(answering: $0, sessionID: session, ghostTime: ghost, into: out)
                }
            }
            XCTAssertEqual(Array(buffer[..<length]), pongBytes)
        }
    }

    /// A PONG whose `sess`/`__gt` are not its two leading entries is still read (Link does not depend on
    /// order); the echo is then the other entries in order, and re-encoding gives the canonical layout.
    func testReorderedPongIsReadLeniently() throws {
        let canonical = LinkWireFixtures.frame37
        // __gt, sess, __ht, _pgt
        let reordered = Array(canonical[..<9]) + Array(canonical[25..<41]) + Array(canonical[9..<25]) + Array(canonical[41...])
        let decoded = try LinkMeasurementMessage.decode(reordered)
        XCTAssertEqual(decoded, try LinkMeasurementMessage.decode(canonical))
        XCTAssertEqual(try decoded.encode(), canonical)
        // A ping with an unknown entry: skipped (the ping's content is the sender's business).
        let ping = LinkWireFixtures.hex("5f6c696e6b5f760101 74757469 00000000 5f5f6874 00000008 0000000040ca1a11")
        XCTAssertEqual(try LinkMeasurementMessage.decode(ping), .ping(hostTime: 1_086_986_769, previousGhostTime: nil))
    }

    func testEncodeIntoCallerBuffer() throws {
        let message = try LinkDiscoveryMessage.decode(LinkWireFixtures.frame21)
        var buffer = [UInt8](repeating: 0, count: 107)
        XCTAssertEqual(try buffer.withUnsafeMutableBytes { try message.encode(into: $0) }, 107)
        XCTAssertEqual(buffer, LinkWireFixtures.frame21)
        var small = [UInt8](repeating: 0, count: 106)
        XCTAssertEqual(
            LinkWireFixtures.error { try small.withUnsafeMutableBytes { (raw) throws(LinkWireError) in try message.encode(into: raw) } },
            .bufferTooSmall(needed: 107, got: 106))
        let pong = try LinkMeasurementMessage.decode(LinkWireFixtures.frame37)
        var pongBuffer = [UInt8](repeating: 0, count: 72)
        XCTAssertEqual(
            LinkWireFixtures.error { try pongBuffer.withUnsafeMutableBytes { (raw) throws(LinkWireError) in try pong.encode(into: raw) } },
            .bufferTooSmall(needed: 73, got: 72))
    }

    func testEndpointText() {
        XCTAssertEqual(LinkEndpoint(address: .ipv6(high: 0, low: 1), port: 1).description, "[::1]:1")
        XCTAssertEqual(LinkEndpoint(address: .ipv6(high: 0xff12 << 48, low: 0x8080), port: 20808).description, "[ff12::8080]:20808")
        XCTAssertEqual(
            LinkEndpoint(address: .ipv6(high: 0x2001_0db8_0000_0001, low: 0x0000_0000_0001_0001), port: 5).description,
            "[2001:db8:0:1::1:1]:5")
        XCTAssertEqual(
            LinkEndpoint(address: .ipv6(high: 0x0001_0002_0003_0004, low: 0x0005_0006_0007_0008), port: 5).description,
            "[1:2:3:4:5:6:7:8]:5")
        XCTAssertNil(LinkEndpoint(addressBytes: [1, 2, 3], port: 1))
        XCTAssertEqual(LinkEntryKey("tmln"), .timeline)
        XCTAssertNil(LinkEntryKey("tml"))
        XCTAssertEqual(LinkEntryKey(rawValue: 0x0001_0203).description, "0x00010203")
    }
}
