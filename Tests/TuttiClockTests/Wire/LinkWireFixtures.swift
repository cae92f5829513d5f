// Shared helpers of the Link wire tests: the reference captures, hex, and sorting datagrams by protocol.

import TuttiClock
import TuttiTesting
import TuttiLinkCapture
import XCTest

enum LinkWireFixtures {
    /// `Tests/TuttiClockTests/Fixtures/link-captures`, found from this file's path (no bundle resources).
    static let capturesDirectory: String = {
        var components = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
        components.removeLast(2)  // "Wire", this file
        return components.joined(separator: "/") + "/Fixtures/link-captures"
    }()

    /// The reference captures (see the README next to them).
    static let captureNames = [
        "late-joiner-startstop",
        "minipeer-founder-aalink-joins",
        "minipeer-joins-aalink",
        "three-peers-remeasure-30s-crash-timeout",
        "three-peers-tempo-startstop",
        "tie-break-lower-session-id",
        "two-peers-join-tempo-startstop-bye",
        "unanswered-measurement-retries",
    ]

    static func path(_ name: String) -> String { "\(capturesDirectory)/\(name).pcap" }

    static func datagrams(_ name: String) throws -> [CapturedDatagram] {
        try PacketCapture.datagrams(inFile: path(name))
    }

    static func isDiscovery(_ payload: [UInt8]) -> Bool { payload.starts(with: discoveryMagic) }
    static func isMeasurement(_ payload: [UInt8]) -> Bool { payload.starts(with: measurementMagic) }

    static let discoveryMagic: [UInt8] = Array("_asdp_v".utf8) + [1]
    static let measurementMagic: [UInt8] = Array("_link_v".utf8) + [1]

    /// Bytes from a hex string; spaces and newlines are ignored.
    static func hex(_ text: String) -> [UInt8] { hexBytes(text) }

    static func nodeID(_ ascii: String) -> NodeID { NodeID(bytes: Array(ascii.utf8))! }

    /// Frame #21 of capture 1 (reference section 9.1): B's first ALIVE over IPv4, 107 bytes.
    static let frame21 = hex(
        """
        5f617364705f760101050000412277773c307056746d6c6e0000001800000000000a2c2b0000000000000270
        00000000000000007365737300000008412277773c30705673747374000000110000000000000000000000000000000000
        6d65703400000006c6120102ba07
        """)

    /// Frame #37 of capture 1 (reference section 9.4): a 73-byte PONG.
    static let frame37 = hex(
        """
        5f6c696e6b5f7601027365737300000008412277773c3070565f5f677400000008000000000000066d
        5f5f6874000000080000000040ca1d585f7067740000000800000000000003ec
        """)

    /// A decoded discovery message, or a test failure.
    static func discovery(
        _ bytes: [UInt8], file: StaticString = #filePath, line: UInt = #line
    ) -> LinkDiscoveryMessage? {
        do { return try LinkDiscoveryMessage.decode(bytes) } catch {
            XCTFail("discovery decode failed: \(error)", file: file, line: line)
            return nil
        }
    }

    /// A decoded measurement message, or a test failure.
    static func measurement(
        _ bytes: [UInt8], file: StaticString = #filePath, line: UInt = #line
    ) -> LinkMeasurementMessage? {
        do { return try LinkMeasurementMessage.decode(bytes) } catch {
            XCTFail("measurement decode failed: \(error)", file: file, line: line)
            return nil
        }
    }

    /// The `LinkWireError` a throwing expression throws, or `nil` when it returns (any other error is a
    /// test failure).
    static func error<T>(
        file: StaticString = #filePath, line: UInt = #line, _ body: () throws -> T
    ) -> LinkWireError? {
        do {
            _ = try body()
            return nil
        } catch let error as LinkWireError {
            return error
        } catch {
            XCTFail("unexpected error \(error)", file: file, line: line)
            return nil
        }
    }
}
