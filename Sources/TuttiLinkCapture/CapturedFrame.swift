// One frame of a capture file.

/// One captured frame, before any protocol decoding.
///
/// Thread-safe: a value.
package struct CapturedFrame: Equatable, Sendable {
    /// 1-based position among all packets of the file (Wireshark's frame number).
    package var number: Int
    /// Capture time in nanoseconds since the Unix epoch.
    package var timestampNanoseconds: Int64
    package var linkType: UInt32
    package var data: [UInt8]
}
