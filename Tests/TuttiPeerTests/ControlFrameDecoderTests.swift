import NIOCore
import NIOEmbedded
import TuttiCore
import TuttiTesting
import TuttiWire
import XCTest

@testable import TuttiPeer

/// `ControlFrameDecoder` fed as TCP delivers bytes: whole, byte by byte, two frames split at every offset,
/// random chunkings, and hostile input (oversize prefixes, a frame cut off by the end of the stream, garbage)
/// checked against a plain reference splitter.
final class ControlFrameDecoderTests: XCTestCase {
    /// `ControlFrame`, comparable.
    private enum Frame: Equatable, CustomStringConvertible {
        case message([UInt8])
        case oversize(Int)

        init(_ frame: ControlFrame) {
            switch frame {
            case .message(let bytes): self = .message(bytes)
            case .oversize(let length): self = .oversize(length)
            }
        }

        var description: String {
            switch self {
            case .message(let bytes): "message(\(bytes.count) bytes)"
            case .oversize(let length): "oversize(\(length))"
            }
        }
    }

    private static let peerID = PeerID("0123456789abcdef0123456789abcdef")!
    private static let connectionID = ConnectionID("00112233aabbccdd")!

    /// A few real requests, with their encoded frames (length prefix + JSON).
    private static let requests: [ControlRequest] = [
        .describe,
        .statistics,
        .disconnect(DisconnectRequest(source: PortReference(peer: "stage", port: "out"))),
        .teardown(TeardownNotice(connectionID: connectionID, reason: "peer “stage” stopped — ünïcode ok")),
        .hello(PeerPresence(id: peerID, name: "stage #2", controlPort: 7_400)),
    ]

    private static func encoded(_ request: ControlRequest, id: UInt32) throws -> [UInt8] {
        try ControlCodec.encodeRequest(ControlEnvelope(id: id, message: request))
    }

    /// The bytes after a 4-byte length prefix: what the decoder must deliver for `frame`.
    private static func body(_ frame: [UInt8]) -> Frame { .message(Array(frame.dropFirst(4))) }

    private static func prefix(_ length: UInt32) -> [UInt8] {
        [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)]
    }

    /// Writes `chunks` one read at a time into a channel running the decoder, then ends the stream (EOF);
    /// returns every frame it delivered. Throws if the pipeline caught an error.
    private func decode(_ chunks: [ArraySlice<UInt8>], file: StaticString = #filePath, line: UInt = #line) throws -> [Frame] {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(ControlFrameDecoder()))
        var frames: [Frame] = []
        func drain() throws {
            while let frame = try channel.readInbound(as: ControlFrame.self) { frames.append(Frame(frame)) }
        }
        for chunk in chunks {
            try channel.writeInbound(ByteBuffer(bytes: chunk))
            try drain()
        }
        // EOF: ByteToMessageHandler runs decodeLast over what is left.
        channel.pipeline.fireChannelInactive()
        try drain()
        XCTAssertTrue(try channel.finish(acceptAlreadyClosed: true).isClean, "nothing left in the channel", file: file, line: line)
        return frames
    }

    private func decode(_ bytes: [UInt8], chunkSizes: [Int]) throws -> [Frame] {
        var chunks: [ArraySlice<UInt8>] = []
        var offset = 0
        for size in chunkSizes where offset < bytes.count {
            chunks.append(bytes[offset..<min(offset + size, bytes.count)])
            offset += size
        }
        if offset < bytes.count { chunks.append(bytes[offset...]) }
        return try decode(chunks)
    }

    /// The plain reading of a control stream: 4-byte big-endian length, then that many bytes; a length above
    /// the limit ends the stream with `.oversize`; an incomplete frame at the end yields nothing.
    private static func referenceFrames(_ bytes: [UInt8]) -> [Frame] {
        var frames: [Frame] = []
        var offset = 0
        while bytes.count - offset >= 4 {
            let length = bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            if length > ControlProtocol.maxFrameBytes {
                frames.append(.oversize(length))
                break
            }
            guard bytes.count - offset - 4 >= length else { break }
            frames.append(.message(Array(bytes[offset + 4..<offset + 4 + length])))
            offset += 4 + length
        }
        return frames
    }

    func testEveryRequestDecodesWholeAndByteByByte() throws {
        let frames = try Self.requests.enumerated().map { try Self.encoded($1, id: UInt32($0 + 1)) }
        let stream = frames.flatMap { $0 }
        let expected = frames.map(Self.body)

        XCTAssertEqual(try decode([stream[...]]), expected)
        let byteByByte = try decode(stream.indices.map { stream[$0...$0] })
        XCTAssertEqual(byteByByte, expected)
        // And each body is the request it was made from.
        for (index, frame) in byteByByte.enumerated() {
            guard case .message(let json) = frame else { return XCTFail("frame \(index) is \(frame)") }
            XCTAssertEqual(try ControlCodec.decodeRequest(json), ControlEnvelope(id: UInt32(index + 1), message: Self.requests[index]))
        }
    }

    func testTwoFramesBackToBackSplitAtEveryOffset() throws {
        let first = try Self.encoded(Self.requests[3], id: 7)
        let second = try Self.encoded(Self.requests[4], id: 8)
        let stream = first + second
        for split in 0...stream.count {
            XCTAssertEqual(
                try decode([stream[..<split], stream[split...]]), [Self.body(first), Self.body(second)], "split at \(split)")
        }
    }

    func testRandomChunkingsOfManyFramesDecodeTheSameMessages() throws {
        var random = SeededGenerator(seed: 0x5EED_C0DE)
        let frames = try (0..<40).map { try Self.encoded(Self.requests[$0 % Self.requests.count], id: UInt32($0)) }
        let stream = frames.flatMap { $0 }
        let expected = frames.map(Self.body)
        for trial in 0..<200 {
            let largest = [2, 7, 64, 700][trial % 4]
            let sizes = (0..<stream.count).map { _ in Int.random(in: 1...largest, using: &random) }
            XCTAssertEqual(try decode(stream, chunkSizes: sizes), expected, "trial \(trial)")
        }
    }

    func testAnEmptyFrameIsAnEmptyMessage() throws {
        let stream = Self.prefix(0) + Self.prefix(0) + Self.prefix(1) + [0x7B]
        XCTAssertEqual(try decode([stream[...]]), [.message([]), .message([]), .message([0x7B])])
        XCTAssertEqual(try decode(stream.indices.map { stream[$0...$0] }), [.message([]), .message([]), .message([0x7B])])
    }

    func testAFrameOfExactlyTheLimitIsDeliveredAndOneByteMoreIsOversize() throws {
        let limit = ControlProtocol.maxFrameBytes
        let largest = Self.prefix(UInt32(limit)) + [UInt8](repeating: 0x20, count: limit)
        XCTAssertEqual(try decode(largest, chunkSizes: [3, 1, 65_536, 1]), [.message([UInt8](repeating: 0x20, count: limit))])

        let tooLarge = Self.prefix(UInt32(limit + 1)) + [UInt8](repeating: 0x20, count: limit + 1)
        XCTAssertEqual(try decode([tooLarge[...]]), [.oversize(limit + 1)])
        XCTAssertEqual(try decode(Self.prefix(.max), chunkSizes: [1, 1, 1, 1]), [.oversize(Int(UInt32.max))])
    }

    /// After an oversize prefix the stream cannot be trusted: one `.oversize`, and nothing after it, even
    /// well-formed frames, whether they come in the same read or later ones.
    func testNothingIsDeliveredAfterAnOversizePrefix() throws {
        let good = try Self.encoded(.describe, id: 1)
        let stream = good + Self.prefix(UInt32(ControlProtocol.maxFrameBytes + 1)) + good + good
        let expected: [Frame] = [Self.body(good), .oversize(ControlProtocol.maxFrameBytes + 1)]
        XCTAssertEqual(try decode([stream[...]]), expected)
        XCTAssertEqual(try decode(stream.indices.map { stream[$0...$0] }), expected)
        for split in 0...stream.count {
            XCTAssertEqual(try decode([stream[..<split], stream[split...]]), expected, "split at \(split)")
        }
    }

    /// A frame cut off by the end of the stream (in its prefix or its body) is not delivered and raises no
    /// error in the pipeline: the frames before it are, and the connection's reader sees the stream end.
    func testAFrameTruncatedByTheEndOfTheStreamIsDropped() throws {
        let first = try Self.encoded(Self.requests[2], id: 1)
        let second = try Self.encoded(Self.requests[3], id: 2)
        for cut in 0..<second.count {
            let stream = first + second[..<cut]
            XCTAssertEqual(try decode([stream[...]]), [Self.body(first)], "cut at \(cut)")
            XCTAssertEqual(try decode(stream.indices.map { stream[$0...$0] }), [Self.body(first)], "cut at \(cut), byte by byte")
        }
    }

    /// Random byte streams (well-formed frames of random bytes, random prefixes, stray bytes) in random
    /// chunkings: the decoder delivers exactly what the reference splitter reads, and always returns.
    func testGarbageDecodesAsTheReferenceSplitterReadsIt() throws {
        var random = SeededGenerator(seed: 0xBAD_B17E5)
        var oversizeStreams = 0
        var truncatedStreams = 0
        for trial in 0..<500 {
            var stream: [UInt8] = []
            for _ in 0..<Int.random(in: 0...6, using: &random) {
                switch Int.random(in: 0..<20, using: &random) {
                case 0..<16:  // a frame of random bytes
                    let length = Int.random(in: 0...80, using: &random)
                    stream += Self.prefix(UInt32(length)) + (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
                case 16, 17:  // just over the limit, or anything
                    let length =
                        Bool.random(using: &random)
                        ? UInt32(ControlProtocol.maxFrameBytes + Int.random(in: 1...1_000, using: &random))
                        : UInt32.random(in: 0...UInt32.max, using: &random)
                    stream += Self.prefix(length)
                default:  // stray bytes
                    stream += (0..<Int.random(in: 1...5, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
                }
            }
            switch Int.random(in: 0..<3, using: &random) {
            case 0:  // a frame cut short
                let length = Int.random(in: 1...80, using: &random)
                stream += Self.prefix(UInt32(length)) + [UInt8](repeating: 0x41, count: Int.random(in: 0..<length, using: &random))
            case 1:  // part of a prefix
                stream += [UInt8](repeating: 0, count: Int.random(in: 1...3, using: &random))
            default:  // a clean end
                break
            }
            let expected = Self.referenceFrames(stream)
            if case .oversize = expected.last { oversizeStreams += 1 }
            let consumed = expected.reduce(0) { total, frame in
                if case .message(let bytes) = frame { return total + 4 + bytes.count }
                return total
            }
            if consumed < stream.count, expected.last.map({ if case .oversize = $0 { false } else { true } }) ?? true {
                truncatedStreams += 1
            }
            let sizes = (0..<max(stream.count, 1)).map { _ in Int.random(in: 1...[1, 3, 16, 200][trial % 4], using: &random) }
            XCTAssertEqual(try decode(stream, chunkSizes: sizes), expected, "trial \(trial): \(stream)")
        }
        // The generator reached every ending: oversize, a truncated frame, a clean end.
        XCTAssertGreaterThan(oversizeStreams, 50)
        XCTAssertGreaterThan(truncatedStreams, 50)
        XCTAssertLessThan(oversizeStreams + truncatedStreams, 450)
    }
}
