import TuttiCore
import TuttiWire
import XCTest

/// `ControlValidation` promises that "every text is bounded and free of control characters, every number
/// within `StreamLimits`, every list bounded", so the control plane (and the CLI that prints what peers send)
/// only ever sees well-formed messages. These tests hold every response field to that promise.
final class ControlValidationContractTests: XCTestCase {
    private let escape = "red\u{1B}[31mtext"  // a terminal escape sequence

    private var summary: ConnectionSummary {
        ConnectionSummary(
            id: ControlFixtures.connectionID, role: .receiving, source: ControlFixtures.source,
            destination: ControlFixtures.destination, format: ControlFixtures.format, state: .playing)
    }

    private func description(
        ports: [PortDescriptor] = [], connections: [ConnectionSummary] = [], knownPeers: [KnownPeer] = []
    ) -> ControlResponse {
        .description(
            PeerDescription(
                id: ControlFixtures.peerID, name: "stage", host: "stage.local", protocolVersion: 1, ports: ports,
                connections: connections, knownPeers: knownPeers))
    }

    private func assertRejected(_ message: ControlResponse, file: StaticString = #filePath, line: UInt = #line) {
        let error = rejection(of: message)
        XCTAssertTrue(
            isInvalidField(error), "accepted (\(String(describing: error))) a \(message.typeName) that breaks the validation contract",
            file: file, line: line)
    }

    func testBaselineMessagesAreAccepted() {
        XCTAssertNil(
            rejection(
                of: description(
                    ports: [PortDescriptor(name: "out", title: "Out", kind: .sender, channels: 2, sampleRates: [48_000])],
                    connections: [summary],
                    knownPeers: [KnownPeer(name: "foh", id: nil, endpoints: [ControlEndpoint(host: "10.0.0.2", port: 7_400)])])))
        XCTAssertNil(rejection(of: .failure(ControlFailure(.busy, "port busy"))))
        XCTAssertNil(rejection(of: .connected(summary)))
    }

    func testFailureMessageWithControlCharactersIsRejected() {
        assertRejected(.failure(ControlFailure(.noCommonFormat, escape)))
    }

    func testKnownPeerNameWithControlCharactersIsRejected() {
        assertRejected(description(knownPeers: [KnownPeer(name: escape, id: nil, endpoints: [])]))
    }

    func testKnownPeerEndpointsAreChecked() {
        let tooMany = Array(repeating: ControlEndpoint(host: "h", port: 1), count: ControlProtocol.maxListCount + 1)
        assertRejected(description(knownPeers: [KnownPeer(name: "foh", id: nil, endpoints: tooMany)]))
        let badHost = [ControlEndpoint(host: escape, port: 7_400)]
        assertRejected(description(knownPeers: [KnownPeer(name: "foh", id: nil, endpoints: badHost)]))
    }

    func testRunningSampleRatesAreChecked() {
        func described(_ rates: [String: Int]) -> ControlResponse {
            .description(
                PeerDescription(
                    id: ControlFixtures.peerID, name: "stage", host: "stage.local", protocolVersion: 1, ports: [],
                    connections: [], knownPeers: [], runningSampleRates: rates))
        }
        XCTAssertNil(rejection(of: described(["out": 48_000])))
        assertRejected(described(["out": 1]))
        assertRejected(described([escape: 48_000]))
    }

    func testAlreadyConnectedIsCheckedLikeConnected() {
        XCTAssertNil(rejection(of: .alreadyConnected(summary)))
        var bad = summary
        bad.source = PortReference(peer: escape, port: "out")
        assertRejected(.alreadyConnected(bad))
    }

    func testConnectionPortReferencesAreChecked() {
        var bad = summary
        bad.source = PortReference(peer: escape, port: "out")
        assertRejected(description(connections: [bad]))
        assertRejected(.connected(bad))
        bad = summary
        bad.destination = PortReference(peer: "foh", port: "not a port")
        assertRejected(.connected(bad))
    }

    func testStatisticsPortReferencesAreChecked() {
        let entry = ConnectionStatistics(
            id: ControlFixtures.connectionID, role: .receiving, source: PortReference(peer: escape, port: "out"),
            destination: ControlFixtures.destination, state: .playing, format: ControlFixtures.format)
        assertRejected(.statistics([entry]))
    }

    func testPortDescriptorListsAndRatesAreBounded() {
        let manyFormats = PortDescriptor(
            name: "out", title: "", kind: .sender, channels: 2, sampleRates: [48_000],
            sampleFormats: Array(repeating: .l24, count: 1_000))
        assertRejected(description(ports: [manyFormats]))
        let badRate = PortDescriptor(name: "out", title: "", kind: .sender, channels: 2, sampleRates: [0])
        assertRejected(description(ports: [badRate]))
    }
}
