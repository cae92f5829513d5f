import TuttiCore

/// peer → peer, in a members-only session: the sender of connection `connectionID` gives its receiver the
/// stream's next SRTP key (issue 14: on a schedule, after the session key changed, and when the stream
/// resumes after a long loss). The receiver stages it and answers `.done`; only then does the sender switch
/// to it, so no packet is sent under a key the receiver lacks. Only the connection's sender may send it. A
/// value; thread-safe: yes.
public struct RekeyNotice: Hashable, Sendable, Codable {
    public var connectionID: ConnectionID
    public var mediaKey: MediaKeying
    /// The SRTP index (roll-over counter × 65536 + sequence number) of the last packet the sender protected
    /// when it drew the key: the receiver starts the new key there rather than guessing the roll-over counter,
    /// which RFC 3711's guess gets wrong after more than 2^15 packets of silence (a long link-down).
    public var senderIndex: UInt64?

    public init(connectionID: ConnectionID, mediaKey: MediaKeying, senderIndex: UInt64? = nil) {
        self.connectionID = connectionID
        self.mediaKey = mediaKey
        self.senderIndex = senderIndex
    }
}
