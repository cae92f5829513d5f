import CSamplerate
import CSoxr
import CSpeexDSP

/// Why a `Resampler` could not be built, or failed while running.
///
/// A small value that carries the library's own message when the failure is libsoxr's (`soxr_error_t`) or
/// libsamplerate's (`src_strerror` of its error code). Throwing and catching it allocates nothing (both libraries'
/// messages are string literals in their read-only data, kept as a pointer), so the device thread may catch it;
/// reading `message` builds a `String` and allocates.
public struct ResamplerError: Error, Hashable, CustomStringConvertible, @unchecked Sendable {
    /// What failed.
    public enum Code: Hashable, Sendable {
        /// Tutti refused the configuration before calling a library: a rate outside `Resampler.supportedRates`,
        /// no channels, a period of no frames, or a correction range outside (0, 10 000] ppm.
        case invalidConfiguration
        /// `soxr_create` or `src_new` (or the calibration run that sizes the resampler's lead) failed.
        case creationFailed
        /// `soxr_process` or `src_process` reported an error.
        case processingFailed
        /// The ratio correction was refused: the resampler is fixed-ratio, the correction is outside the range
        /// chosen at init, or `soxr_set_io_ratio` or `src_set_ratio` failed.
        case correctionRejected
    }

    private enum Text {
        case tutti(StaticString)
        /// A `soxr_error_t` or a `src_strerror` result: a string literal inside the library (hence the
        /// `@unchecked Sendable`).
        case library(UnsafePointer<CChar>)
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
        text = .library(error)
    }

    /// libsamplerate's error `number` (from `src_new`, `src_process`, `src_set_ratio`), with its message.
    init(_ code: Code, samplerate number: Int32) {
        self.code = code
        if let message = src_strerror(number) {
            text = .library(message)
        } else {
            text = .tutti("libsamplerate reported an unknown error")
        }
    }

    /// speexdsp's error `number` (from `speex_resampler_init_frac`, `…_process_interleaved_float`,
    /// `…_set_rate_frac`), with its message (`speex_resampler_strerror`).
    init(_ code: Code, speex number: Int32) {
        self.code = code
        if let message = speex_resampler_strerror(number) {
            text = .library(message)
        } else {
            text = .tutti("speexdsp reported an unknown error")
        }
    }

    /// The reason in words: the library's message for its own failures (e.g. libsoxr's "I/O ratio out-of-range",
    /// libsamplerate's "SRC ratio outside [1/256, 256] range."), else Tutti's.
    /// Allocates: not for the device thread.
    public var message: String {
        switch text {
        case .tutti(let message): return message.description
        case .library(let pointer): return String(cString: pointer)
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
