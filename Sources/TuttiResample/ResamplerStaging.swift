/// Input a library has not taken yet, interleaved, from its start: the converters that take only what their
/// output needs (libsamplerate, speexdsp, zita-resampler) are offered all of it on every call, and what they leave
/// stays here for the next. Fixed capacity, allocated at init.
///
/// Owns its buffer: its owner calls `free()` exactly once. Realtime-safe after init: yes. Thread-safe: no.
struct ResamplerStaging {
    let channels: Int
    let capacityFrames: Int
    private let buffer: UnsafeMutableBufferPointer<Float>
    /// Frames held, from `base`.
    private(set) var frames: Int

    /// A staging buffer of `capacityFrames` frames holding `silentFrames` of silence. Allocates.
    init(channels: Int, capacityFrames: Int, silentFrames: Int) {
        precondition(silentFrames <= capacityFrames)
        self.channels = channels
        self.capacityFrames = capacityFrames
        buffer = .allocate(capacity: capacityFrames * channels)
        buffer.initialize(repeating: 0)
        frames = silentFrames
    }

    /// The first frame held.
    var base: UnsafeMutablePointer<Float> { buffer.baseAddress! }

    /// Appends `count` frames of `input` (nothing if nil).
    /// - Precondition: they fit (callers that give what `inputFramesNeeded` asks hold little).
    mutating func append(_ input: UnsafePointer<Float>?, count: Int) {
        precondition(
            frames + count <= capacityFrames,
            "more input held than the resampler can stage: give what inputFramesNeeded asks")
        if count > 0, let input { (base + frames * channels).update(from: input, count: count * channels) }
        frames += count
    }

    /// Drops the first `count` frames (those the library took), moving the rest to the start.
    mutating func removeFirst(_ count: Int) {
        frames -= count
        if count > 0, frames > 0 {
            // Forward copy to a lower address: safe although the ranges may overlap.
            base.update(from: base + count * channels, count: frames * channels)
        }
    }

    /// Releases the buffer. Once.
    func free() { buffer.deallocate() }
}
