import TuttiCore
import TuttiIO
import TuttiProcess
import TuttiStream
import TuttiWire

/// What a paced filter port does in each period of its engine clock, in that one period: mix its incoming
/// connections (as a receiver port does), apply the parameter changes posted since the last period, run its
/// processor over the mix in place, and hand the result to its outgoing connections (as a sender port does),
/// stamped with the capture time of the audio it carries, so that the pipeline's latency downstream counts
/// from the first sender's capture: the first incoming stream's capture time on the outgoing capture clock,
/// less the processor's latency (the period's nominal capture time when no stream tells it).
///
/// Lives behind an `UnsafeMutablePointer` that `FilterPort` allocates when the port starts and frees after
/// detaching it from the clock. Class references are held unmanaged (the port keeps them alive). Realtime-safe:
/// yes.
package struct PacedFilterProcessor: ~Copyable {
    package let inputs: Unmanaged<ConnectionTable<ReceiveConnection>>
    package let outputs: Unmanaged<ConnectionTable<SendConnection>>
    package let fanOut: UnsafeMutablePointer<SendFanOut>
    package let mailbox: Unmanaged<ParameterMailbox>
    package let captureClock: CaptureClockSource
    /// The capture clock of the outgoing streams (the peer's: Link ghost time when it runs Link).
    package let outputClock: CaptureClock
    package let channels: Int
    /// One period of `channels` interleaved samples: the mix, processed in place.
    package let mix: UnsafeMutableBufferPointer<Float>
    package var processor: FilterProcessor
    package let sampleRate: Int
    /// The port's mute, applied to what it sends on.
    package let fader: Unmanaged<MuteFader>
    /// The processor's latency in frames when last published.
    private var publishedLatency = -1

    package init(
        inputs: ConnectionTable<ReceiveConnection>, outputs: ConnectionTable<SendConnection>, fanOut: UnsafeMutablePointer<SendFanOut>,
        mailbox: ParameterMailbox, processor: FilterProcessor, captureClock: CaptureClockSource, outputClock: CaptureClock,
        channels: Int, periodFrames: Int, sampleRate: Int, fader: MuteFader
    ) {
        self.fader = Unmanaged.passUnretained(fader)
        self.inputs = Unmanaged.passUnretained(inputs)
        self.outputs = Unmanaged.passUnretained(outputs)
        self.fanOut = fanOut
        self.mailbox = Unmanaged.passUnretained(mailbox)
        self.processor = processor
        self.captureClock = captureClock
        self.outputClock = outputClock
        self.channels = channels
        mix = .allocate(capacity: periodFrames * channels)
        mix.initialize(repeating: 0)
        self.sampleRate = sampleRate
    }

    deinit { mix.deallocate() }

    /// The clock's handler: `context` is an `UnsafeMutablePointer<PacedFilterProcessor>`.
    package static let handler: PacedDeviceClock.Handler = { context, periodTime, frames in
        context!.assumingMemoryBound(to: PacedFilterProcessor.self).pointee.process(
            frames: frames, periodTime: HostTime(nanoseconds: periodTime))
    }

    /// Receives, processes and sends one period that starts at `periodTime`. Clock thread only.
    package mutating func process(frames: Int, periodTime: HostTime) {
        let (mix, channels, captureClock, outputClock) = (mix, channels, captureClock, outputClock)
        let carried = inputs._withUnsafeGuaranteedRef { table in
            ReceiverPort.mixPeriod(
                of: table, into: mix, channels: channels, frames: frames, now: periodTime, captureClock: captureClock,
                captureTimeOn: outputClock, deviceCatchesUp: true)
        }
        mailbox._withUnsafeGuaranteedRef { mailbox in mailbox.drain { processor.set($0, to: $1) } }
        processor.process(mix, frames: frames, channels: channels, captureTime: carried)
        let latency = processor.latencyFrames
        if latency != publishedLatency {
            publishedLatency = latency
            mailbox._withUnsafeGuaranteedRef { $0.publishLatency(latency) }
        }
        let latencyNanoseconds = Int64(latency) * 1_000_000_000 / Int64(sampleRate)
        let captureTime = carried == .min ? captureClock.captureTime(of: periodTime) : carried - latencyNanoseconds
        let sampleRate = sampleRate
        fader._withUnsafeGuaranteedRef { $0.apply(mix, frames: frames, channels: channels, sampleRate: sampleRate) }
        let samples = UnsafeBufferPointer(rebasing: mix[0..<(frames * channels)])
        let fanOut = fanOut
        outputs._withUnsafeGuaranteedRef { table in
            table.forEachActive { connection in
                connection.send(samples, portChannels: channels, frames: frames, captureTime: captureTime, fanOut: &fanOut.pointee)
            }
        }
    }
}
