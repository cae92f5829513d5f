import CSoxr

/// Why a `Resampler` could not be built, or failed while running.
///
/// A small value that carries libsoxr's own message (`soxr_error_t`) when the failure is libsoxr's. Throwing
/// and catching it allocates nothing (libsoxr's messages are string literals in its read-only data, kept as a
/// pointer), so the device thread may catch it; reading `message` builds a `String` and allocates.
public struct ResamplerError: Error, Hashable, CustomStringConvertible, @unchecked Sendable {
    /// What failed.
    public enum Code: Hashable, Sendable {
        /// Tutti refused the configuration before calling libsoxr: a rate outside `Resampler.supportedRates`,
        /// no channels, a period of no frames, or a correction range outside (0, 10 000] ppm.
        case invalidConfiguration
        /// `soxr_create` (or the calibration run that sizes the resampler's lead) failed.
        case creationFailed
        /// `soxr_process` reported an error.
        case processingFailed
        /// The ratio correction was refused: the resampler is fixed-ratio, the correction is outside the range
        /// chosen at init, or `soxr_set_io_ratio` failed.
        case correctionRejected
    }

    private enum Text {
        case tutti(StaticString)
        /// A `soxr_error_t`: a string literal inside libsoxr (hence the `@unchecked Sendable`).
        case libsoxr(UnsafePointer<CChar>)
    }

    /// What failed.
    public let code: Code
    private let text: Text

    init(_ code: Code, _ message: StaticString) {
        self.code = code
        text = .tutti(message)
    }

    init(_ code: Code, soxr error: UnsafePointer<CChar>) {
        self.code = code
        text = .libsoxr(error)
    }

    /// The reason in words: libsoxr's message for its own failures (e.g. "I/O ratio out-of-range"), else Tutti's.
    /// Allocates: not for the device thread.
    public var message: String {
        switch text {
        case .tutti(let message): return message.description
        case .libsoxr(let pointer): return String(cString: pointer)
        }
    }

    public var description: String { "\(code): \(message)" }

    public static func == (lhs: ResamplerError, rhs: ResamplerError) -> Bool {
        lhs.code == rhs.code && lhs.message == rhs.message
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(message)
    }
}
