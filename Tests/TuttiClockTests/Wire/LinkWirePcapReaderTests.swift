// The capture reader itself: the real (pcapng, Ethernet) captures re-wrapped as classic pcap in both byte
// orders and both time resolutions, and with the other link layers, must yield the same datagrams.

import TuttiClock
import TuttiLinkCapture
import XCTest

final class LinkWirePcapReaderTests: XCTestCase {
    /// UDP frames per capture as tshark counts them (`frame.protocols` containing `udp`).
    static let udpFrames: [String: Int] = [
        "late-joiner-startstop": 324, "minipeer-founder-aalink-joins": 425, "minipeer-joins-aalink": 436,
        "three-peers-remeasure-30s-crash-timeout": 2108, "three-peers-tempo-startstop": 1315,
        "tie-break-lower-session-id": 304, "two-peers-join-tempo-startstop-bye": 534, "unanswered-measurement-retries": 106,
    ]

    func testReferenceCapturesAreReadCompletely() throws {
        for name in LinkWireFixtures.captureNames {
            let file = try XCTUnwrap(FileManager.default.contents(atPath: LinkWireFixtures.path(name)))
            let frames = try PacketCapture.frames(in: [UInt8](file))
            XCTAssertTrue(frames.allSatisfy { $0.linkType == PacketCapture.ethernet }, name)
            let datagrams = try PacketCapture.datagrams(in: [UInt8](file))
            XCTAssertEqual(datagrams.count, Self.udpFrames[name], name)
            XCTAssertTrue(datagrams.allSatisfy { $0.payload.count >= 20 }, name)
            XCTAssertEqual(frames.map(\.number), Array(1...frames.count), name)
        }
    }

    // MARK: Writing test captures

    static func put32(_ value: UInt32, _ out: inout [UInt8], little: Bool) {
        let bytes = (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
        out += little ? bytes : bytes.reversed()
    }

    static func put16(_ value: UInt16, _ out: inout [UInt8], little: Bool) {
        let bytes = [UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8)]
        out += little ? bytes : bytes.reversed()
    }

    /// A classic pcap file holding `frames`.
    static func classic(_ frames: [CapturedFrame], linkType: UInt32, little: Bool, nanoseconds: Bool) -> [UInt8] {
        var out: [UInt8] = []
        put32(nanoseconds ? 0xa1b2_3c4d : 0xa1b2_c3d4, &out, little: little)
        put16(2, &out, little: little)
        put16(4, &out, little: little)
        put32(0, &out, little: little)
        put32(0, &out, little: little)
        put32(262_144, &out, little: little)
        put32(linkType, &out, little: little)
        for frame in frames {
            let seconds = frame.timestampNanoseconds / 1_000_000_000
            let fraction = frame.timestampNanoseconds % 1_000_000_000
            put32(UInt32(seconds), &out, little: little)
            put32(UInt32(nanoseconds ? fraction : fraction / 1000), &out, little: little)
            put32(UInt32(frame.data.count), &out, little: little)
            put32(UInt32(frame.data.count), &out, little: little)
            out += frame.data
        }
        return out
    }

    /// A big-endian pcapng file with one interface of `linkType` (microsecond resolution by default).
    static func bigEndianPcapng(_ frames: [CapturedFrame], linkType: UInt16) -> [UInt8] {
        var out: [UInt8] = []
        func block(_ type: UInt32, _ body: [UInt8]) {
            let padded = body + [UInt8](repeating: 0, count: (4 - body.count % 4) % 4)
            put32(type, &out, little: false)
            put32(UInt32(padded.count + 12), &out, little: false)
            out += padded
            put32(UInt32(padded.count + 12), &out, little: false)
        }
        var shb: [UInt8] = []
        put32(0x1a2b_3c4d, &shb, little: false)
        put16(1, &shb, little: false)
        put16(0, &shb, little: false)
        shb += [UInt8](repeating: 0xff, count: 8)
        block(0x0a0d_0d0a, shb)
        var idb: [UInt8] = []
        put16(linkType, &idb, little: false)
        put16(0, &idb, little: false)
        put32(0, &idb, little: false)
        block(1, idb)
        for frame in frames {
            var epb: [UInt8] = []
            let ticks = UInt64(frame.timestampNanoseconds / 1000)
            put32(0, &epb, little: false)
            put32(UInt32(ticks >> 32), &epb, little: false)
            put32(UInt32(ticks & 0xffff_ffff), &epb, little: false)
            put32(UInt32(frame.data.count), &epb, little: false)
            put32(UInt32(frame.data.count), &epb, little: false)
            block(6, epb + frame.data)
        }
        return out
    }

    /// The frame with its Ethernet header replaced by the header of `linkType`.
    static func rewrap(_ frame: CapturedFrame, as linkType: UInt32) -> CapturedFrame {
        let etherType = Array(frame.data[12..<14])
        let ip = Array(frame.data[14...])
        var data: [UInt8]
        switch linkType {
        case PacketCapture.linuxSLL: data = [0, 4, 0, 1, 0, 6, 1, 2, 3, 4, 5, 6, 0, 0] + etherType + ip
        case PacketCapture.linuxSLL2: data = etherType + [0, 0, 0, 0, 0, 2, 0, 1, 4, 6, 1, 2, 3, 4, 5, 6, 0, 0] + ip
        case PacketCapture.ethernet: data = Array(frame.data[..<12]) + [0x81, 0x00, 0x00, 0x07] + etherType + ip  // VLAN 7
        default: data = ip
        }
        var copy = frame
        copy.data = data
        copy.linkType = linkType
        return copy
    }

    func testRewrappedCapturesGiveTheSameDatagrams() throws {
        let name = "two-peers-join-tempo-startstop-bye"
        let file = [UInt8](try XCTUnwrap(FileManager.default.contents(atPath: LinkWireFixtures.path(name))))
        let frames = try PacketCapture.frames(in: file)
        let reference = try PacketCapture.datagrams(in: file)
        XCTAssertEqual(reference.count, 534)
        func microseconds(_ datagrams: [CapturedDatagram]) -> [CapturedDatagram] {
            datagrams.map {
                var copy = $0
                copy.timestampNanoseconds = copy.timestampNanoseconds / 1000 * 1000
                return copy
            }
        }
        for little in [true, false] {
            for nanoseconds in [true, false] {
                let datagrams = try PacketCapture.datagrams(in: Self.classic(frames, linkType: 1, little: little, nanoseconds: nanoseconds))
                XCTAssertTrue(datagrams == (nanoseconds ? reference : microseconds(reference)), "little \(little) ns \(nanoseconds)")
            }
            for linkType in [PacketCapture.linuxSLL, PacketCapture.linuxSLL2, PacketCapture.rawIP, PacketCapture.ethernet] {
                let rewrapped = frames.map { Self.rewrap($0, as: linkType) }
                let datagrams = try PacketCapture.datagrams(
                    in: Self.classic(rewrapped, linkType: linkType, little: little, nanoseconds: true))
                XCTAssertTrue(datagrams == reference, "link type \(linkType)")
            }
        }
        // Only the IPv6 frames, as raw IPv6: the same datagrams (frame numbers restart, so compare without).
        func unnumbered(_ datagrams: [CapturedDatagram]) -> [CapturedDatagram] {
            datagrams.map {
                var copy = $0
                copy.frameNumber = 0
                return copy
            }
        }
        let rawIPv6Only = frames.filter { $0.data[12] == 0x86 }.map { Self.rewrap($0, as: PacketCapture.rawIPv6) }
        let ipv6Datagrams = try PacketCapture.datagrams(
            in: Self.classic(rawIPv6Only, linkType: PacketCapture.rawIPv6, little: true, nanoseconds: true))
        XCTAssertEqual(ipv6Datagrams.count, 267)
        XCTAssertTrue(unnumbered(ipv6Datagrams) == unnumbered(reference.filter(\.isIPv6)), "raw IPv6")
        let pcapng = Self.bigEndianPcapng(frames.map { Self.rewrap($0, as: PacketCapture.linuxSLL2) }, linkType: 276)
        XCTAssertTrue(try PacketCapture.datagrams(in: pcapng) == microseconds(reference), "big-endian pcapng, SLL2")
    }

    func testFragmentsTruncationAndGarbage() throws {
        let file = [UInt8](try XCTUnwrap(FileManager.default.contents(atPath: LinkWireFixtures.path("unanswered-measurement-retries"))))
        let frames = try PacketCapture.frames(in: file)
        let ipv4 = try XCTUnwrap(frames.first { PacketCapture.udpDatagram($0) != nil && $0.data[12] == 0x08 })
        var fragment = ipv4
        fragment.data[14 + 6] |= 0x20  // more fragments
        XCTAssertNil(PacketCapture.udpDatagram(fragment))
        var cut = ipv4
        cut.data.removeLast(1)  // shorter than the IP total length
        XCTAssertNil(PacketCapture.udpDatagram(cut))
        XCTAssertThrowsError(try PacketCapture.frames(in: [1, 2, 3, 4, 5]))
        XCTAssertThrowsError(try PacketCapture.frames(in: Array(file[..<(file.count - 3)])))
        let classicFile = Self.classic(Array(frames.prefix(3)), linkType: 1, little: true, nanoseconds: false)
        XCTAssertThrowsError(try PacketCapture.frames(in: Array(classicFile.dropLast())))
    }
}
