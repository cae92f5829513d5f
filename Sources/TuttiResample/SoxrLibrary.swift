import CSoxr

/// The linked libsoxr (the SoX resampler), used for sample-rate conversion and clock-drift compensation.
package enum SoxrLibrary {
    /// libsoxr's version string, e.g. "libsoxr-0.1.3". Thread-safe: yes.
    package static var version: String { String(cString: soxr_version()) }
}
