// Cross-checks of decoded capture values against the reference document's annotated dumps (sections
// 5.4 and 9 of link-protocol.md, all from capture 1). Frames are found by content; their Wireshark frame
// numbers are then checked against the document.

import TuttiClock
import TuttiLinkCapture
import XCTest

final class LinkWireReferenceDumpTests: XCTestCase {
    let peerA = LinkWireFixtures.nodeID(":,CE-PG\"")
    let peerB = LinkWireFixtures.nodeID("A\"ww<0pV")
    let addressA: [UInt8] = [198, 18, 1, 1]
    let addressB: [UInt8] = [198, 18, 1, 2]

    struct Decoded {
        var datagram: CapturedDatagram
        var discovery: LinkDiscoveryMessage?
        var measurement: LinkMeasurementMessage?
    }

    func captureOne() throws -> [Decoded] {
        try LinkWireFixtures.datagrams("two-peers-join-tempo-startstop-bye").map { datagram in
            Decoded(
                datagram: datagram,
                discovery: try? LinkDiscoveryMessage.decode(datagram.payload),
                measurement: try? LinkMeasurementMessage.decode(datagram.payload))
        }
    }

    /// 9.1 and 9.2: B's first ALIVE over IPv4 and A's RESPONSE to it.
    func testFirstAliveAndResponse() throws {
        let decoded = try captureOne()
        let alive = try XCTUnwrap(
            decoded.first { $0.discovery?.kind == .alive && $0.discovery?.sender == peerB && !$0.datagram.isIPv6 })
        XCTAssertEqual(alive.datagram.frameNumber, 21)
        XCTAssertEqual(alive.datagram.source, "198.18.1.2:45987")
        XCTAssertEqual(alive.datagram.destination, "224.76.78.75:20808")
        XCTAssertEqual(alive.datagram.payload, LinkWireFixtures.frame21)
        let message = try XCTUnwrap(alive.discovery)
        XCTAssertEqual(message.ttl, 5)
        XCTAssertEqual(message.sender.description, "A\"ww<0pV")
        let state = try XCTUnwrap(message.state)
        XCTAssertEqual(
            state.timeline, Timeline(tempo: Tempo(microsecondsPerBeat: 666_667), beatOrigin: Beats(microBeats: 624), timeOrigin: 0))
        XCTAssertEqual(state.timeline.tempo, Tempo(bpm: 90))
        XCTAssertEqual(state.timeline.tempo.bpm, 89.999955, accuracy: 1e-6)
        XCTAssertEqual(state.sessionID, peerB)
        XCTAssertEqual(state.startStop, StartStopState.default)
        XCTAssertEqual(state.measurementEndpoint, LinkEndpoint(ipv4: 198, 18, 1, 2, port: 47623))
        XCTAssertEqual(state.measurementEndpoint.description, "198.18.1.2:47623")

        let response = try XCTUnwrap(
            decoded.first { $0.discovery?.kind == .response && $0.datagram.destination == "198.18.1.2:45987" })
        XCTAssertEqual(response.datagram.frameNumber, 24)
        XCTAssertEqual(response.datagram.source, "198.18.1.1:39909")
        XCTAssertEqual(response.datagram.payload.count, 107)
        XCTAssertEqual(response.discovery?.sender, peerA)
        XCTAssertEqual(
            response.discovery?.state,
            LinkPeerState(
                timeline: Timeline(tempo: Tempo(bpm: 120), beatOrigin: Beats(microBeats: 882), timeOrigin: 0),
                sessionID: peerA, startStop: .default, measurementEndpoint: LinkEndpoint(ipv4: 198, 18, 1, 1, port: 49391)))
    }

    /// 9.3: the same state over IPv6, with a `mep6` endpoint.
    func testAliveOverIPv6() throws {
        let decoded = try captureOne()
        let alive = try XCTUnwrap(decoded.first { $0.discovery?.sender == peerB && $0.datagram.isIPv6 })
        XCTAssertEqual(alive.datagram.frameNumber, 27)
        XCTAssertEqual(alive.datagram.source, "[fe80::18c4:17ff:fe3e:79ac]:59405")
        XCTAssertEqual(alive.datagram.destination, "[ff12::8080]:20808")
        XCTAssertEqual(alive.datagram.payload.count, 119)
        XCTAssertEqual(Array(alive.datagram.payload[..<0x5d]), Array(LinkWireFixtures.frame21[..<0x5d]))
        let endpoint = try XCTUnwrap(alive.discovery?.state?.measurementEndpoint)
        XCTAssertEqual(endpoint.description, "[fe80::18c4:17ff:fe3e:79ac]:39771")
        XCTAssertEqual(endpoint, LinkEndpoint(addressBytes: LinkWireFixtures.hex("fe80000000000000 18c417fffe3e79ac"), port: 39771))
    }

    /// 5.4 and 9.4: A measures B over IPv4; the first pings and pongs and the samples they give.
    func testWorkedMeasurementExample() throws {
        let decoded = try captureOne()
        let fromA = decoded.filter { $0.measurement != nil && $0.datagram.sourceAddress == addressA }
        let fromB = decoded.filter { $0.measurement != nil && $0.datagram.sourceAddress == addressB }
        XCTAssertEqual(fromA.count, 52, "A's pings to B over IPv4")
        XCTAssertEqual(fromB.count, 52, "B's pongs to A over IPv4")
        guard fromA.count >= 3, fromB.count >= 2 else { return }

        XCTAssertEqual(fromA[0].datagram.frameNumber, 25)
        XCTAssertEqual(fromA[0].datagram.source, "198.18.1.1:49391")
        XCTAssertEqual(fromA[0].datagram.destination, "198.18.1.2:47623")
        XCTAssertEqual(fromA[0].datagram.payload.count, 25)
        XCTAssertEqual(fromA[0].measurement, .ping(hostTime: 1_086_986_769, previousGhostTime: nil))

        XCTAssertEqual(fromB[0].datagram.frameNumber, 34)
        XCTAssertEqual(fromB[0].datagram.payload.count, 57)
        guard case .pong(let session1, let ghost1, _)? = fromB[0].measurement else { return XCTFail("#34 is a PONG") }
        XCTAssertEqual(session1, peerB)
        XCTAssertEqual(ghost1, 1004)
        XCTAssertEqual(fromB[0].measurement?.echoedHostTime, 1_086_986_769)
        XCTAssertNil(fromB[0].measurement?.echoedPreviousGhostTime)

        XCTAssertEqual(fromA[1].datagram.frameNumber, 35)
        XCTAssertEqual(fromA[1].datagram.payload.count, 41)
        XCTAssertEqual(fromA[1].measurement, .ping(hostTime: 1_086_987_608, previousGhostTime: 1004))

        XCTAssertEqual(fromB[1].datagram.frameNumber, 37)
        XCTAssertEqual(fromB[1].datagram.payload, LinkWireFixtures.frame37)
        guard case .pong(_, let ghost2, _)? = fromB[1].measurement else { return XCTFail("#37 is a PONG") }
        XCTAssertEqual(ghost2, 1645)
        XCTAssertEqual(fromB[1].measurement?.echoedHostTime, 1_086_987_608)
        XCTAssertEqual(fromB[1].measurement?.echoedPreviousGhostTime, 1004)

        XCTAssertEqual(fromA[2].datagram.frameNumber, 39)
        XCTAssertEqual(fromA[2].measurement, .ping(hostTime: 1_086_987_686, previousGhostTime: 1645))

        // The samples of section 5.4, from the decoded values.
        let sample1 = Double(ghost1) - (1_086_986_769 + 1_086_987_608) / 2
        let sample2 = Double(ghost2) - (1_086_987_608 + 1_086_987_686) / 2
        let sample3 = Double(ghost2 + 1004) / 2 - 1_086_987_608
        XCTAssertEqual(sample1, -1_086_986_184.5)
        XCTAssertEqual(sample2, -1_086_986_002)
        XCTAssertEqual(sample3, -1_086_986_283.5)

        // B measured A over IPv6 at the same time: 52 pings from B, 52 pongs from A.
        let ipv6Pings = decoded.filter {
            if case .ping? = $0.measurement { $0.datagram.isIPv6 } else { false }
        }
        XCTAssertEqual(ipv6Pings.count, 52)
    }

    /// 9.4 (end): B's first message in A's session is a RESPONSE carrying A's timeline.
    func testJoinerAdoptsSession() throws {
        let decoded = try captureOne()
        let joined = try XCTUnwrap(
            decoded.first { $0.discovery?.sender == peerB && $0.discovery?.state?.sessionID == peerA })
        XCTAssertEqual(joined.datagram.frameNumber, 242)
        XCTAssertEqual(joined.discovery?.kind, .response)
        XCTAssertEqual(joined.discovery?.state?.timeline.tempo, Tempo(bpm: 120))
        XCTAssertEqual(joined.discovery?.state?.timeline.timeOrigin, 0)
    }

    /// 9.5: B sets 100 bpm; A adopts the timeline in its next ALIVE.
    func testTempoChange() throws {
        let decoded = try captureOne()
        let start = try XCTUnwrap(decoded.first?.datagram.timestampNanoseconds)
        let change = try XCTUnwrap(
            decoded.firstIndex { $0.discovery?.sender == peerB && $0.discovery?.state?.timeline.tempo == Tempo(bpm: 100) })
        let message = decoded[change]
        XCTAssertEqual(message.datagram.frameNumber, 378)
        XCTAssertEqual(message.discovery?.kind, .alive)
        XCTAssertEqual(Double(message.datagram.timestampNanoseconds - start) / 1e9, 5.94, accuracy: 0.01)
        let timeline = try XCTUnwrap(message.discovery?.state?.timeline)
        XCTAssertEqual(timeline.tempo.microsecondsPerBeat, 600_000)
        XCTAssertEqual(timeline.beatOrigin.microBeats, 11_887_766)
        XCTAssertEqual(timeline.timeOrigin, 5_943_443)
        XCTAssertEqual(message.discovery?.state?.sessionID, peerA)
        // The old timeline (500000, 882, 0) at the change: 2 micro-beats above the new beat origin.
        XCTAssertEqual(882 + 5_943_443 * 1_000_000 / 500_000 - timeline.beatOrigin.microBeats, 2)

        // A answers #378 with the state it had before reading it (#379, old timeline), then announces
        // the new one: first over IPv6 (#381, after B's IPv6 copy #380), then over IPv4 (#385, the frame
        // the document names).
        let answer = try XCTUnwrap(decoded[change...].first { $0.discovery?.kind == .response && $0.discovery?.sender == peerA })
        XCTAssertEqual(answer.datagram.frameNumber, 379)
        XCTAssertEqual(answer.discovery?.state?.timeline.tempo, Tempo(bpm: 120))
        let adopted = try XCTUnwrap(
            decoded[change...].first { $0.discovery?.kind == .alive && $0.discovery?.sender == peerA })
        XCTAssertEqual(adopted.datagram.frameNumber, 381)
        XCTAssertTrue(adopted.datagram.isIPv6)
        XCTAssertEqual(adopted.discovery?.state?.timeline, timeline)
        let adoptedIPv4 = try XCTUnwrap(
            decoded[change...].first { $0.discovery?.kind == .alive && $0.discovery?.sender == peerA && !$0.datagram.isIPv6 })
        XCTAssertEqual(adoptedIPv4.datagram.frameNumber, 385)
        XCTAssertEqual(adoptedIPv4.discovery?.state?.timeline, timeline)
    }

    /// 9.6: B starts playing at the beat of "now".
    func testStart() throws {
        let decoded = try captureOne()
        let start = try XCTUnwrap(decoded.first { $0.discovery?.state?.startStop?.isPlaying == true })
        XCTAssertEqual(start.datagram.frameNumber, 434)
        XCTAssertEqual(start.discovery?.sender, peerB)
        let startStop = try XCTUnwrap(start.discovery?.state?.startStop)
        XCTAssertEqual(startStop, StartStopState(isPlaying: true, beats: Beats(microBeats: 14_384_909), timestamp: 7_441_730))
        let timeline = try XCTUnwrap(start.discovery?.state?.timeline)
        let beatNow =
            timeline.beatOrigin.microBeats
            + (startStop.timestamp - timeline.timeOrigin) * 1_000_000 / timeline.tempo.microsecondsPerBeat
        XCTAssertEqual(beatNow, 14_384_911)
    }

    /// 9.7 and 9.8: B's BYEBYE (one per gateway: IPv6 #526, then IPv4 #527, the one the document
    /// shows), then A re-founds with a new NodeID and a reset start/stop state.
    func testByebyeAndRefounding() throws {
        let decoded = try captureOne()
        let byes = decoded.indices.filter { decoded[$0].discovery?.kind == .byebye }
        XCTAssertEqual(byes.map { decoded[$0].datagram.frameNumber }, [526, 527, 558, 559])
        let bye = try XCTUnwrap(byes.first { !decoded[$0].datagram.isIPv6 })
        XCTAssertEqual(decoded[bye].datagram.frameNumber, 527)
        XCTAssertEqual(decoded[bye].datagram.payload.count, 20)
        XCTAssertEqual(decoded[bye].discovery, .byebye(sender: peerB))
        XCTAssertEqual(try LinkDiscoveryMessage.byebye(sender: peerB).encode(), decoded[bye].datagram.payload)

        let newID = LinkWireFixtures.nodeID("[)ozd2pc")
        // A's first re-founded ALIVE goes out over IPv6 (#528), 0.64 ms after B's IPv6 BYEBYE.
        let firstRefound = try XCTUnwrap(decoded[byes[0]...].first { $0.discovery?.state != nil })
        XCTAssertEqual(firstRefound.datagram.frameNumber, 528)
        XCTAssertEqual(firstRefound.discovery?.sender, newID)
        // The IPv4 one is #529, 2.4 ms after the IPv4 BYEBYE.
        let refound = try XCTUnwrap(decoded[bye...].first { $0.discovery?.state != nil && !$0.datagram.isIPv6 })
        XCTAssertEqual(refound.datagram.frameNumber, 529)
        XCTAssertEqual(refound.discovery?.sender, newID)
        XCTAssertEqual(refound.datagram.sourceAddress, addressA)
        XCTAssertEqual(
            refound.discovery?.state,
            LinkPeerState(
                timeline: Timeline(tempo: Tempo(microsecondsPerBeat: 428_571), beatOrigin: Beats(microBeats: 19_852_527), timeOrigin: 0),
                sessionID: newID, startStop: .default, measurementEndpoint: LinkEndpoint(ipv4: 198, 18, 1, 1, port: 49391)))
        XCTAssertEqual(
            Double(refound.datagram.timestampNanoseconds - decoded[bye].datagram.timestampNanoseconds) / 1e6, 2.4, accuracy: 0.05)
        // A's own BYEBYEs at the end carry its new NodeID.
        XCTAssertEqual(decoded[byes[2]].discovery?.sender, newID)
    }
}
