import XCTest

@testable import TuttiDiscovery

final class TXTRecordTests: XCTestCase {
    private func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }

    func testDecodeSplitsAtFirstEquals() {
        XCTAssertEqual(TXTRecord.decode([bytes("id=abc"), bytes("url=a=b")]), ["id": "abc", "url": "a=b"])
    }

    func testDecodeEntryWithoutEqualsIsBooleanKey() {
        XCTAssertEqual(TXTRecord.decode([bytes("flag"), bytes("empty=")]), ["flag": "", "empty": ""])
    }

    func testDecodeIgnoresEmptyKeyAndEmptyEntry() {
        XCTAssertEqual(TXTRecord.decode([bytes("=value"), [], bytes("k=v")]), ["k": "v"])
    }

    func testDecodeFirstOccurrenceWins() {
        XCTAssertEqual(TXTRecord.decode([bytes("k=1"), bytes("k=2")]), ["k": "1"])
    }

    func testDecodeInvalidUTF8IsReplacedNotFatal() {
        let decoded = TXTRecord.decode([[0x6B, 0x3D, 0xFF, 0xFE, 0x41], [0xC3, 0x3D, 0x31]])
        XCTAssertEqual(decoded["k"], "\u{FFFD}\u{FFFD}A")
        XCTAssertEqual(decoded["\u{FFFD}"], "1")
    }

    func testEncodeIsSortedAndSkipsUnrepresentableEntries() {
        let encoded = TXTRecord.encode([
            "b": "2", "a": "1", "": "empty key", "x=y": "key with equals",
            "long": String(repeating: "v", count: 300), "ü": "ä",
        ])
        XCTAssertEqual(encoded, [bytes("a=1"), bytes("b=2"), bytes("ü=ä")])
    }

    func testEncodeKeepsEntriesUpTo255Bytes() {
        let value = String(repeating: "v", count: 253)  // "k=" + 253 = 255 bytes
        XCTAssertEqual(TXTRecord.encode(["k": value]).first?.count, 255)
        XCTAssertEqual(TXTRecord.encode(["k": value + "v"]), [])
    }

    func testRoundTrip() {
        let txt = ["id": "1234", "ver": "2", "name": "Stüdio = A"]
        XCTAssertEqual(TXTRecord.decode(TXTRecord.encode(txt)), txt)
    }

    func testWireParsing() {
        XCTAssertEqual(TXTRecord.entries(fromWire: [3] + bytes("a=1") + [0] + [1] + bytes("b")), [bytes("a=1"), bytes("b")])
        XCTAssertEqual(TXTRecord.entries(fromWire: [0]), [])
        XCTAssertEqual(TXTRecord.entries(fromWire: []), [])
        // A length running past the end keeps what is there instead of trapping.
        XCTAssertEqual(TXTRecord.entries(fromWire: [9] + bytes("k=v")), [bytes("k=v")])
    }
}
