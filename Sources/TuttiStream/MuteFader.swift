#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// A mute that never clicks: the control plane sets muted or not at any moment; the device thread fades the
/// audio out or in over `fadeMilliseconds` with a raised-cosine gain (whose slope is zero at both ends and at
/// most π/2 per fade length in the middle), so that no sample of a tone above about 29 Hz (for the 10 ms
/// fade) steps further than the tone's own steps do: no click.
/// Muted, the audio is exact silence; unmuted and settled, it is untouched (and `apply` returns at once).
///
/// Threads: `isMuted` (set and read) on the control plane (any thread: an atomic); `apply` and
/// `isTransparent` on one device thread. Realtime-safe: `apply` (no allocation, lock or log).
public final class MuteFader: @unchecked Sendable {
    private let muted = Atomic<Bool>(false)
    private let fadeMilliseconds: Double
    /// Device thread: the fade's position, 0 (silent) … `length` (full), and the length it was counted in.
    private var position = 0
    private var length = 0

    /// A fader, unmuted, whose fades last `fadeMilliseconds` (10 by default: short enough to feel immediate,
    /// long enough to be no click for anything above 29 Hz).
    public init(fadeMilliseconds: Double = 10) {
        precondition(fadeMilliseconds > 0)
        self.fadeMilliseconds = fadeMilliseconds
    }

    /// Whether the audio is (being faded) silent. Any thread.
    public var isMuted: Bool {
        get { muted.load(ordering: .relaxed) }
        set { muted.store(newValue, ordering: .relaxed) }
    }

    /// Whether `apply` would leave the audio untouched (unmuted, no fade under way). Device thread.
    @inline(__always)
    public var isTransparent: Bool { !muted.load(ordering: .relaxed) && position >= length }

    /// Applies the mute to `frames` frames of `channels` interleaved samples, in place, at `sampleRate`.
    /// Device thread. Realtime-safe: yes.
    @inline(__always)
    public func apply(_ samples: UnsafeMutableBufferPointer<Float>, frames: Int, channels: Int, sampleRate: Int) {
        let fadeLength = max(1, Int((fadeMilliseconds * Double(sampleRate) / 1000).rounded()))
        if fadeLength != length {
            // The first period, or another rate: keep the fade's place as a fraction.
            position = length == 0 ? fadeLength : position * fadeLength / length
            length = fadeLength
        }
        let silent = muted.load(ordering: .relaxed)
        if !silent, position >= length { return }
        if silent, position == 0 {
            for index in 0..<(frames * channels) { samples[index] = 0 }
            return
        }
        let direction = silent ? -1 : 1
        for frame in 0..<frames {
            position = min(max(position + direction, 0), length)
            let gain = Float(0.5 - 0.5 * cos(Double.pi * Double(position) / Double(length)))
            for channel in 0..<channels { samples[frame * channels + channel] *= gain }
        }
    }
}
