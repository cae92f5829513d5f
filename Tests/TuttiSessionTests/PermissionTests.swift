import TuttiCore
import TuttiWire
import XCTest

@testable import TuttiSession

/// In a members-only session every request comes with the peer ID its sender proved: a member speaks only in
/// its own name, and only an end of a connection tears it down or tells of its upstream.
final class PermissionTests: XCTestCase {
    typealias D = LifecycleDriver
    let first = D.id(1)
    let stranger = PeerID(String(repeating: "c", count: 32))!

    func testHelloByeAndOfferOnlyInTheSendersOwnName() {
        let driver = D()
        XCTAssertNil(driver.machine.refusal(of: .hello(D.presenceB), from: D.peerB))
        XCTAssertNil(driver.machine.refusal(of: .bye(D.presenceB), from: D.peerB))
        XCTAssertNil(driver.machine.refusal(of: .offer(D.offer(first)), from: D.peerB))
        for request in [ControlRequest.hello(D.presenceB), .bye(D.presenceB), .offer(D.offer(first))] {
            let refusal = driver.machine.refusal(of: request, from: stranger)
            XCTAssertEqual(refusal?.code, .forbidden, "\(request.typeName)")
            XCTAssertTrue(refusal?.message.contains(D.peerB.rawValue) == true, refusal?.message ?? "")
        }
    }

    func testOnlyTheSenderTearsDownOrUpdatesAStreamThisPeerReceives() {
        var driver = D()
        driver.playingReceiver(first)
        let teardown = ControlRequest.teardown(TeardownNotice(connectionID: first, reason: "stop"))
        XCTAssertNil(driver.machine.refusal(of: teardown, from: D.peerB))
        XCTAssertNil(driver.machine.refusal(of: teardown, from: D.peerA), "this peer itself")
        XCTAssertEqual(driver.machine.refusal(of: teardown, from: stranger)?.code, .forbidden)
        let upstream = ControlRequest.upstream(UpstreamNotice(connectionID: first, upstream: []))
        XCTAssertNil(driver.machine.refusal(of: upstream, from: D.peerB))
        XCTAssertEqual(driver.machine.refusal(of: upstream, from: stranger)?.code, .forbidden)
        // A connection this peer does not have: nothing to protect.
        XCTAssertNil(driver.machine.refusal(of: .teardown(TeardownNotice(connectionID: D.id(9), reason: "x")), from: stranger))
    }

    func testOnlyTheReceiverThatAnsweredTearsDownAStreamThisPeerSends() {
        var driver = D()
        driver.offering(first)
        let answer = StreamAnswer(connectionID: first, format: D.format, mediaPort: 5_004, ssrc: 0x1234, payloadType: 96)
        driver.feed(.answered(first, answer, reached: D.endpointB, remoteAddress: nil, receiver: D.peerB))
        driver.feed(.started(first, .sending, mediaPort: nil))
        let teardown = ControlRequest.teardown(TeardownNotice(connectionID: first, reason: "stop"))
        XCTAssertNil(driver.machine.refusal(of: teardown, from: D.peerB))
        let refusal = driver.machine.refusal(of: teardown, from: stranger)
        XCTAssertEqual(refusal?.code, .forbidden)
        XCTAssertEqual(refusal?.message, "only the two ends of connection \(first) may tear it down, and peer \(stranger) is neither")
    }

    func testConnectDisconnectAndReadsAreForEveryMember() {
        let driver = D()
        let requests: [ControlRequest] = [
            .describe, .statistics, .connect(D.connectRequest()), .disconnect(DisconnectRequest(connectionID: first)),
        ]
        for request in requests { XCTAssertNil(driver.machine.refusal(of: request, from: stranger), request.typeName) }
    }
}
