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
        add(
            stream, streamChannels: streamChannels, into: mix, portChannels: portChannels, frames: frames, firstChannel: 0,
            frameWidth: portChannels)
    }

    /// Adds one stream's period into `portChannels` of `mix`'s channels, from `firstChannel`, where `mix` holds
    /// `frameWidth` interleaved channels (a separate-mode port's tracks side by side): the stream's track.
    /// Channels map as `add(_:streamChannels:into:portChannels:frames:)` says.
    @inlinable
    public static func add(
        _ stream: UnsafeMutableBufferPointer<Float>, streamChannels: Int, into mix: UnsafeMutableBufferPointer<Float>,
        portChannels: Int, frames: Int, firstChannel: Int, frameWidth: Int
    ) {
        precondition(firstChannel >= 0 && firstChannel + portChannels <= frameWidth)
        precondition(stream.count >= frames * streamChannels && mix.count >= frames * frameWidth)
        if streamChannels == portChannels, frameWidth == portChannels, frames > 0,
            let from = UnsafePointer(stream.baseAddress), let to = mix.baseAddress
        {
            // The usual case (a stream as wide as its port, the port mixing): one contiguous sum, vectorised.
            for index in 0..<(frames &* frameWidth) { to[index] += from[index] }
            return
        }
        for frame in 0..<frames {
            let base = frame * frameWidth + firstChannel
            for channel in 0..<portChannels {
                let source = streamChannels == 1 ? 0 : channel
                if source < streamChannels {
                    mix[base + channel] += stream[frame * streamChannels + source]
                }
            }
        }
    }

    /// The mix of a separate-mode port's tracks (`tracks` groups of `channels`, side by side in each frame of
    /// `source`): channel c of `mix` is the sum of channel c of every track. What the port's monitor plays.
    @inlinable
    public static func sumTracks(
        _ source: UnsafeMutableBufferPointer<Float>, channels: Int, tracks: Int, frames: Int, into mix: UnsafeMutableBufferPointer<Float>
    ) {
        precondition(source.count >= frames * channels * tracks && mix.count >= frames * channels)
        let width = channels * tracks
        for frame in 0..<frames {
            for channel in 0..<channels {
                var sum: Float = 0
                for track in 0..<tracks { sum += source[frame * width + track * channels + channel] }
                mix[frame * channels + channel] = sum
            }
        }
    }
}
