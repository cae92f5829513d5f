// A capture-file reader: classic libpcap (both byte orders, microsecond and nanosecond magics) and pcapng
// (the format the Link reference captures use, despite their `.pcap` names), link types Ethernet (1, with
// 802.1Q/802.1ad tags), raw IP (101, 228, 229), Linux cooked SLL (113) and SLL2 (276); IPv4 (unfragmented)
// and IPv6 (extension headers skipped); UDP. Used by the Link wire tests and by `tutti-link-pcap`, which the
// Link lab tests call on their tcpdump captures.

import Foundation
import TuttiClock

/// Reads capture files into frames and UDP datagrams. Pure functions of their input: any thread may call them.
/// Malformed files throw `PacketCaptureError`; frames that are not whole UDP datagrams are skipped.
package enum PacketCapture {
    // Link types.
    package static let ethernet: UInt32 = 1
    package static let rawIP: UInt32 = 101
    package static let linuxSLL: UInt32 = 113
    package static let rawIPv4: UInt32 = 228
    package static let rawIPv6: UInt32 = 229
    package static let linuxSLL2: UInt32 = 276

    /// The UDP datagrams of the capture file at `path`.
    package static func datagrams(inFile path: String) throws -> [CapturedDatagram] {
        guard let data = FileManager.default.contents(atPath: path) else { throw PacketCaptureError.unreadableFile(path) }
        return try datagrams(in: [UInt8](data))
    }

    /// The UDP datagrams of a capture held in memory, in capture order.
    package static func datagrams(in file: [UInt8]) throws -> [CapturedDatagram] {
        try frames(in: file).compactMap(udpDatagram)
    }

    /// Every frame of a classic pcap or pcapng capture.
    package static func frames(in file: [UInt8]) throws -> [CapturedFrame] {
        guard file.count >= 4 else { throw PacketCaptureError.truncatedFile(offset: 0) }
        let magic = Reader(file, littleEndian: true).u32(0)
        switch magic {
        case 0xa1b2_c3d4, 0xa1b2_3c4d, 0xd4c3_b2a1, 0x4d3c_b2a1: return try classicFrames(file)
        case 0x0a0d_0d0a: return try pcapngFrames(file)
        default: throw PacketCaptureError.notACaptureFile(magic: magic)
        }
    }

    // MARK: Classic pcap

    private static func classicFrames(_ file: [UInt8]) throws -> [CapturedFrame] {
        guard file.count >= 24 else { throw PacketCaptureError.truncatedFile(offset: 0) }
        let little = Reader(file, littleEndian: true).u32(0)
        let reader = Reader(file, littleEndian: little == 0xa1b2_c3d4 || little == 0xa1b2_3c4d)
        let nanoseconds = reader.u32(0) == 0xa1b2_3c4d
        let linkType = reader.u32(20) & 0x0fff_ffff  // the upper bits may carry FCS information
        var frames: [CapturedFrame] = []
        var offset = 24
        while offset < file.count {
            guard offset + 16 <= file.count else { throw PacketCaptureError.truncatedFile(offset: offset) }
            let seconds = Int64(reader.u32(offset))
            let fraction = Int64(reader.u32(offset + 4))
            let length = Int(reader.u32(offset + 8))
            guard offset + 16 + length <= file.count else { throw PacketCaptureError.truncatedFile(offset: offset) }
            frames.append(
                CapturedFrame(
                    number: frames.count + 1,
                    timestampNanoseconds: seconds * 1_000_000_000 + (nanoseconds ? fraction : fraction * 1000),
                    linkType: linkType, data: Array(file[offset + 16..<offset + 16 + length])))
            offset += 16 + length
        }
        return frames
    }

    // MARK: pcapng

    private struct Interface {
        var linkType: UInt32
        var snapLength: Int
        /// Timestamp units per second as (base, exponent): 10^6 by default.
        var resolution: (base: Int64, exponent: Int64) = (10, 6)
    }

    private static func pcapngFrames(_ file: [UInt8]) throws -> [CapturedFrame] {
        var frames: [CapturedFrame] = []
        var interfaces: [Interface] = []
        var reader = Reader(file, littleEndian: true)
        var offset = 0
        while offset < file.count {
            guard offset + 12 <= file.count else { throw PacketCaptureError.truncatedFile(offset: offset) }
            if Reader(file, littleEndian: true).u32(offset) == 0x0a0d_0d0a {
                // Section header: its byte-order magic sets the endianness of the whole section.
                let order = Reader(file, littleEndian: true).u32(offset + 8)
                reader = Reader(file, littleEndian: order == 0x1a2b_3c4d)
                interfaces = []
            }
            let type = reader.u32(offset)
            let length = reader.u32(offset + 4)
            guard length >= 12, length % 4 == 0, offset + Int(length) <= file.count else {
                throw PacketCaptureError.badBlockLength(offset: offset, length: length)
            }
            let body = offset + 8
            let bodyEnd = offset + Int(length) - 4
            switch type {
            case 1:  // interface description
                var interface = Interface(linkType: UInt32(reader.u16(body)), snapLength: Int(reader.u32(body + 4)))
                var option = body + 8
                while option + 4 <= bodyEnd {
                    let code = reader.u16(option)
                    let optionLength = Int(reader.u16(option + 2))
                    if code == 0 { break }
                    if code == 9, optionLength == 1 {  // if_tsresol
                        let value = Int64(file[option + 4])
                        interface.resolution = (value & 0x80 != 0 ? 2 : 10, value & 0x7f)
                    }
                    option += 4 + (optionLength + 3) / 4 * 4
                }
                interfaces.append(interface)
            case 6, 2:  // enhanced packet, obsolete packet
                let interfaceID = type == 6 ? Int(reader.u32(body)) : Int(reader.u16(body))
                guard interfaceID < interfaces.count else { throw PacketCaptureError.unknownInterface(interfaceID) }
                let ticks = Int64(reader.u32(body + 4)) << 32 | Int64(reader.u32(body + 8))
                let captured = Int(reader.u32(body + 12))
                guard body + 20 + captured <= bodyEnd else { throw PacketCaptureError.truncatedFile(offset: offset) }
                frames.append(
                    CapturedFrame(
                        number: frames.count + 1,
                        timestampNanoseconds: nanoseconds(ticks, interfaces[interfaceID].resolution),
                        linkType: interfaces[interfaceID].linkType,
                        data: Array(file[body + 20..<body + 20 + captured])))
            case 3:  // simple packet: interface 0, no timestamp
                guard let interface = interfaces.first else { throw PacketCaptureError.unknownInterface(0) }
                let original = Int(reader.u32(body))
                var captured = min(original, bodyEnd - body - 4)
                if interface.snapLength > 0 { captured = min(captured, interface.snapLength) }
                frames.append(
                    CapturedFrame(
                        number: frames.count + 1, timestampNanoseconds: 0, linkType: interface.linkType,
                        data: Array(file[body + 4..<body + 4 + captured])))
            default:
                break  // section header, statistics, name resolution, custom blocks…
            }
            offset += Int(length)
        }
        return frames
    }

    private static func nanoseconds(_ ticks: Int64, _ resolution: (base: Int64, exponent: Int64)) -> Int64 {
        if resolution.base == 10 {
            var value = ticks
            if resolution.exponent <= 9 {
                for _ in resolution.exponent..<9 { value *= 10 }
            } else {
                for _ in 9..<resolution.exponent { value /= 10 }
            }
            return value
        }
        return Int64((Double(ticks) * 1e9 / pow(2, Double(resolution.exponent))).rounded())
    }

    // MARK: Link, network and transport layers

    /// The UDP datagram a frame carries, or `nil` (not UDP, fragment, malformed, unknown link type).
    package static func udpDatagram(_ frame: CapturedFrame) -> CapturedDatagram? {
        let data = frame.data
        let network: Int
        var etherType: UInt16?
        switch frame.linkType {
        case ethernet:
            guard data.count >= 14 else { return nil }
            var offset = 12
            var type = be16(data, offset)
            while type == 0x8100 || type == 0x88a8 {  // VLAN tags
                offset += 4
                guard data.count >= offset + 2 else { return nil }
                type = be16(data, offset)
            }
            etherType = type
            network = offset + 2
        case linuxSLL:
            guard data.count >= 16 else { return nil }
            etherType = be16(data, 14)
            network = 16
        case linuxSLL2:
            guard data.count >= 20 else { return nil }
            etherType = be16(data, 0)
            network = 20
        case rawIP, rawIPv4, rawIPv6:
            network = 0
        default:
            return nil
        }
        guard data.count > network else { return nil }
        let version = data[network] >> 4
        switch etherType {
        case nil: break
        case 0x0800?: guard version == 4 else { return nil }
        case 0x86dd?: guard version == 6 else { return nil }
        default: return nil
        }
        let ip = Array(data[network...])
        let found: (source: [UInt8], destination: [UInt8], udp: ArraySlice<UInt8>)?
        switch version {
        case 4: found = ipv4UDP(ip)
        case 6: found = ipv6UDP(ip)
        default: found = nil
        }
        guard let found, found.udp.count >= 8 else { return nil }
        let udp = Array(found.udp)
        let length = Int(be16(udp, 4))
        guard length >= 8, length <= udp.count else { return nil }
        return CapturedDatagram(
            frameNumber: frame.number, timestampNanoseconds: frame.timestampNanoseconds,
            sourceAddress: found.source, sourcePort: be16(udp, 0),
            destinationAddress: found.destination, destinationPort: be16(udp, 2),
            payload: Array(udp[8..<length]))
    }

    private static func ipv4UDP(_ ip: [UInt8]) -> (source: [UInt8], destination: [UInt8], udp: ArraySlice<UInt8>)? {
        guard ip.count >= 20 else { return nil }
        let headerLength = Int(ip[0] & 0x0f) * 4
        let totalLength = Int(be16(ip, 2))  // trims Ethernet padding
        let fragment = be16(ip, 6)
        guard headerLength >= 20, totalLength >= headerLength, totalLength <= ip.count, ip[9] == 17,
            fragment & 0x3fff == 0  // neither a later fragment nor "more fragments"
        else { return nil }
        return (Array(ip[12..<16]), Array(ip[16..<20]), ip[headerLength..<totalLength])
    }

    private static func ipv6UDP(_ ip: [UInt8]) -> (source: [UInt8], destination: [UInt8], udp: ArraySlice<UInt8>)? {
        guard ip.count >= 40 else { return nil }
        let end = 40 + Int(be16(ip, 4))
        guard end <= ip.count else { return nil }
        var next = ip[6]
        var offset = 40
        while true {
            switch next {
            case 17:
                return (Array(ip[8..<24]), Array(ip[24..<40]), ip[offset..<end])
            case 0, 43, 60:  // hop-by-hop, routing, destination options
                guard offset + 8 <= end else { return nil }
                next = ip[offset]
                offset += (Int(ip[offset + 1]) + 1) * 8
            case 44:  // fragment: only an atomic fragment (offset 0, no more fragments) is whole
                guard offset + 8 <= end, be16(ip, offset + 2) & 0xfff9 == 0 else { return nil }
                next = ip[offset]
                offset += 8
            default:
                return nil
            }
        }
    }

    // MARK: Helpers

    static func be16(_ bytes: [UInt8], _ offset: Int) -> UInt16 { UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1]) }

    /// An address and port as text (IPv6 in RFC 5952 form, via the codec's endpoint type).
    package static func text(_ address: [UInt8], _ port: UInt16) -> String {
        LinkEndpoint(addressBytes: address, port: port)?.description ?? "?:\(port)"
    }

    /// Reads integers in the file's byte order.
    struct Reader {
        let bytes: [UInt8]
        let littleEndian: Bool

        init(_ bytes: [UInt8], littleEndian: Bool) {
            self.bytes = bytes
            self.littleEndian = littleEndian
        }

        func u16(_ offset: Int) -> UInt16 {
            let (a, b) = (UInt16(bytes[offset]), UInt16(bytes[offset + 1]))
            return littleEndian ? b << 8 | a : a << 8 | b
        }

        func u32(_ offset: Int) -> UInt32 {
            let (a, b) = (UInt32(u16(offset)), UInt32(u16(offset + 2)))
            return littleEndian ? b << 16 | a : a << 16 | b
        }
    }
}
