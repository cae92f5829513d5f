import COpus

/// The linked libopus. Opus streams arrive with a later issue; the library is linked now so the
/// package's shape (a system-library target found through pkg-config) is settled.
package enum OpusLibrary {
    /// libopus's version string, e.g. "libopus 1.3.1". Thread-safe: yes.
    package static var version: String { String(cString: opus_get_version_string()) }
}
