/// How a jitter buffer's output joins received audio and the audio that stands in for what did not come:
/// silence with short fades (`Concealment.silence`), or the repetition of the audio's last period
/// (`PacketLossConcealer`) with a crossfade back into the received audio (`.repetition`, and always after the
/// buffer skipped or stretched audio to move its latency).
///
/// Realtime-safe: every method after `init` (no allocation, lock or log). Thread-safe: no (the jitter
/// buffer's owner thread).
struct PlayoutConcealment: ~Copyable {
    let mode: Concealment
    /// Frames over which audio fades out before and in after a silent gap.
    let fadeFrames: Int
    private let channels: Int
    private let packetFrames: Int
    /// The recent output and the period it repeats.
    private var concealer: PacketLossConcealer
    /// Position on the fade ramp at the end of the last output frame, 0…`fadeFrames` (gain = step / fadeFrames):
    /// 0 after silence or a fade-out, `fadeFrames` after plain audio. Kept as an integer so gains are exact.
    private var fadeStep = 0
    private var inGap = false
    /// Frames since received audio resumed after a repetition, while the crossfade lasts; -1 when none.
    private var crossfadeOffset = 0
    /// After a skip or a stretch, received audio returns through the crossfade whatever the mode.
    private(set) var crossfadeAfterSkip = false

    /// Control plane (the concealer allocates its history).
    init(mode: Concealment, channels: Int, packetFrames: Int, sampleRate: Int, fadeFrames: Int) {
        self.mode = mode
        self.fadeFrames = fadeFrames
        self.channels = channels
        self.packetFrames = packetFrames
        concealer = PacketLossConcealer(channels: channels, sampleRate: sampleRate)
    }

    /// A new anchor: the next received audio fades (or crossfades) in from silence.
    mutating func reanchor() {
        inGap = false
        crossfadeOffset = 0
        concealer.reset()
    }

    /// The output is silence for a while (idle, lost): forget the audio before it.
    mutating func silenced() {
        fadeStep = 0
        concealer.reset()
        crossfadeOffset = 0
    }

    /// Whether received audio plays through `play` (crossfading) rather than `playFaded`.
    @inline(__always)
    func crossfades(always: Bool) -> Bool { always || mode == .repetition || crossfadeAfterSkip }

    /// Whether playout is clean: not in a gap nor in a crossfade (where a latency skip may start).
    var isClean: Bool { !inGap && crossfadeOffset < 0 }

    /// Enters a gap (once) and returns the period the repetition will repeat, in frames (0: none found).
    mutating func enterGap() -> Int {
        if !inGap {
            concealer.beginGap()
            inGap = true
        }
        return concealer.repeatedPeriod
    }

    /// Looks at the audio before a skip: the period a skip should be a whole number of (0: none found).
    mutating func periodBeforeSkip() -> Int {
        concealer.beginGap()
        return concealer.repeatedPeriod
    }

    /// The buffer skipped audio: what follows crossfades in from the repetition of what came before.
    mutating func skipped() {
        crossfadeOffset = 0
        crossfadeAfterSkip = true
    }

    /// Fills `frames` frames of `output` from `outputFrame` with the repetition, and remembers them.
    /// `stretching`: the repetition raises the latency (received audio then returns through the crossfade).
    mutating func repeatAudio(into output: UnsafeMutableBufferPointer<Float>, at outputFrame: Int, frames: Int, stretching: Bool) {
        _ = enterGap()
        concealer.conceal(into: output, at: outputFrame, frames: frames)
        concealer.record(output, from: outputFrame, frames: frames)
        crossfadeOffset = 0
        if stretching { crossfadeAfterSkip = true }
    }

    /// Silence for `frames` frames (the next audio fades in).
    mutating func silence(into output: UnsafeMutableBufferPointer<Float>, at outputFrame: Int, frames: Int) {
        let start = outputFrame * channels
        for index in start..<(start + frames * channels) { output[index] = 0 }
        fadeStep = 0
    }

    /// Plays `count` frames of a packet's `samples` from `offset` at full level, crossfading from the
    /// repetition while a crossfade lasts, and remembers them for the next gap.
    mutating func play(
        _ samples: UnsafeMutableBufferPointer<Float>, offset: Int, count: Int, into output: UnsafeMutableBufferPointer<Float>,
        at outputFrame: Int
    ) {
        let base = offset * channels
        let destination = outputFrame * channels
        for index in 0..<(count * channels) { output[destination + index] = samples[base + index] }
        inGap = false
        if crossfadeOffset >= 0 {
            let remaining = concealer.continuation(into: output, at: outputFrame, frames: count, offset: crossfadeOffset)
            crossfadeOffset = remaining > 0 ? crossfadeOffset + count : -1
            if remaining <= 0 { crossfadeAfterSkip = false }
        }
        concealer.record(output, from: outputFrame, frames: count)
    }

    /// Silence mode: plays `count` frames of a packet's `samples` from `offset`, fading in after silence (a
    /// step a frame) and, `fadeOutAtEnd`, out over the packet's last `fadeFrames` toward a missing packet.
    mutating func playFaded(
        _ samples: UnsafeMutableBufferPointer<Float>, offset: Int, count: Int, into output: UnsafeMutableBufferPointer<Float>,
        at outputFrame: Int, fadeOutAtEnd: Bool
    ) {
        let fadeOutStart = packetFrames - fadeFrames
        for frame in 0..<count {
            var step = min(fadeFrames, fadeStep + 1)
            let framePosition = offset + frame
            if fadeOutAtEnd, framePosition >= fadeOutStart {
                step = min(step, packetFrames - framePosition - 1)
            }
            fadeStep = step
            let gain = step == fadeFrames ? Float(1) : Float(step) / Float(fadeFrames)
            let source = framePosition * channels
            let destination = (outputFrame + frame) * channels
            for channel in 0..<channels {
                output[destination + channel] = samples[source + channel] * gain
            }
        }
    }
}
