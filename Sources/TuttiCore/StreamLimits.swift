/// Bounds that every stream format must respect; values outside them are refused at negotiation and
/// rejected when decoded from the network, so the data plane can size its buffers once.
public enum StreamLimits {
    /// Sample rates Tutti can stream.
    public static let sampleRates: ClosedRange<Int> = 8_000...192_000
    /// Channels per stream.
    public static let channels: ClosedRange<Int> = 1...32
    /// Frames per packet.
    public static let packetFrames: ClosedRange<Int> = 16...1_024
    /// Largest RTP payload we send or accept, in bytes (fits an Ethernet MTU with headers for common
    /// formats; larger formats must use smaller packets).
    public static let maxPayloadBytes = 1_400
    /// Largest target latency, in milliseconds.
    public static let maxTargetLatencyMilliseconds = 2_000
    /// Largest datagram we accept (header, extension and payload).
    public static let maxDatagramBytes = 2_048
}
