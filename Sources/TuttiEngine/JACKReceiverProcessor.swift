import TuttiCore
import TuttiJACK
import TuttiStream

/// What a `jack` receiver port's handler needs on JACK's process thread: its connections, the capture
/// clock, and a mix buffer of one chunk.
///
/// Lives behind an `UnsafeMutablePointer` that `ReceiverPort` allocates before the JACK client activates and
/// frees after it closes; JACK passes it to `handler` as the context. The connection table is held
/// unmanaged (the port keeps it alive), so the cycle does no reference counting; all fields are immutable.
///
/// Each cycle renders every connection's jitter buffer and mixes into the port's channels (as the paced
/// device thread does for file sinks), then writes the mix straight into the JACK output buffers; no
/// connection: silence. Cycles longer than `chunkFrames` are rendered in chunks. Cycles the client missed
/// (`skippedFrames`) are rendered and discarded first, so every play head stays on the server's frame
/// clock: the audio due then is lost, as on a sound card's overrun, and the latency stays. Realtime-safe: yes.
package struct JACKReceiverProcessor: ~Copyable {
    package let table: Unmanaged<ConnectionTable<ReceiveConnection>>
    package let captureClock: CaptureClockSource
    package let channels: Int
    /// The port's tracks (1 when it mixes): its JACK ports are `channels × tracks`, track 1's first.
    package let tracks: Int
    package let chunkFrames: Int
    /// One chunk of `channels × tracks` interleaved samples (the mixer's output layout).
    package let mix: UnsafeMutableBufferPointer<Float>
    /// The port's mute, applied to the mix it plays.
    package let fader: Unmanaged<MuteFader>
    package let sampleRate: Int
    /// A separate-mode port's monitor: one chunk of the mix of its tracks (`channels` interleaved), played on the
    /// `channels` JACK ports after the tracks'; nil without one.
    package let monitorMix: UnsafeMutableBufferPointer<Float>?

    package init(
        table: ConnectionTable<ReceiveConnection>, captureClock: CaptureClockSource, channels: Int, tracks: Int = 1, chunkFrames: Int,
        fader: MuteFader, sampleRate: Int, monitor: Bool = false
    ) {
        self.tracks = tracks
        if monitor {
            let buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: chunkFrames * channels)
            buffer.initialize(repeating: 0)
            monitorMix = buffer
        } else {
            monitorMix = nil
        }
        self.fader = Unmanaged.passUnretained(fader)
        self.sampleRate = sampleRate
        self.table = Unmanaged.passUnretained(table)
        self.captureClock = captureClock
        self.channels = channels
        self.chunkFrames = chunkFrames
        mix = .allocate(capacity: chunkFrames * channels * tracks)
        mix.initialize(repeating: 0)
    }

    deinit {
        mix.deallocate()
        monitorMix?.deallocate()
    }

    /// The JACK handler: `context` is an `UnsafeMutablePointer<JACKReceiverProcessor>`.
    package static let handler: JACKPeriodHandler = { context, buffers, frames, skipped, start, end in
        guard let context, let buffers else { return }
        context.assumingMemoryBound(to: JACKReceiverProcessor.self).pointee.process(
            buffers, frames: frames, skippedFrames: skipped, start: HostTime(nanoseconds: start), end: HostTime(nanoseconds: end))
    }

    /// Renders and discards `skippedFrames` (the cycles missed before this one, which end at `start`), then
    /// renders and mixes one cycle, chunk by chunk, into the JACK output buffers. JACK's process thread only.
    package func process(
        _ buffers: UnsafePointer<UnsafeMutablePointer<Float>?>, frames: Int, skippedFrames: Int, start: HostTime, end: HostTime
    ) {
        let width = channels * tracks
        let ports = width + (monitorMix == nil ? 0 : channels)
        for channel in 0..<ports where buffers[channel] == nil { return }
        // Frames caught up: the timeline stepped (a server's stall, missed cycles), and with it maybe the play heads.
        let stepped = skippedFrames > 0
        var skippedOffset = -skippedFrames
        while skippedOffset < 0 {
            let count = min(chunkFrames, -skippedOffset)
            let now = JACKTimeline.hostTime(atFrameOffset: skippedOffset, frames: frames, start: start, end: end)
            let (mix, channels, tracks, captureClock) = (mix, channels, tracks, captureClock)
            _ = table._withUnsafeGuaranteedRef { table in
                ReceiverPort.mixPeriod(
                    of: table, into: mix, channels: channels, tracks: tracks, frames: count, now: now, captureClock: captureClock,
                    deviceCatchesUp: false, deviceTimeStepped: stepped)
            }
            skippedOffset += count
        }
        var offset = 0
        while offset < frames {
            let count = min(chunkFrames, frames - offset)
            let now = JACKTimeline.hostTime(atFrameOffset: offset, frames: frames, start: start, end: end)
            let (mix, channels, tracks, captureClock) = (mix, channels, tracks, captureClock)
            _ = table._withUnsafeGuaranteedRef { table in
                ReceiverPort.mixPeriod(
                    of: table, into: mix, channels: channels, tracks: tracks, frames: count, now: now, captureClock: captureClock,
                    deviceCatchesUp: false, deviceTimeStepped: stepped)
            }
            let sampleRate = sampleRate
            fader._withUnsafeGuaranteedRef { $0.apply(mix, frames: count, channels: width, sampleRate: sampleRate) }
            for channel in 0..<width {
                let output = buffers[channel]! + offset
                for frame in 0..<count { output[frame] = mix[frame * width + channel] }
            }
            if let monitorMix {
                ChannelMixer.sumTracks(mix, channels: channels, tracks: tracks, frames: count, into: monitorMix)
                for channel in 0..<channels {
                    let output = buffers[width + channel]! + offset
                    for frame in 0..<count { output[frame] = monitorMix[frame * channels + channel] }
                }
            }
            offset += count
        }
    }
}
