import TuttiSecurity
import XCTest

final class SessionKeyTests: XCTestCase {
    func testTheTextFormReadsBackToTheSameKey() throws {
        for _ in 0..<50 {
            let key = SessionKey.random()
            XCTAssertEqual(try SessionKey(text: key.text), key)
            XCTAssertEqual(try SessionKey(text: key.text.uppercased().replacingOccurrences(of: "-", with: " ")), key)
        }
        let key = SessionKey(bytes: Array(0..<32))
        XCTAssertTrue(key.text.hasPrefix("tk-"))
        XCTAssertEqual(key.text.count, 3 + 56 + 13, key.text)
        XCTAssertEqual(key.text.split(separator: "-").count, 15)
    }

    func testATypoIsNamedAsATypo() throws {
        let text = Array(SessionKey(bytes: Array(repeating: 7, count: 32)).text)
        for index in [3, 20, text.count - 1] where text[index] != "-" {
            var changed = text
            changed[index] = changed[index] == "a" ? "b" : "a"
            XCTAssertThrowsError(try SessionKey(text: String(changed))) { error in
                XCTAssertEqual(error as? SessionKeyError, .checksumMismatch, "at \(index)")
            }
        }
        XCTAssertThrowsError(try SessionKey(text: String(text.dropLast()))) { error in
            XCTAssertEqual(error as? SessionKeyError, .wrongLength(letters: 55, expected: 56))
        }
        XCTAssertThrowsError(try SessionKey(text: "tk-" + String(repeating: "1", count: 56))) { error in
            XCTAssertEqual(error as? SessionKeyError, .invalidCharacter("1"))
        }
    }

    func testAPassphraseGivesTheSameKeyOnEveryHostAndAnotherForAnotherPassphrase() throws {
        let one = try SessionKey.derived(fromPassphrase: "correct horse battery staple")
        XCTAssertEqual(try SessionKey.derived(fromPassphrase: "correct horse battery staple"), one)
        XCTAssertNotEqual(try SessionKey.derived(fromPassphrase: "correct horse battery stapler"), one)
        XCTAssertThrowsError(try SessionKey.derived(fromPassphrase: "")) { error in
            XCTAssertEqual(error as? SessionKeyError, .emptyPassphrase)
        }
    }

    func testTheDescriptionNeverShowsTheKey() {
        let key = SessionKey.random()
        XCTAssertFalse("\(key)".contains(key.text.dropFirst(3).prefix(9)))
        XCTAssertEqual(key.fingerprint.count, 8)
        XCTAssertNotEqual(SessionKey.random().fingerprint, key.fingerprint)
    }

    func testAKeyFileHoldsTheCurrentKeyFirstAndSkipsComments() throws {
        let (new, old) = (SessionKey.random(), SessionKey.random())
        let ring = try SessionKeyRing(fileText: "# a comment\n\n  \(new.text)  \n\(old.text)\n\(new.text)\n")
        XCTAssertEqual(ring.keys, [new, old])
        XCTAssertEqual(ring.current, new)
        XCTAssertEqual(try SessionKeyRing(fileText: ring.fileText), ring)
        XCTAssertThrowsError(try SessionKeyRing(fileText: "# nothing\n")) { XCTAssertEqual($0 as? SessionKeyRingError, .empty) }
        XCTAssertThrowsError(try SessionKeyRing(fileText: "\(new.text)\nnot a key\n")) { error in
            guard case .invalidLine(2, _)? = error as? SessionKeyRingError else { return XCTFail("\(error)") }
        }
        let five = (0..<5).map { _ in SessionKey.random().text }.joined(separator: "\n")
        XCTAssertThrowsError(try SessionKeyRing(fileText: five)) { XCTAssertEqual($0 as? SessionKeyRingError, .tooMany(5)) }
    }

    func testAPeerIDIsTheOneItsKeyPairProves() throws {
        let pair = PeerKeyPair()
        let again = try XCTUnwrap(PeerKeyPair(hex: pair.hex))
        XCTAssertEqual(again.peerID, pair.peerID)
        XCTAssertEqual(PeerKeyPair.peerID(for: pair.privateKey.publicKey), pair.peerID)
        XCTAssertNotEqual(PeerKeyPair().peerID, pair.peerID)
        XCTAssertNil(PeerKeyPair(hex: String(pair.hex.dropLast())))
        XCTAssertNil(PeerKeyPair(hex: String(pair.hex.dropLast()) + "x"))
    }
}
