// Malformed input: every prefix, bad headers, wrong entry sizes, overruns, oversize datagrams, and
// seeded random bytes. Each malformed datagram must give its specific typed error, never a trap.

import TuttiClock
import TuttiTesting
import XCTest

final class LinkWireMalformedTests: XCTestCase {
    typealias Discovery = LinkDiscoveryMessage
    typealias Measurement = LinkMeasurementMessage

    func discoveryError(_ bytes: [UInt8]) -> LinkWireError? {
        LinkWireFixtures.error { try Discovery.decode(bytes) }
    }

    func measurementError(_ bytes: [UInt8]) -> LinkWireError? {
        LinkWireFixtures.error { try Measurement.decode(bytes) }
    }

    /// The error a prefix of length `n` must give, for a message whose entries start at `starts` with
    /// `keys`/`sizes`; `atBoundary` says what a prefix ending exactly after k entries is (nil = valid).
    func expectedPrefixError(
        _ n: Int, header: Int, entries: [(key: LinkEntryKey, size: Int)], atBoundary: [LinkWireError?]
    ) -> LinkWireError? {
        if n < header { return .truncated(needed: header, got: n) }
        var start = header
        for (index, entry) in entries.enumerated() {
            if n == start { return atBoundary[index] }
            if n - start < 8 { return .truncatedEntryHeader(offset: start, remaining: n - start) }
            let end = start + 8 + entry.size
            if n < end { return .entryOverrunsDatagram(key: entry.key, size: UInt32(entry.size), available: n - start - 8) }
            start = end
        }
        return atBoundary[entries.count]
    }

    /// Every proper prefix of an ALIVE is an error: a state message needs `tmln`, `sess` and `mep4`,
    /// which come last. (`stst` is optional, so a prefix ending after `stst` only lacks the endpoint.)
    func testEveryPrefixOfAnAliveIsATypedError() {
        let alive = LinkWireFixtures.frame21
        let entries: [(key: LinkEntryKey, size: Int)] = [
            (.timeline, 24), (.sessionID, 8), (.startStop, 17), (.measurementEndpointV4, 6),
        ]
        let atBoundary: [LinkWireError?] = [
            .missingEntry(.timeline), .missingEntry(.sessionID), .missingMeasurementEndpoint, .missingMeasurementEndpoint, nil,
        ]
        for n in 0...alive.count {
            let prefix = Array(alive[..<n])
            let expected = expectedPrefixError(n, header: 20, entries: entries, atBoundary: atBoundary)
            XCTAssertEqual(discoveryError(prefix), expected, "prefix \(n)")
        }
        XCTAssertNil(discoveryError(alive))
    }

    /// Prefixes of a 73-byte PONG: errors, except at 41 bytes (nothing echoed) and 57 bytes (a first
    /// ping's `__ht` echoed), which are valid shorter PONGs: the echo is whatever the ping carried.
    func testEveryPrefixOfAPongIsATypedErrorOrAShorterPong() throws {
        let pong = LinkWireFixtures.frame37
        let entries: [(key: LinkEntryKey, size: Int)] = [
            (.sessionID, 8), (.ghostTime, 8), (.hostTime, 8), (.previousGhostTime, 8),
        ]
        let atBoundary: [LinkWireError?] = [.missingEntry(.sessionID), .missingEntry(.ghostTime), nil, nil, nil]
        var valid: [Int] = []
        for n in 0...pong.count {
            let prefix = Array(pong[..<n])
            let expected = expectedPrefixError(n, header: 9, entries: entries, atBoundary: atBoundary)
            XCTAssertEqual(measurementError(prefix), expected, "prefix \(n)")
            if expected == nil { valid.append(n) }
        }
        XCTAssertEqual(valid, [41, 57, 73])
        let session = LinkWireFixtures.nodeID("A\"ww<0pV")
        XCTAssertEqual(try Measurement.decode(Array(pong[..<41])), .pong(sessionID: session, ghostTime: 1645, echoedPayload: []))
        let short = try Measurement.decode(Array(pong[..<57]))
        XCTAssertEqual(short.echoedHostTime, 1_086_987_608)
        XCTAssertNil(short.echoedPreviousGhostTime)
        // Prefixes of a PING: only the complete 25- and 41-byte pings are valid.
        let ping = try Measurement.ping(hostTime: 5, previousGhostTime: 6).encode()
        let pingValid = (0...ping.count).filter { measurementError(Array(ping[..<$0])) == nil }
        XCTAssertEqual(pingValid, [25, 41])
        XCTAssertEqual(measurementError(Array(ping[..<9])), .missingEntry(.hostTime))
    }

    func testBadMagicTypeAndGroup() {
        let alive = LinkWireFixtures.frame21
        for index in 0..<8 {
            var bytes = alive
            bytes[index] ^= 0x20
            XCTAssertEqual(discoveryError(bytes), .badMagic, "byte \(index)")
        }
        var version2 = alive
        version2[7] = 2
        XCTAssertEqual(discoveryError(version2), .badMagic)
        XCTAssertEqual(discoveryError(LinkWireFixtures.frame37 + [UInt8](repeating: 0, count: 20)), .badMagic)
        XCTAssertEqual(measurementError(alive), .badMagic)

        for type: UInt8 in [0, 4, 255] {
            var bytes = alive
            bytes[8] = type
            XCTAssertEqual(discoveryError(bytes), .unknownMessageType(type))
        }
        for type: UInt8 in [0, 3, 255] {
            var bytes = LinkWireFixtures.frame37
            bytes[8] = type
            XCTAssertEqual(measurementError(bytes), .unknownMessageType(type))
        }
        for group: UInt16 in [1, 0x0100, 0xffff] {
            var bytes = alive
            bytes[10] = UInt8(group >> 8)
            bytes[11] = UInt8(group & 0xff)
            XCTAssertEqual(discoveryError(bytes), .nonZeroGroup(group))
        }
        var byebye = Array(alive[..<20])
        byebye[8] = 3
        byebye[11] = 1
        XCTAssertEqual(discoveryError(byebye), .nonZeroGroup(1))
    }

    /// `alive` with the entry at `offset` given `size` value bytes (cut or padded with zeros), and its
    /// size field set to match, so the datagram stays well framed.
    func resized(_ bytes: [UInt8], entryAt offset: Int, from oldSize: Int, to size: Int) -> [UInt8] {
        var value = Array(bytes[(offset + 8)..<(offset + 8 + oldSize)])
        if size < oldSize { value.removeLast(oldSize - size) } else { value += [UInt8](repeating: 0, count: size - oldSize) }
        let sizeField: [UInt8] = [UInt8(size >> 24 & 0xff), UInt8(size >> 16 & 0xff), UInt8(size >> 8 & 0xff), UInt8(size & 0xff)]
        return Array(bytes[..<(offset + 4)]) + sizeField + value + Array(bytes[(offset + 8 + oldSize)...])
    }

    func testKnownEntriesOfTheWrongSize() {
        let alive = LinkWireFixtures.frame21
        // Entry offsets in frame #21: tmln 20, sess 52, stst 68, mep4 93.
        let cases: [(offset: Int, oldSize: Int, size: Int, key: LinkEntryKey)] = [
            (20, 24, 23, .timeline), (20, 24, 25, .timeline), (20, 24, 0, .timeline),
            (52, 8, 7, .sessionID), (52, 8, 9, .sessionID),
            (68, 17, 16, .startStop), (68, 17, 18, .startStop),
            (93, 6, 5, .measurementEndpointV4), (93, 6, 7, .measurementEndpointV4), (93, 6, 18, .measurementEndpointV4),
        ]
        for item in cases {
            let bytes = resized(alive, entryAt: item.offset, from: item.oldSize, to: item.size)
            XCTAssertEqual(bytes.count, alive.count - item.oldSize + item.size)
            XCTAssertEqual(discoveryError(bytes), .badEntrySize(key: item.key, size: UInt32(item.size)), "\(item)")
        }
        // An IPv4-sized mep6, and Link Audio endpoints of the wrong size.
        var mep6 = resized(alive, entryAt: 93, from: 6, to: 6)
        mep6[96] = 0x36
        XCTAssertEqual(discoveryError(mep6), .badEntrySize(key: .measurementEndpointV6, size: 6))
        let aep6Short = alive + LinkWireFixtures.hex("61657036 00000006 0a000001 1234")
        XCTAssertEqual(discoveryError(aep6Short), .badEntrySize(key: .audioEndpointV6, size: 6))
        let aep4Long = alive + LinkWireFixtures.hex("61657034 00000007 0a000001 123400")
        XCTAssertEqual(discoveryError(aep4Long), .badEntrySize(key: .audioEndpointV4, size: 7))

        // Measurement entries must be 8 bytes.
        var ping = try! Measurement.ping(hostTime: 1, previousGhostTime: 2).encode()
        ping = resized(ping, entryAt: 25, from: 8, to: 4)
        XCTAssertEqual(measurementError(ping), .badEntrySize(key: .previousGhostTime, size: 4))
        let pong = resized(LinkWireFixtures.frame37, entryAt: 25, from: 8, to: 9)
        XCTAssertEqual(measurementError(pong), .badEntrySize(key: .ghostTime, size: 9))
        let echoBad = resized(LinkWireFixtures.frame37, entryAt: 41, from: 8, to: 7)
        XCTAssertEqual(measurementError(echoBad), .badEntrySize(key: .hostTime, size: 7))
    }

    func testEntriesRunningPastTheEnd() {
        let alive = LinkWireFixtures.frame21
        var bytes = alive
        bytes[26] = 1  // tmln size 0x118 = 280
        XCTAssertEqual(discoveryError(bytes), .entryOverrunsDatagram(key: .timeline, size: 0x118, available: 79))
        bytes = alive
        bytes[97...100] = [0xff, 0xff, 0xff, 0xff]  // mep4 size 4 GiB
        XCTAssertEqual(discoveryError(bytes), .entryOverrunsDatagram(key: .measurementEndpointV4, size: .max, available: 6))
        // An unknown entry overrunning: still drops the datagram.
        XCTAssertEqual(
            discoveryError(alive + LinkWireFixtures.hex("74757469 0000000c 0102")),
            .entryOverrunsDatagram(key: LinkEntryKey("tuti")!, size: 12, available: 2))
        // Trailing bytes too few for an entry header.
        XCTAssertEqual(discoveryError(alive + [0, 0, 0]), .truncatedEntryHeader(offset: 107, remaining: 3))
        XCTAssertEqual(measurementError(LinkWireFixtures.frame37 + [0x5f]), .truncatedEntryHeader(offset: 73, remaining: 1))
    }

    func testOversizeDatagrams() throws {
        let alive = LinkWireFixtures.frame21
        // Pad with an unknown entry up to exactly 511 (accepted) and 512 bytes (refused).
        func padded(to total: Int) -> [UInt8] {
            let valueSize = total - alive.count - 8
            return alive + LinkWireFixtures.hex("7a7a7a7a") + [0, 0, UInt8(valueSize >> 8), UInt8(valueSize & 0xff)]
                + [UInt8](repeating: 0x55, count: valueSize)
        }
        let largest = padded(to: 511)
        let decoded = try Discovery.decode(largest)
        XCTAssertEqual(decoded.unknownEntries.count, 1)
        XCTAssertEqual(try decoded.encode(), largest)
        XCTAssertEqual(discoveryError(padded(to: 512)), .oversize(512))
        XCTAssertEqual(discoveryError(padded(to: 1400)), .oversize(1400))

        var tooBig = decoded
        tooBig.unknownEntries[0].value.append(0)
        XCTAssertEqual(tooBig.encodedSize, 512)
        XCTAssertEqual(LinkWireFixtures.error { try tooBig.encode() }, .oversize(512))
        var buffer = [UInt8](repeating: 0, count: 2048)
        XCTAssertEqual(
            LinkWireFixtures.error {
                try buffer.withUnsafeMutableBytes { (raw) throws(LinkWireError) in try tooBig.encode(into: raw) }
            }, .oversize(512))
        tooBig.unknownEntries[0].value = [UInt8](repeating: 0, count: 100_000)
        XCTAssertEqual(LinkWireFixtures.error { try tooBig.encode() }, .oversize(100_028))
        XCTAssertEqual(measurementError(LinkWireFixtures.frame37 + [UInt8](repeating: 0, count: 512 - 73)), .oversize(512))
    }

    func testMeasurementLimitsAndRules() throws {
        // A ping payload over 32 bytes is not answered, nor decoded.
        let ping = try Measurement.ping(hostTime: 7, previousGhostTime: 8).encode()
        let long = ping + LinkWireFixtures.hex("74757469 00000000")
        XCTAssertEqual(measurementError(long), .pingPayloadTooLarge(40))
        var out = [UInt8](repeating: 0, count: 128)
        func answer(_ bytes: [UInt8], bufferSize: Int = 128) -> LinkWireError? {
            LinkWireFixtures.error {
                try out.withUnsafeMutableBytes { (raw) throws(LinkWireError) in
                    try bytes.withLinkWireTestBytes { (ping) throws(LinkWireError) in
                        try Measurement.writePong(
                            answering: ping, sessionID: NodeID(rawValue: 1), ghostTime: 2,
                            into: UnsafeMutableRawBufferPointer(rebasing: raw[..<bufferSize]))
                    }
                }
            }
        }
        XCTAssertEqual(answer(long), .pingPayloadTooLarge(40))
        XCTAssertEqual(answer(Array(ping[..<8])), .truncated(needed: 9, got: 8))
        XCTAssertEqual(answer(LinkWireFixtures.frame37), .unknownMessageType(2))
        XCTAssertEqual(answer(LinkWireFixtures.frame21), .badMagic)
        XCTAssertEqual(answer(ping, bufferSize: 72), .bufferTooSmall(needed: 73, got: 72))
        XCTAssertNil(answer(ping, bufferSize: 73))
        // The responder does not inspect the payload: even a malformed one is echoed.
        XCTAssertNil(answer(Array(ping[..<12])))

        // A PONG echoing more than a ping may carry, or an echo that is not framed entries.
        let session = NodeID(rawValue: 42)
        let tooLong = Measurement.pong(sessionID: session, ghostTime: 1, echoedPayload: [UInt8](repeating: 0, count: 33))
        XCTAssertEqual(LinkWireFixtures.error { try tooLong.encode() }, .pingPayloadTooLarge(33))
        let ragged = Measurement.pong(sessionID: session, ghostTime: 1, echoedPayload: [1, 2, 3])
        XCTAssertEqual(LinkWireFixtures.error { try ragged.encode() }, .truncatedEntryHeader(offset: 0, remaining: 3))
        XCTAssertNil(ragged.echoedHostTime)
        let echo40 = LinkWireFixtures.frame37 + LinkWireFixtures.hex("74757469 00000000")
        XCTAssertEqual(measurementError(echo40), .pingPayloadTooLarge(40))
        // A PING without `__ht`, and a PONG without `__gt`.
        XCTAssertEqual(
            measurementError(LinkWireFixtures.hex("5f6c696e6b5f760101 5f706774 00000008 0000000000000001")), .missingEntry(.hostTime))
        let noGhost = Array(LinkWireFixtures.frame37[..<25]) + Array(LinkWireFixtures.frame37[41...])
        XCTAssertEqual(measurementError(noGhost), .missingEntry(.ghostTime))
    }

    func testEncodingRefusesInconsistentMessages() {
        let state = (try? Discovery.decode(LinkWireFixtures.frame21))?.state
        let sender = NodeID(rawValue: 3)
        let noState = Discovery(kind: .alive, ttl: 5, sender: sender, state: nil)
        XCTAssertEqual(LinkWireFixtures.error { try noState.encode() }, .missingState)
        let byeWithState = Discovery(kind: .byebye, ttl: 0, sender: sender, state: state)
        XCTAssertEqual(LinkWireFixtures.error { try byeWithState.encode() }, .unexpectedState)
        let clash = Discovery(
            kind: .response, ttl: 5, sender: sender, state: state,
            unknownEntries: [LinkUnknownEntry(key: .startStop, value: [UInt8](repeating: 0, count: 17))])
        XCTAssertEqual(LinkWireFixtures.error { try clash.encode() }, .unknownEntryHasKnownKey(.startStop))
    }

    /// Repeated keys: the last value wins (as in Link); re-encoding writes it once, at the first position.
    func testRepeatedKnownEntryLastWins() throws {
        let alive = LinkWireFixtures.frame21
        let secondTimeline = LinkWireFixtures.hex("746d6c6e 00000018 000000000007a120 0000000000000001 0000000000000002")
        let bytes = alive + secondTimeline
        let decoded = try Discovery.decode(bytes)
        XCTAssertEqual(decoded.state?.timeline, Timeline(tempo: Tempo(bpm: 120), beatOrigin: Beats(microBeats: 1), timeOrigin: 2))
        XCTAssertEqual(decoded.entryOrder, [.timeline, .sessionID, .startStop, .measurementEndpointV4, .timeline])
        let reencoded = try decoded.encode()
        XCTAssertEqual(reencoded.count, 107)
        XCTAssertEqual(Array(reencoded[28..<52]), Array(secondTimeline[8...]))
        // A non-canonical boolean reads as true and is re-encoded as 1.
        var playing = alive
        playing[0x4c] = 0x7f
        let decodedPlaying = try Discovery.decode(playing)
        XCTAssertEqual(decodedPlaying.state?.startStop?.isPlaying, true)
        XCTAssertEqual(try decodedPlaying.encode()[0x4c], 1)
    }

    /// A BYEBYE's payload is not interpreted; any entries are carried through verbatim.
    func testByebyeWithEntries() throws {
        var bytes = Array(LinkWireFixtures.frame21)
        bytes[8] = 3
        let decoded = try Discovery.decode(bytes)
        XCTAssertNil(decoded.state)
        XCTAssertEqual(decoded.unknownEntries.map(\.key), [.timeline, .sessionID, .startStop, .measurementEndpointV4])
        XCTAssertEqual(try decoded.encode(), bytes)
        // Even a BYEBYE with a malformed known-key entry is fine: nothing is interpreted.
        let odd = Array(bytes[..<20]) + LinkWireFixtures.hex("746d6c6e 00000001 00")
        XCTAssertEqual(try Discovery.decode(odd).unknownEntries, [LinkUnknownEntry(key: .timeline, value: [0])])
    }

    /// 10,000 seeded random byte strings (a third with each magic in front) and 10,000 random mutations
    /// of real datagrams: no trap, and whatever decodes re-encodes to bytes that decode to the same.
    func testRandomBytesNeverTrap() throws {
        var generator = SeededGenerator(seed: 0x00F0_0D5E_ED)
        var decodedCount = 0
        func check(_ bytes: [UInt8]) throws {
            if let message = try? Discovery.decode(bytes) {
                decodedCount += 1
                let encoded = try message.encode()
                let again = try Discovery.decode(encoded)
                XCTAssertEqual(again.state, message.state)
                XCTAssertEqual(again.unknownEntries, message.unknownEntries)
                XCTAssertEqual(try again.encode(), encoded)
            }
            if let message = try? Measurement.decode(bytes) {
                decodedCount += 1
                let encoded = try message.encode()
                XCTAssertEqual(try Measurement.decode(encoded), message)
            }
            var out = [UInt8](repeating: 0, count: 80)
            _ = try? out.withUnsafeMutableBytes { (raw) throws(LinkWireError) in
                try bytes.withLinkWireTestBytes { (ping) throws(LinkWireError) in
                    try Measurement.writePong(answering: ping, sessionID: NodeID(rawValue: 9), ghostTime: 9, into: raw)
                }
            }
        }
        for index in 0..<10_000 {
            let length = Int.random(in: 0...600, using: &generator)
            var bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            switch index % 3 {
            case 1: bytes = LinkWireFixtures.discoveryMagic + [UInt8.random(in: 0...4, using: &generator), 5, 0, 0] + bytes
            case 2: bytes = LinkWireFixtures.measurementMagic + [UInt8.random(in: 0...3, using: &generator)] + bytes
            default: break
            }
            try check(bytes)
        }
        let originals = [
            LinkWireFixtures.frame21, LinkWireFixtures.frame37,
            try Measurement.ping(hostTime: 1, previousGhostTime: 2).encode(),
            try Discovery.byebye(sender: NodeID(rawValue: 5)).encode(),
        ]
        for index in 0..<10_000 {
            var bytes = originals[index % originals.count]
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                switch Int.random(in: 0...3, using: &generator) {
                case 0 where !bytes.isEmpty:
                    bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
                case 1 where !bytes.isEmpty: bytes.removeLast(Int.random(in: 1...min(bytes.count, 12), using: &generator))
                case 2: bytes += (0..<Int.random(in: 1...30, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
                default:
                    // Change an entry size field's low byte somewhere past the header.
                    if bytes.count > 28 { bytes[Int.random(in: 20..<bytes.count, using: &generator)] ^= 1 }
                }
            }
            try check(bytes)
        }
        XCTAssertGreaterThan(decodedCount, 100, "mutations that stay valid are exercised too")
    }
}

extension Array where Element == UInt8 {
    /// The array's bytes for a typed-throwing body (tests).
    func withLinkWireTestBytes<R>(_ body: (UnsafeRawBufferPointer) throws(LinkWireError) -> R) throws(LinkWireError) -> R {
        let result: Result<R, LinkWireError> = withUnsafeBytes { raw in
            do throws(LinkWireError) { return .success(try body(raw)) } catch { return .failure(error) }
        }
        return try result.get()
    }
}
