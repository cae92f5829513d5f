import TuttiStream
import XCTest

/// A receiver port's mixing: each stream into its track's channels (tracks side by side in each frame), mono to
/// every channel of its track, and the monitor's mix of the tracks.
final class ChannelMixerTests: XCTestCase {
    private func buffer(_ values: [Float]) -> UnsafeMutableBufferPointer<Float> {
        let buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: values.count)
        _ = buffer.initialize(from: values)
        return buffer
    }

    func testAStreamGoesIntoItsTracksChannelsOnly() {
        // Two frames of a stereo stream into track 2 of three stereo tracks (6 channels a frame).
        let stream = buffer([1, 2, 3, 4])
        let mix = buffer([Float](repeating: 0, count: 12))
        defer {
            stream.deallocate()
            mix.deallocate()
        }
        ChannelMixer.add(stream, streamChannels: 2, into: mix, portChannels: 2, frames: 2, firstChannel: 2, frameWidth: 6)
        XCTAssertEqual(Array(mix), [0, 0, 1, 2, 0, 0, 0, 0, 3, 4, 0, 0])
        // A mono stream into track 3: both of its channels.
        let mono = buffer([5, 6])
        defer { mono.deallocate() }
        ChannelMixer.add(mono, streamChannels: 1, into: mix, portChannels: 2, frames: 2, firstChannel: 4, frameWidth: 6)
        XCTAssertEqual(Array(mix), [0, 0, 1, 2, 5, 5, 0, 0, 3, 4, 6, 6])
    }

    /// The usual case, a stream as wide as its mixing port (one contiguous sum), adds sample for sample on top
    /// of what is there, and only the period's frames.
    func testStreamsAsWideAsAMixingPortAddUpSampleForSample() {
        let first = buffer([1, 2, 3, 4, 5, 6])
        let second = buffer([10, 20, 30, 40, 50, 60])
        let mix = buffer([Float](repeating: 0, count: 8))
        defer {
            first.deallocate()
            second.deallocate()
            mix.deallocate()
        }
        ChannelMixer.add(first, streamChannels: 2, into: mix, portChannels: 2, frames: 3)
        ChannelMixer.add(second, streamChannels: 2, into: mix, portChannels: 2, frames: 2)
        XCTAssertEqual(Array(mix), [11, 22, 33, 44, 5, 6, 0, 0])
    }

    func testTheMonitorPlaysTheSumOfTheTracks() {
        let tracks = buffer([1, 2, 10, 20, 3, 4, 30, 40])  // two frames of two stereo tracks
        let mix = buffer([0, 0, 0, 0])
        defer {
            tracks.deallocate()
            mix.deallocate()
        }
        ChannelMixer.sumTracks(tracks, channels: 2, tracks: 2, frames: 2, into: mix)
        XCTAssertEqual(Array(mix), [11, 22, 33, 44])
    }
}
