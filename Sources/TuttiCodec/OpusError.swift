import COpus
import TuttiCore

/// A failure of an Opus encoder or decoder: a libopus error code (`OPUS_BAD_ARG` … `OPUS_ALLOC_FAIL`), or
/// settings that `OpusSettings.validate()` rejects.
///
/// Creating and throwing one does not allocate, so the data plane may throw it (a packet that fails to
/// decode is counted and dropped, as bad network input). `message` is libopus's `opus_strerror` text, looked
/// up when asked for (it builds a `String`: control plane). Thread-safe: yes.
public enum OpusError: Error, Hashable, Sendable, CustomStringConvertible {
    /// `OPUS_BAD_ARG`: an argument is invalid or out of range, e.g. a concealed length that is not a
    /// multiple of 2.5 ms.
    case badArgument
    /// `OPUS_BUFFER_TOO_SMALL`: the output buffer cannot hold the packet or the decoded frames.
    case bufferTooSmall
    /// `OPUS_INTERNAL_ERROR`.
    case internalError
    /// `OPUS_INVALID_PACKET`: the packet is corrupted or not Opus (also: an empty packet).
    case invalidPacket
    /// `OPUS_UNIMPLEMENTED`: an unknown request.
    case unimplemented
    /// `OPUS_INVALID_STATE`.
    case invalidState
    /// `OPUS_ALLOC_FAIL`: libopus could not allocate its state (only when creating a state).
    case allocationFailed
    /// A negative code this libopus version does not document.
    case unknown(code: Int32)
    /// The settings or channel count given to an encoder or decoder are unusable (no libopus call was made).
    case invalidSettings(OpusSettingsError)

    /// The error for a negative libopus status code.
    init(code: Int32) {
        switch code {
        case OPUS_BAD_ARG: self = .badArgument
        case OPUS_BUFFER_TOO_SMALL: self = .bufferTooSmall
        case OPUS_INTERNAL_ERROR: self = .internalError
        case OPUS_INVALID_PACKET: self = .invalidPacket
        case OPUS_UNIMPLEMENTED: self = .unimplemented
        case OPUS_INVALID_STATE: self = .invalidState
        case OPUS_ALLOC_FAIL: self = .allocationFailed
        default: self = .unknown(code: code)
        }
    }

    /// libopus's code for this error (`OPUS_BAD_ARG` for `.invalidSettings`). Realtime-safe: yes.
    public var code: Int32 {
        switch self {
        case .badArgument, .invalidSettings: OPUS_BAD_ARG
        case .bufferTooSmall: OPUS_BUFFER_TOO_SMALL
        case .internalError: OPUS_INTERNAL_ERROR
        case .invalidPacket: OPUS_INVALID_PACKET
        case .unimplemented: OPUS_UNIMPLEMENTED
        case .invalidState: OPUS_INVALID_STATE
        case .allocationFailed: OPUS_ALLOC_FAIL
        case .unknown(let code): code
        }
    }

    /// libopus's own text for `code` (`opus_strerror`), e.g. "corrupted stream"; for `.invalidSettings`, the
    /// settings error's line. Control plane (allocates).
    public var message: String {
        if case .invalidSettings(let error) = self { return error.description }
        return String(cString: opus_strerror(code))
    }

    /// One line: "libopus error -4 (corrupted stream)", or the settings error's line.
    public var description: String {
        if case .invalidSettings(let error) = self { return error.description }
        return "libopus error \(code) (\(message))"
    }
}
