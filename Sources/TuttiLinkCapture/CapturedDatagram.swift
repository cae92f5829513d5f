// One UDP datagram of a capture file.

/// One UDP datagram found in a capture.
///
/// Thread-safe: a value.
package struct CapturedDatagram: Equatable, Sendable {
    package var frameNumber: Int
    package var timestampNanoseconds: Int64
    /// Address bytes (4 or 16) and port.
    package var sourceAddress: [UInt8]
    package var sourcePort: UInt16
    package var destinationAddress: [UInt8]
    package var destinationPort: UInt16
    package var payload: [UInt8]

    package var isIPv6: Bool { sourceAddress.count == 16 }

    /// `198.18.1.2:45987` or `[fe80::…]:59405`.
    package var source: String { PacketCapture.text(sourceAddress, sourcePort) }
    package var destination: String { PacketCapture.text(destinationAddress, destinationPort) }
}
