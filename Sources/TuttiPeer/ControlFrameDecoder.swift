import NIOCore
import TuttiWire

/// One control frame off a TCP stream, or the reason the stream cannot be read further.
enum ControlFrame: Sendable {
    case message([UInt8])
    /// The length prefix exceeds the decoder's maximum: the peer answers with an error and closes.
    case oversize(Int)
}

/// Splits a TCP byte stream into length-prefixed control frames. Control plane (NIO event loop).
struct ControlFrameDecoder: ByteToMessageDecoder {
    typealias InboundOut = ControlFrame
    private var failed = false
    /// The largest frame read (a server reads requests, smaller than the answers a client reads).
    let maximumBytes: Int

    init(maximumBytes: Int = ControlProtocol.maxFrameBytes) {
        self.maximumBytes = maximumBytes
    }

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        if failed {
            buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
            return .needMoreData
        }
        guard let length = buffer.getInteger(at: buffer.readerIndex, as: UInt32.self) else { return .needMoreData }
        guard Int(length) <= maximumBytes else {
            failed = true
            buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
            context.fireChannelRead(wrapInboundOut(.oversize(Int(length))))
            return .needMoreData
        }
        guard buffer.readableBytes >= 4 + Int(length) else { return .needMoreData }
        buffer.moveReaderIndex(forwardBy: 4)
        let bytes = buffer.readBytes(length: Int(length))!
        context.fireChannelRead(wrapInboundOut(.message(bytes)))
        return .continue
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        while try decode(context: context, buffer: &buffer) == .continue {}
        return .needMoreData
    }
}
