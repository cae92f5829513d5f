import TuttiCore
import TuttiIO
import TuttiStream
import TuttiWire

/// A receiver port at run time: a paced device clock, the connections it plays, their mix, and its sink.
///
/// The clock starts with the first connection, at that connection's rate, and then runs until the peer
/// stops (its sink is one file or pipe at one rate): after the last connection goes, or while a sender is
/// lost, it keeps writing silence. Control plane: `add`, `remove` (the peer actor). Device thread: the
/// clock's closure.
final class ReceiverPort: @unchecked Sendable {
    let configuration: PortConfiguration
    let sink: AudioSink
    let periodFrames: Int
    private let table = ConnectionTable<ReceiveConnection>(capacity: 64)
    private var clock: PacedDeviceClock?

    /// Periods the port's device clock skipped because its thread stalled for more than 100 ms (their
    /// audio is lost). Control plane.
    var deviceOverruns: UInt64 { clock?.overruns ?? 0 }
    private var writer: SinkWriter?
    private let mix: UnsafeMutableBufferPointer<Float>
    private(set) var activeSampleRate: Int?

    var descriptor: PortDescriptor { configuration.descriptor }
    var connections: [ReceiveConnection] { table.all }

    private let captureClock: CaptureClockSource

    init(configuration: PortConfiguration, sink: AudioSink, periodFrames: Int, captureClock: CaptureClockSource) {
        self.captureClock = captureClock
        self.configuration = configuration
        self.sink = sink
        self.periodFrames = periodFrames
        mix = .allocate(capacity: periodFrames * configuration.descriptor.channels)
        mix.initialize(repeating: 0)
    }

    deinit {
        shutdown()
        mix.deallocate()
    }

    /// Starts playing `connection` (and the port's clock and sink, the first time).
    func add(_ connection: ReceiveConnection) throws(PeerError) {
        let format = connection.format
        let deviceRate = connection.receiver.outputSampleRate
        if let activeSampleRate, activeSampleRate != deviceRate {
            throw PeerError("\(descriptor.name) already runs at \(activeSampleRate) Hz")
        }
        if writer == nil {
            writer = try SinkWriter(
                sink: sink, sampleRate: deviceRate, channels: descriptor.channels,
                sampleFormat: format.sampleFormat.isPCM ? format.sampleFormat : .l24)
            activeSampleRate = deviceRate
        }
        connection.start()
        guard table.insert(connection) else {
            connection.stop()
            throw PeerError("\(descriptor.name) has too many connections")
        }
        if clock == nil {
            let table = table
            let captureClock = captureClock
            nonisolated(unsafe) let mix = mix
            let channels = descriptor.channels
            let ring = writer!.ring
            let timing = writer!.timing
            let newClock = PacedDeviceClock(
                name: "tutti-recv-\(descriptor.name)", sampleRate: deviceRate, periodFrames: periodFrames
            ) { periodTime, frames in
                let count = frames * channels
                for index in 0..<count { mix[index] = 0 }
                table.forEachActive { connection in
                    connection.receiver.render(
                        frames: frames, now: periodTime, captureClockNow: captureClock.now(on: connection.captureClock, at: periodTime))
                    ChannelMixer.add(
                        connection.receiver.output, streamChannels: connection.format.channels, into: mix, portChannels: channels,
                        frames: frames)
                }
                timing.noteFirstPeriod(
                    hostTime: periodTime.nanoseconds, sessionTime: captureClock.now(on: .linkGhost, at: periodTime))
                ring.write(UnsafeBufferPointer(rebasing: mix[0..<count]))
            }
            clock = newClock
            newClock.start()
        }
    }

    /// Stops playing `connection` and its network thread.
    func remove(_ connection: ReceiveConnection) async {
        _ = await table.remove(connection, deviceRunning: clock != nil)
        connection.stop()
    }

    /// Stops the clock, flushes and closes the sink. Control plane; idempotent.
    func shutdown() {
        clock?.stop()
        clock = nil
        for connection in table.all { connection.stop() }
        writer?.stop()
        writer = nil
    }
}
