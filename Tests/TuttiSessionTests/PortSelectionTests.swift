import TuttiCore
import TuttiSession
import TuttiWire
import XCTest

/// The refusals before negotiation: the named ports must exist and face the right way.
final class PortSelectionTests: XCTestCase {
    private let ports = [
        PortDescriptor(name: "out", title: "Tone", kind: .sender, channels: 2, sampleRates: [48_000]),
        PortDescriptor(name: "in", title: "Sink", kind: .receiver, channels: 2, sampleRates: [48_000]),
        PortDescriptor(name: "fx", title: "Filter", kind: .filter, channels: 2, sampleRates: [48_000]),
    ]

    private func refusal(_ result: Result<PortDescriptor, NegotiationRefusal>) -> NegotiationRefusal? {
        if case .failure(let refusal) = result { return refusal }
        return nil
    }

    func testSourceAndDestinationAreFound() {
        XCTAssertEqual(try PortSelection.source(PortReference(peer: "stage", port: "out"), in: ports).get(), ports[0])
        XCTAssertEqual(try PortSelection.destination(PortReference(peer: "stage", port: "in"), in: ports).get(), ports[1])
    }

    func testFiltersFaceBothWays() {
        XCTAssertEqual(try PortSelection.source(PortReference(peer: "stage", port: "fx"), in: ports).get(), ports[2])
        XCTAssertEqual(try PortSelection.destination(PortReference(peer: "stage", port: "fx"), in: ports).get(), ports[2])
    }

    func testUnknownPortListsTheAvailableOnes() {
        for select in [PortSelection.source, PortSelection.destination] {
            let unknown = refusal(select(PortReference(peer: "stage", port: "nope"), ports))
            XCTAssertEqual(unknown?.code, .unknownPort)
            XCTAssertEqual(unknown?.message, "peer stage has no port 'nope' (ports: out, in, fx)")
            let none = refusal(select(PortReference(peer: "empty", port: "out"), []))
            XCTAssertEqual(none?.message, "peer empty has no port 'out' (ports: none)")
        }
        // Names are case-sensitive.
        XCTAssertEqual(refusal(PortSelection.source(PortReference(peer: "stage", port: "OUT"), in: ports))?.code, .unknownPort)
    }

    func testReceiverGivenAsSource() {
        let refusal = refusal(PortSelection.source(PortReference(peer: "stage", port: "in"), in: ports))
        XCTAssertEqual(refusal?.code, .wrongDirection)
        XCTAssertEqual(refusal?.message, "stage:in is a receiver port and cannot be a source; give a sender port first")
    }

    func testSenderGivenAsDestination() {
        let refusal = refusal(PortSelection.destination(PortReference(peer: "stage", port: "out"), in: ports))
        XCTAssertEqual(refusal?.code, .wrongDirection)
        XCTAssertEqual(refusal?.message, "stage:out is a sender port and cannot receive audio; choose a receiver port")
        XCTAssertEqual(refusal?.failure.code, .wrongDirection)
        XCTAssertEqual(refusal?.description, refusal?.message)
    }
}
