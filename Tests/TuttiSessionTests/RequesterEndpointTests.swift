import TuttiCore
import TuttiWire
import XCTest

@testable import TuttiSession

/// Issue 14: a sender dials only the receiving peer it knows, or the endpoints of a requester it may trust with
/// them: a member, or (open session) a client on the receiving peer's own host. A stranger cannot make a peer
/// open a TCP connection to an address of its choosing.
final class RequesterEndpointTests: XCTestCase {
    typealias D = LifecycleDriver
    let first = D.id(1)
    /// Where a stranger would like A's offer to go.
    let elsewhere = ControlEndpoint(host: "198.18.0.66", port: 22)

    private func connect(_ driver: inout D, endpoints: [ControlEndpoint], requester: ConnectRequester) -> (RequestID, [Action]) {
        let request = ConnectRequest(
            source: D.source, destination: D.destination, destinationEndpoints: endpoints, options: ConnectOptions())
        let id = driver.request()
        return (id, driver.feed(.connect(request, id: first, ssrc: 1, ports: D.portsNow, request: id, requester: requester)))
    }

    private func offeredTo(_ actions: [Action]) -> [ControlEndpoint]? {
        for action in actions { if case .sendOffer(_, _, let endpoints, _) = action { return endpoints } }
        return nil
    }

    func testAMembersEndpointsAreDialledWhenTheReceiverIsUnknown() {
        var driver = D()
        let (_, actions) = connect(&driver, endpoints: [elsewhere], requester: .member)
        XCTAssertEqual(offeredTo(actions), [elsewhere])
    }

    func testAStrangersEndpointsElsewhereAreRefusedInOneLineAndNothingIsDialled() {
        var driver = D()
        let (id, actions) = connect(&driver, endpoints: [elsewhere], requester: .unauthenticated(host: "198.18.0.3"))
        XCTAssertNil(offeredTo(actions))
        guard case .failure(let failure) = driver.replies(to: id).first else { return XCTFail("no refusal: \(actions)") }
        XCTAssertEqual(failure.code, .unknownPeer)
        XCTAssertTrue(failure.message.hasPrefix("A does not know peer B (not found through Avahi"), failure.message)
        XCTAssertFalse(failure.message.contains("\n"))
        XCTAssertTrue(driver.isEmpty)
    }

    func testAClientOfAnOpenSessionMayNameItsOwnHostOnly() {
        var driver = D()
        let own = ControlEndpoint(host: "198.18.0.3", port: 7_401)
        let (_, actions) = connect(&driver, endpoints: [elsewhere, own], requester: .unauthenticated(host: "::ffff:198.18.0.3"))
        XCTAssertEqual(offeredTo(actions), [own])
    }

    func testAClientWhoseAddressIsUnknownNamesNothing() {
        XCTAssertEqual(ConnectRequester.unauthenticated(host: nil).dialable([elsewhere]), [])
    }

    func testAKnownReceiverIsDialledWhereThisPeerKnowsItWhateverTheRequestSays() {
        var directory = PeerDirectory()
        XCTAssertTrue(directory.found(KnownPeer(name: "B", id: D.peerB, endpoints: [D.endpointB])))
        for requester in [ConnectRequester.member, .unauthenticated(host: "198.18.0.66")] {
            var driver = D(directory: directory)
            let (_, actions) = connect(&driver, endpoints: [elsewhere], requester: requester)
            XCTAssertEqual(offeredTo(actions), [D.endpointB], "\(requester)")
        }
    }
}
