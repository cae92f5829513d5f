/// Adds streams into a port's period: the receiver port's mix of all its connections.
/// Realtime-safe: yes. Thread-safe: stateless (the caller owns the buffers).
public enum ChannelMixer {
    /// Adds one stream's period (`streamChannels` interleaved) into `mix` (`portChannels` interleaved):
    /// stream channel i to port channel i; a mono stream goes to every port channel; extra stream
    /// channels are dropped and extra port channels left as they are.
    @inlinable
    public static func add(
        _ stream: UnsafeMutableBufferPointer<Float>, streamChannels: Int, into mix: UnsafeMutableBufferPointer<Float>,
        portChannels: Int, frames: Int
    ) {
        precondition(stream.count >= frames * streamChannels && mix.count >= frames * portChannels)
        for frame in 0..<frames {
            for channel in 0..<portChannels {
                let source = streamChannels == 1 ? 0 : channel
                if source < streamChannels {
                    mix[frame * portChannels + channel] += stream[frame * streamChannels + source]
                }
            }
        }
    }
}
