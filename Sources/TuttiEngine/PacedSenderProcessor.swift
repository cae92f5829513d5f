import TuttiCore
import TuttiIO
import TuttiStream

/// What a paced sender port does in each period of its engine clock: render one period of its source, stamp
/// it with its capture time, and hand it to every connection, which packetize it onto the clock's fan-out
/// (sent, with every other sender port's packets of the period, in one system call).
///
/// Lives behind an `UnsafeMutablePointer` that `SenderPort` allocates when it starts streaming and frees
/// after detaching it from the clock; the clock passes it to `handler` as the context. Class references are
/// held unmanaged (the port keeps them alive), so the period does no reference counting; all fields are
/// immutable. Realtime-safe: yes.
package struct PacedSenderProcessor: ~Copyable {
    package let table: Unmanaged<ConnectionTable<SendConnection>>
    /// The clock's fan-out: the period's datagrams of every sender port on the clock, which the clock sends
    /// in one system call after running its ports.
    package let fanOut: UnsafeMutablePointer<SendFanOut>
    package let renderer: Unmanaged<SourceRenderer>
    package let captureClock: CaptureClockSource
    package let channels: Int
    /// One period of `channels` interleaved samples.
    package let period: UnsafeMutableBufferPointer<Float>
    /// The port's mute, applied to what it renders (every connection hears it).
    package let fader: Unmanaged<MuteFader>
    package let sampleRate: Int

    package init(
        table: ConnectionTable<SendConnection>, fanOut: UnsafeMutablePointer<SendFanOut>, renderer: SourceRenderer,
        captureClock: CaptureClockSource, channels: Int, periodFrames: Int, fader: MuteFader, sampleRate: Int
    ) {
        self.fader = Unmanaged.passUnretained(fader)
        self.sampleRate = sampleRate
        self.table = Unmanaged.passUnretained(table)
        self.fanOut = fanOut
        self.renderer = Unmanaged.passUnretained(renderer)
        self.captureClock = captureClock
        self.channels = channels
        period = .allocate(capacity: periodFrames * channels)
        period.initialize(repeating: 0)
    }

    deinit { period.deallocate() }

    /// The clock's handler: `context` is an `UnsafeMutablePointer<PacedSenderProcessor>`.
    package static let handler: PacedDeviceClock.Handler = { context, periodTime, frames in
        context!.assumingMemoryBound(to: PacedSenderProcessor.self).pointee.process(
            frames: frames, periodTime: HostTime(nanoseconds: periodTime))
    }

    /// Renders and sends one period that starts at `periodTime`. Clock thread only.
    package func process(frames: Int, periodTime: HostTime) {
        // Capture time: the period's nominal start on the capture clock (Link ghost time or wall clock).
        let captureTime = captureClock.captureTime(of: periodTime)
        let channels = channels
        renderer._withUnsafeGuaranteedRef { $0.render(into: period, frames: frames, channels: channels, captureTime: captureTime) }
        let sampleRate = sampleRate
        fader._withUnsafeGuaranteedRef { $0.apply(period, frames: frames, channels: channels, sampleRate: sampleRate) }
        let samples = UnsafeBufferPointer(period)
        table._withUnsafeGuaranteedRef { table in
            table.forEachActive { connection in
                connection.send(samples, portChannels: channels, frames: frames, captureTime: captureTime, fanOut: &fanOut.pointee)
            }
        }
    }
}
