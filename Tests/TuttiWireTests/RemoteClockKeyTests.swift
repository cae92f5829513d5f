import Foundation
import TuttiCore
import TuttiWire
import XCTest

/// An offer says which of the sender's device clocks paces the stream; a receiver groups streams by it
/// (one drift estimate per remote clock). Older peers do not say, and unknown clocks group nothing.
final class RemoteClockKeyTests: XCTestCase {
    func testAKnownSenderClockNamesTheRemoteClockByPeerAndClock() throws {
        var offer = ControlFixtures.offer
        offer.senderClock = "jack"
        XCTAssertEqual(offer.remoteClockKey, "0123456789abcdef0123456789abcdef/jack")
        offer.senderClock = "system"
        XCTAssertEqual(offer.remoteClockKey, "0123456789abcdef0123456789abcdef/system")
    }

    func testAnOfferFromAnOlderPeerWithoutTheFieldDecodesAndGroupsNothing() throws {
        var offer = ControlFixtures.offer
        offer.senderClock = nil
        let encoded = try JSONEncoder().encode(offer)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: encoded) as? [String: Any])
        XCTAssertNil(object["senderClock"], "nothing encoded for nil")
        let decoded = try JSONDecoder().decode(StreamOffer.self, from: encoded)
        XCTAssertNil(decoded.senderClock)
        XCTAssertNil(decoded.remoteClockKey)
    }

    func testAnUnknownOrHostileSenderClockGroupsNothing() {
        var offer = ControlFixtures.offer
        for value in ["", "System", "jack/../x", String(repeating: "j", count: 10_000)] {
            offer.senderClock = value
            XCTAssertNil(offer.remoteClockKey, "\(value.prefix(20))")
        }
    }
}
