import TuttiCore
import TuttiIO
import TuttiStream

/// What a paced receiver port (a `wav`, `stdout` or `null` sink) does in each period of its engine clock:
/// render every connection's jitter buffer, mix them into the port's channels, and queue the mix for the
/// sink's writer thread.
///
/// Lives behind an `UnsafeMutablePointer` that `ReceiverPort` allocates when a take starts and frees after
/// detaching it from the clock; the clock passes it to `handler` as the context. Class references are held
/// unmanaged (the port keeps them alive); all fields are immutable. Realtime-safe: yes.
package struct PacedReceiverProcessor: ~Copyable {
    package let table: Unmanaged<ConnectionTable<ReceiveConnection>>
    package let ring: Unmanaged<SampleRing>
    package let timing: Unmanaged<RecordingTiming>
    package let captureClock: CaptureClockSource
    package let channels: Int
    /// One period of `channels` interleaved samples: the mix.
    package let mix: UnsafeMutableBufferPointer<Float>
    /// The port's mute, applied to the mix it plays.
    package let fader: Unmanaged<MuteFader>
    package let sampleRate: Int
    /// The application's block (a `block` sink), given the mix each period.
    package let block: Unmanaged<AudioBlock>?

    package init(
        table: ConnectionTable<ReceiveConnection>, writer: SinkWriter, captureClock: CaptureClockSource, channels: Int,
        periodFrames: Int, fader: MuteFader, sampleRate: Int, block: AudioBlock? = nil
    ) {
        self.block = block.map { Unmanaged.passUnretained($0) }
        self.fader = Unmanaged.passUnretained(fader)
        self.sampleRate = sampleRate
        self.table = Unmanaged.passUnretained(table)
        ring = Unmanaged.passUnretained(writer.ring)
        timing = Unmanaged.passUnretained(writer.timing)
        self.captureClock = captureClock
        self.channels = channels
        mix = .allocate(capacity: periodFrames * channels)
        mix.initialize(repeating: 0)
    }

    deinit { mix.deallocate() }

    /// The clock's handler: `context` is an `UnsafeMutablePointer<PacedReceiverProcessor>`.
    package static let handler: PacedDeviceClock.Handler = { context, periodTime, frames in
        context!.assumingMemoryBound(to: PacedReceiverProcessor.self).pointee.process(
            frames: frames, periodTime: HostTime(nanoseconds: periodTime))
    }

    /// Plays one period that starts at `periodTime` into the sink's ring. Clock thread only.
    package func process(frames: Int, periodTime: HostTime) {
        let (mix, channels, captureClock) = (mix, channels, captureClock)
        let captureTime = table._withUnsafeGuaranteedRef { table in
            ReceiverPort.mixPeriod(
                of: table, into: mix, channels: channels, frames: frames, now: periodTime, captureClock: captureClock,
                captureTimeOn: captureClock.kind)
        }
        let sampleRate = sampleRate
        fader._withUnsafeGuaranteedRef { $0.apply(mix, frames: frames, channels: channels, sampleRate: sampleRate) }
        block?._withUnsafeGuaranteedRef { $0(mix, frames: frames, channels: channels, captureTime: captureTime) }
        timing._withUnsafeGuaranteedRef {
            $0.noteFirstPeriod(hostTime: periodTime.nanoseconds, sessionTime: captureClock.now(on: .linkGhost, at: periodTime))
        }
        ring._withUnsafeGuaranteedRef { _ = $0.write(UnsafeBufferPointer(rebasing: mix[0..<(frames * channels)])) }
    }
}
