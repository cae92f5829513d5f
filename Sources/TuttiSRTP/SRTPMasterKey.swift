/// One direction's SRTP master key and salt, drawn per stream by its sender and carried to the receiver inside
/// the members' encrypted control exchange (never in the clear). A value; thread-safe: yes.
public struct SRTPMasterKey: Hashable, Sendable, CustomStringConvertible {
    public let suite: SRTPSuite
    /// The master key followed by the master salt (`suite.masterLength` bytes).
    public let bytes: [UInt8]

    /// - Returns: nil when `bytes` is not `suite.masterLength` long.
    public init?(suite: SRTPSuite, bytes: [UInt8]) {
        guard bytes.count == suite.masterLength else { return nil }
        self.suite = suite
        self.bytes = bytes
    }

    /// A fresh key and salt from the system's random source.
    public static func random(_ suite: SRTPSuite) -> SRTPMasterKey {
        var generator = SystemRandomNumberGenerator()
        return SRTPMasterKey(suite: suite, bytes: (0..<suite.masterLength).map { _ in generator.next() })!
    }

    /// Never the key: logs name the suite only.
    public var description: String { "SRTP \(suite.rawValue) key" }
}
