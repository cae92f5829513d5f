// Unknown entries: skipped by their size like Link does, and carried through in place.

import TuttiClock
import XCTest

final class LinkWireUnknownEntryTests: XCTestCase {
    let tuti = LinkEntryKey("tuti")!
    let tutiValue: [UInt8] = Array("tutti-v1".utf8) + [0, 0, 0, 1]  // 12 bytes

    /// Frame #21 with a 12-byte `tuti` entry between `sess` and `stst`: the datagram aalink accepted
    /// (reference section 4.2).
    var aliveWithTuti: [UInt8] {
        let alive = LinkWireFixtures.frame21
        return Array(alive[..<68]) + tuti.bytes + [0, 0, 0, 12] + tutiValue + Array(alive[68...])
    }

    func testTutiBetweenSessAndStstIsSkippedAndKept() throws {
        let bytes = aliveWithTuti
        XCTAssertEqual(bytes.count, 127)
        let decoded = try LinkDiscoveryMessage.decode(bytes)
        let plain = try LinkDiscoveryMessage.decode(LinkWireFixtures.frame21)
        // The state is read as if the entry were not there.
        XCTAssertEqual(decoded.state, plain.state)
        XCTAssertEqual(decoded.sender, plain.sender)
        XCTAssertEqual(decoded.unknownEntries, [LinkUnknownEntry(key: tuti, value: tutiValue)])
        XCTAssertEqual(decoded.entryOrder, [.timeline, .sessionID, tuti, .startStop, .measurementEndpointV4])
        // Re-encoding keeps it in place; dropping it gives the captured datagram back.
        XCTAssertEqual(try decoded.encode(), bytes)
        var stripped = decoded
        stripped.unknownEntries = []
        XCTAssertEqual(try stripped.encode(), LinkWireFixtures.frame21)
    }

    func testBuildingTheSameDatagramFromValues() throws {
        let plain = try LinkDiscoveryMessage.decode(LinkWireFixtures.frame21)
        let built = LinkDiscoveryMessage(
            kind: .alive, ttl: 5, sender: plain.sender, state: plain.state,
            unknownEntries: [LinkUnknownEntry(key: tuti, value: tutiValue)],
            entryOrder: [.timeline, .sessionID, tuti])
        XCTAssertEqual(built.encodedEntryKeys, [.timeline, .sessionID, tuti, .startStop, .measurementEndpointV4])
        XCTAssertEqual(try built.encode(), aliveWithTuti)
        // Without an order, unknown entries follow Link's own entries.
        var appended = built
        appended.entryOrder = []
        let bytes = try appended.encode()
        XCTAssertEqual(Array(bytes[..<107]), LinkWireFixtures.frame21)
        XCTAssertEqual(Array(bytes[107...]), tuti.bytes + [0, 0, 0, 12] + tutiValue)
        XCTAssertEqual(try LinkDiscoveryMessage.decode(bytes), appended)
    }

    func testUnknownEntriesInEveryPositionAndRepeated() throws {
        let alive = LinkWireFixtures.frame21
        let boundaries = [20, 52, 68, 93, 107]
        let a = LinkWireFixtures.hex("61616161 00000000")  // "aaaa", empty
        let b = LinkWireFixtures.hex("62626262 00000003 010203")  // "bbbb", 3 bytes
        for first in boundaries {
            for second in boundaries where second >= first {
                var bytes = alive
                bytes.insert(contentsOf: b, at: second)
                bytes.insert(contentsOf: a + b, at: first)
                let decoded = try LinkDiscoveryMessage.decode(bytes)
                XCTAssertEqual(decoded.state, try LinkDiscoveryMessage.decode(alive).state)
                XCTAssertEqual(decoded.unknownEntries.map(\.key.description), ["aaaa", "bbbb", "bbbb"])
                XCTAssertEqual(try decoded.encode(), bytes, "unknown entries at \(first) and \(second)")
            }
        }
    }

    /// Link Audio endpoints are read and carried, in either family, with unknown entries around them.
    func testAudioEndpointsAreCarried() throws {
        let aep6 = LinkWireFixtures.hex("61657036 00000012 fe800000000000000000000000000002 1f90")
        let bytes = LinkWireFixtures.frame21 + aep6 + LinkWireFixtures.hex("7a7a7a7a 00000001 ff")
        let decoded = try LinkDiscoveryMessage.decode(bytes)
        XCTAssertEqual(decoded.state?.audioEndpoint?.description, "[fe80::2]:8080")
        XCTAssertTrue(decoded.entryOrder.isEmpty, "Link's order: aep after mep, unknown entries last")
        XCTAssertEqual(try decoded.encode(), bytes)
    }
}
