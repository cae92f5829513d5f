#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import TuttiCore

/// A control message on the wire: `{"v":1,"id":7,"type":"connect","body":{...}}`, sent as one frame
/// (a 4-byte big-endian length, then that many bytes of UTF-8 JSON).
///
/// `id` pairs a response with its request. Decoding checks the version and validates every field
/// (`ControlValidation`), so the control plane only ever sees well-formed messages.
public struct ControlEnvelope<Message: Hashable & Sendable>: Hashable, Sendable {
    public var version: Int
    public var id: UInt32
    public var message: Message

    public init(id: UInt32, message: Message, version: Int = ControlProtocol.version) {
        self.version = version
        self.id = id
        self.message = message
    }
}

/// Why a control frame could not be decoded. The peer answers with `.failure(.malformed …)` and closes.
public enum ControlDecodingError: Error, Hashable, Sendable, CustomStringConvertible {
    case frameTooLarge(Int)
    /// A request larger than the peer takes (`ControlLimits.requestBytes`, below the frame limit).
    case requestTooLarge(Int, limit: Int)
    case notJSON(String)
    case unsupportedVersion(Int)
    case unknownType(String)
    case invalidField(String)

    public var description: String {
        switch self {
        case .frameTooLarge(let size): "control frame of \(size) bytes exceeds \(ControlProtocol.maxFrameBytes)"
        case .requestTooLarge(let size, let limit): "control request of \(size) bytes exceeds this peer's limit of \(limit)"
        case .notJSON(let detail): "control message is not valid JSON: \(detail)"
        case .unsupportedVersion(let version):
            "control protocol version \(version) is not supported (this peer speaks \(ControlProtocol.version))"
        case .unknownType(let type): "unknown control message type '\(type.prefix(40))'"
        case .invalidField(let detail): "invalid control message: \(detail)"
        }
    }

    /// The failure reply that a peer sends for this error.
    public var failure: ControlFailure {
        switch self {
        case .unsupportedVersion: ControlFailure(.unsupportedVersion, description)
        default: ControlFailure(.malformed, description)
        }
    }
}

private enum EnvelopeKeys: String, CodingKey {
    case v, id, type, body
}

/// Encodes and decodes control frames. Control plane only (allocates). Thread-safe: yes (stateless).
public enum ControlCodec {
    /// The 4-byte big-endian length prefix.
    public static let lengthPrefixBytes = 4

    /// Encodes `envelope` as a complete frame (length prefix + JSON).
    ///
    /// - Throws: `ControlFailure(.invalidOption, …)` when a field cannot be written as JSON (a non-finite number).
    public static func encodeRequest(_ envelope: ControlEnvelope<ControlRequest>) throws(ControlFailure) -> [UInt8] {
        guard let bytes = frame(RequestBox(envelope: envelope)) else {
            throw ControlFailure(.invalidOption, "cannot encode the \(envelope.message.typeName) request: a number is not finite")
        }
        return bytes
    }

    /// Encodes `envelope` as a complete frame (length prefix + JSON); a response that cannot be written as
    /// JSON (a non-finite number) is replaced by an internal-error response, which always can.
    public static func encodeResponse(_ envelope: ControlEnvelope<ControlResponse>) -> [UInt8] {
        if let bytes = frame(ResponseBox(envelope: envelope)) { return bytes }
        let failure = ControlFailure(.internalError, "the \(envelope.message.typeName) response could not be encoded")
        return frame(ResponseBox(envelope: ControlEnvelope(id: envelope.id, message: .failure(failure))))!
    }

    /// Decodes and validates the JSON body of one frame (without its length prefix).
    public static func decodeRequest(_ json: [UInt8]) throws(ControlDecodingError) -> ControlEnvelope<ControlRequest> {
        let box: RequestBox = try decode(json)
        try ControlValidation.validate(box.envelope.message)
        return box.envelope
    }

    /// Decodes and validates the JSON body of one frame (without its length prefix).
    public static func decodeResponse(_ json: [UInt8]) throws(ControlDecodingError) -> ControlEnvelope<ControlResponse> {
        let box: ResponseBox = try decode(json)
        try ControlValidation.validate(box.envelope.message)
        return box.envelope
    }

    /// Reads the length prefix at the start of `bytes`, if 4 bytes are there.
    ///
    /// - Throws: `.frameTooLarge` when the prefix exceeds `ControlProtocol.maxFrameBytes`.
    public static func frameLength(prefix bytes: some Collection<UInt8>) throws(ControlDecodingError) -> Int? {
        guard bytes.count >= lengthPrefixBytes else { return nil }
        var length = 0
        for byte in bytes.prefix(lengthPrefixBytes) { length = length << 8 | Int(byte) }
        guard length <= ControlProtocol.maxFrameBytes else { throw .frameTooLarge(length) }
        return length
    }

    /// `payload` behind its 4-byte big-endian length: a whole frame (a JSON message, or a handshake or
    /// encrypted message of a members-only session).
    public static func frame(payload: some Collection<UInt8>) -> [UInt8] {
        let length = UInt32(payload.count)
        return [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)] + Array(payload)
    }

    private static func frame(_ value: some Encodable) -> [UInt8]? {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let json = try? encoder.encode(value) else { return nil }
        return frame(payload: json)
    }

    private static func decode<T: Decodable>(_ json: [UInt8]) throws(ControlDecodingError) -> T {
        guard json.count <= ControlProtocol.maxFrameBytes else { throw .frameTooLarge(json.count) }
        do {
            return try JSONDecoder().decode(T.self, from: Data(json))
        } catch let error as ControlDecodingError {
            throw error
        } catch let DecodingError.dataCorrupted(context) {
            throw .notJSON(Self.summary(context))
        } catch let DecodingError.keyNotFound(key, context) {
            throw .invalidField("missing '\(Self.path(context.codingPath + [key]))'")
        } catch let DecodingError.typeMismatch(_, context) {
            throw .invalidField("wrong type at '\(Self.path(context.codingPath))'")
        } catch let DecodingError.valueNotFound(_, context) {
            throw .invalidField("null at '\(Self.path(context.codingPath))'")
        } catch {
            throw .notJSON("\(error)".prefix(120).description)
        }
    }

    private static func summary(_ context: DecodingError.Context) -> String {
        context.codingPath.isEmpty
            ? String(context.debugDescription.prefix(120))
            : "bad value at '\(path(context.codingPath))': \(context.debugDescription.prefix(80))"
    }

    private static func path(_ keys: [any CodingKey]) -> String {
        keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
    }
}

/// Reads the version first, so a message from a newer protocol gets `unsupportedVersion`, not a field error.
private func decodeHeader(_ container: KeyedDecodingContainer<EnvelopeKeys>) throws -> (version: Int, id: UInt32, type: String) {
    let version = try container.decode(Int.self, forKey: .v)
    guard version == ControlProtocol.version else { throw ControlDecodingError.unsupportedVersion(version) }
    let id = try container.decode(UInt32.self, forKey: .id)
    let type = try container.decode(String.self, forKey: .type)
    return (version, id, type)
}

private struct RequestBox: Codable {
    var envelope: ControlEnvelope<ControlRequest>

    init(envelope: ControlEnvelope<ControlRequest>) { self.envelope = envelope }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: EnvelopeKeys.self)
        let (version, id, type) = try decodeHeader(container)
        let message: ControlRequest
        switch type {
        case "describe": message = .describe
        case "statistics": message = .statistics
        case "connect": message = .connect(try container.decode(ConnectRequest.self, forKey: .body))
        case "offer": message = .offer(try container.decode(StreamOffer.self, forKey: .body))
        case "disconnect": message = .disconnect(try container.decode(DisconnectRequest.self, forKey: .body))
        case "teardown": message = .teardown(try container.decode(TeardownNotice.self, forKey: .body))
        case "hello": message = .hello(try container.decode(PeerPresence.self, forKey: .body))
        case "bye": message = .bye(try container.decode(PeerPresence.self, forKey: .body))
        case "set": message = .setParameters(try container.decode(SetParametersRequest.self, forKey: .body))
        case "upstream": message = .upstream(try container.decode(UpstreamNotice.self, forKey: .body))
        case "mute": message = .mute(try container.decode(MuteRequest.self, forKey: .body))
        case "rekey": message = .rekey(try container.decode(RekeyNotice.self, forKey: .body))
        default: throw ControlDecodingError.unknownType(type)
        }
        envelope = ControlEnvelope(id: id, message: message, version: version)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: EnvelopeKeys.self)
        try container.encode(envelope.version, forKey: .v)
        try container.encode(envelope.id, forKey: .id)
        try container.encode(envelope.message.typeName, forKey: .type)
        switch envelope.message {
        case .describe, .statistics: break
        case .connect(let body): try container.encode(body, forKey: .body)
        case .offer(let body): try container.encode(body, forKey: .body)
        case .disconnect(let body): try container.encode(body, forKey: .body)
        case .teardown(let body): try container.encode(body, forKey: .body)
        case .hello(let body), .bye(let body): try container.encode(body, forKey: .body)
        case .setParameters(let body): try container.encode(body, forKey: .body)
        case .upstream(let body): try container.encode(body, forKey: .body)
        case .mute(let body): try container.encode(body, forKey: .body)
        case .rekey(let body): try container.encode(body, forKey: .body)
        }
    }
}

private struct DisconnectedBody: Codable { var count: Int }

private struct ResponseBox: Codable {
    var envelope: ControlEnvelope<ControlResponse>

    init(envelope: ControlEnvelope<ControlResponse>) { self.envelope = envelope }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: EnvelopeKeys.self)
        let (version, id, type) = try decodeHeader(container)
        let message: ControlResponse
        switch type {
        case "description": message = .description(try container.decode(PeerDescription.self, forKey: .body))
        case "connected": message = .connected(try container.decode(ConnectionSummary.self, forKey: .body))
        case "already-connected": message = .alreadyConnected(try container.decode(ConnectionSummary.self, forKey: .body))
        case "answer": message = .answer(try container.decode(StreamAnswer.self, forKey: .body))
        case "disconnected": message = .disconnected(count: try container.decode(DisconnectedBody.self, forKey: .body).count)
        case "done": message = .done
        case "statistics": message = .statistics(try container.decode([ConnectionStatistics].self, forKey: .body))
        case "filter": message = .filter(try container.decode(FilterState.self, forKey: .body))
        case "muted": message = .muted(try container.decode(MuteState.self, forKey: .body))
        case "error": message = .failure(try container.decode(ControlFailure.self, forKey: .body))
        default: throw ControlDecodingError.unknownType(type)
        }
        envelope = ControlEnvelope(id: id, message: message, version: version)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: EnvelopeKeys.self)
        try container.encode(envelope.version, forKey: .v)
        try container.encode(envelope.id, forKey: .id)
        try container.encode(envelope.message.typeName, forKey: .type)
        switch envelope.message {
        case .done: break
        case .description(let body): try container.encode(body, forKey: .body)
        case .connected(let body), .alreadyConnected(let body): try container.encode(body, forKey: .body)
        case .answer(let body): try container.encode(body, forKey: .body)
        case .disconnected(let count): try container.encode(DisconnectedBody(count: count), forKey: .body)
        case .statistics(let body): try container.encode(body, forKey: .body)
        case .filter(let body): try container.encode(body, forKey: .body)
        case .muted(let body): try container.encode(body, forKey: .body)
        case .failure(let body): try container.encode(body, forKey: .body)
        }
    }
}
