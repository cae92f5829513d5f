import TuttiCore
import TuttiIO
import TuttiStream

/// What a paced receiver port (a `wav`, `stdout` or `null` sink) does in each period of its engine clock:
/// render every connection's jitter buffer, mix them into the port's channels (at a separate-mode port, each
/// into its own track's channels, tracks side by side), and queue the period for the sink's writer thread.
///
/// **Phase alignment.** A port alone on its clock with one stream lets that stream delay the clock once it
/// anchors (`StreamReceiver.render`'s `deviceDelayLimitFrames`), by less than a period, so that its reads
/// come just as its packets have waited their slack and it plays at its target, not up to a packet above it.
/// The sink gets as many frames of silence as the clock was delayed by, so that its frames stay one to one
/// with the clock's time (a recording's timing holds). While the stream plays, the clock then follows it
/// (`LatencyPolicy.deviceMove`): a frame earlier or later now and then, as the two peers' clocks drift apart,
/// except into a WAV recording, whose `.timing.json` maps its frames to the host clock from the first on.
///
/// Lives behind an `UnsafeMutablePointer` that `ReceiverPort` allocates when a take starts and frees after
/// detaching it from the clock; the clock passes it to `handler` as the context. Class references are held
/// unmanaged (the port keeps them alive); all fields are immutable. Realtime-safe: yes.
package struct PacedReceiverProcessor: ~Copyable {
    package let table: Unmanaged<ConnectionTable<ReceiveConnection>>
    package let ring: Unmanaged<SampleRing>
    /// The writer of a `discard` sink, which the period's frames are only counted to (nil: queue them in `ring`).
    package let discarding: Unmanaged<SinkWriter>?
    package let timing: Unmanaged<RecordingTiming>
    package let captureClock: CaptureClockSource
    package let channels: Int
    /// The port's tracks (1 when it mixes).
    package let tracks: Int
    /// One period of `channels × tracks` interleaved samples: the mix, or the tracks side by side.
    package let mix: UnsafeMutableBufferPointer<Float>
    /// The port's mute, applied to the mix it plays.
    package let fader: Unmanaged<MuteFader>
    package let sampleRate: Int
    /// The clock the port runs on, which it may move (`EngineClock.moveNextPeriod(byFrames:startingStream:)`).
    package let clock: Unmanaged<EngineClock>
    /// Whether the clock may follow the stream once it plays: not for a recording timed on the host clock.
    package let followsStream: Bool
    /// The application's block (a `block` sink), given the mix each period.
    package let block: Unmanaged<AudioBlock>?
    /// A separate-mode port's monitor: the ring of the writer that plays the mix of its tracks, and one period of
    /// that mix (`channels` interleaved); nil without a monitor.
    package let monitorRing: Unmanaged<SampleRing>?
    package let monitorMix: UnsafeMutableBufferPointer<Float>?

    package init(
        table: ConnectionTable<ReceiveConnection>, writer: SinkWriter, captureClock: CaptureClockSource, channels: Int,
        periodFrames: Int, fader: MuteFader, sampleRate: Int, clock: EngineClock, followsStream: Bool = true, tracks: Int = 1,
        block: AudioBlock? = nil, monitor: SinkWriter? = nil
    ) {
        self.clock = Unmanaged.passUnretained(clock)
        self.followsStream = followsStream
        self.tracks = tracks
        monitorRing = monitor.map { Unmanaged.passUnretained($0.ring) }
        monitorMix = monitor.map { _ in
            let buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: periodFrames * channels)
            buffer.initialize(repeating: 0)
            return buffer
        }
        self.block = block.map { Unmanaged.passUnretained($0) }
        self.fader = Unmanaged.passUnretained(fader)
        self.sampleRate = sampleRate
        self.table = Unmanaged.passUnretained(table)
        ring = Unmanaged.passUnretained(writer.ring)
        discarding = writer.discards ? Unmanaged.passUnretained(writer) : nil
        timing = Unmanaged.passUnretained(writer.timing)
        self.captureClock = captureClock
        self.channels = channels
        mix = .allocate(capacity: periodFrames * channels * tracks)
        mix.initialize(repeating: 0)
    }

    deinit {
        mix.deallocate()
        monitorMix?.deallocate()
    }

    /// The clock's handler: `context` is an `UnsafeMutablePointer<PacedReceiverProcessor>`.
    package static let handler: PacedDeviceClock.Handler = { context, periodTime, frames in
        context!.assumingMemoryBound(to: PacedReceiverProcessor.self).pointee.process(
            frames: frames, periodTime: HostTime(nanoseconds: periodTime))
    }

    /// Plays one period that starts at `periodTime` into the sink's ring. Clock thread only.
    package func process(frames: Int, periodTime: HostTime) {
        let (mix, channels, tracks, captureClock) = (mix, channels, tracks, captureClock)
        let delayLimit = block == nil && clock._withUnsafeGuaranteedRef { $0.runsOnePortOnly } && playsOneStream ? frames - 1 : 0
        let captureTime = table._withUnsafeGuaranteedRef { table in
            ReceiverPort.mixPeriod(
                of: table, into: mix, channels: channels, tracks: tracks, frames: frames, now: periodTime, captureClock: captureClock,
                captureTimeOn: captureClock.kind, deviceCatchesUp: true, deviceDelayLimitFrames: delayLimit)
        }
        defer { if delayLimit > 0 { moveClockIfAsked() } }
        let (sampleRate, width) = (sampleRate, channels * tracks)
        fader._withUnsafeGuaranteedRef { $0.apply(mix, frames: frames, channels: width, sampleRate: sampleRate) }
        block?._withUnsafeGuaranteedRef { $0(mix, frames: frames, channels: width, captureTime: captureTime) }
        timing._withUnsafeGuaranteedRef {
            $0.noteFirstPeriod(hostTime: periodTime.nanoseconds, sessionTime: captureClock.now(on: .linkGhost, at: periodTime))
        }
        deliver(frames: frames)
    }

    /// The period's `frames` of the mix to the sink (and its monitor's mix to the monitor). Clock thread only.
    private func deliver(frames: Int) {
        let width = channels * tracks
        if let discarding {
            discarding._withUnsafeGuaranteedRef { $0.noteDiscarded(frames: frames) }
        } else {
            ring._withUnsafeGuaranteedRef { _ = $0.write(UnsafeBufferPointer(rebasing: mix[0..<(frames * width)])) }
        }
        if let monitorRing, let monitorMix {
            ChannelMixer.sumTracks(mix, channels: channels, tracks: tracks, frames: frames, into: monitorMix)
            monitorRing._withUnsafeGuaranteedRef { _ = $0.write(UnsafeBufferPointer(rebasing: monitorMix[0..<(frames * channels)])) }
        }
    }

    /// Whether exactly one connection plays through the port. Clock thread only.
    private var playsOneStream: Bool {
        var count = 0
        table._withUnsafeGuaranteedRef { $0.forEachActive { _ in count += 1 } }
        return count == 1
    }

    /// After a period, what the port's one stream asked of the clock: to start later (it played silence, its
    /// buffer unread), which delays the clock and gives the sink that many frames of silence; or to follow it,
    /// which moves the clock a frame or so and leaves the sink's audio as it is. Clock thread only.
    private func moveClockIfAsked() {
        var request = DeviceTimingRequest.none
        var asker: Unmanaged<StreamReceiver>?
        table._withUnsafeGuaranteedRef {
            $0.forEachActive { connection in
                let asked = connection.receiver.takeDeviceTimingRequest()
                if asked != .none {
                    request = asked
                    asker = Unmanaged.passUnretained(connection.receiver)
                }
            }
        }
        guard let asker else { return }
        let moved: Bool
        switch request {
        case .none:
            return
        case .startLater(let frames):
            // A port that attached meanwhile keeps the clock where it is: the stream then starts at the next
            // read, at the phase it has.
            moved = frames > 0 && clock._withUnsafeGuaranteedRef { $0.moveNextPeriod(byFrames: frames, startingStream: true) }
            if moved {
                for index in 0..<(frames * channels * tracks) { mix[index] = 0 }
                deliver(frames: frames)
            }
        case .follow(let frames):
            moved = followsStream && clock._withUnsafeGuaranteedRef { $0.moveNextPeriod(byFrames: frames, startingStream: false) }
        }
        if !moved { asker._withUnsafeGuaranteedRef { $0.deviceTimingRefused(request) } }
    }
}
