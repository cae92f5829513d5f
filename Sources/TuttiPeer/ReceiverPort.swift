import TuttiCore
import TuttiIO
import TuttiJACK
import TuttiStream
import TuttiWire

/// A receiver port at run time: a paced device clock, the connections it plays, their mix, and its sink.
///
/// The clock starts with the first connection, at that connection's rate, and then runs until the peer
/// stops (its sink is one file or pipe at one rate): after the last connection goes, or while a sender is
/// lost, it keeps writing silence. A `jack` port has no clock or sink writer: once attached to the peer's
/// JACK client (`attachJACK`), the client's process callback renders its connections into the JACK output
/// ports every cycle at the server's rate. Control plane: `attachJACK`, `add`, `remove` (the peer). Device
/// thread (clock or JACK): the clock's closure or `JACKReceiverProcessor`.
final class ReceiverPort: @unchecked Sendable {
    let configuration: PortConfiguration
    let sink: AudioSink
    let periodFrames: Int
    private let table = ConnectionTable<ReceiveConnection>(capacity: 64)
    private var clock: PacedDeviceClock?
    private var writer: SinkWriter?
    /// The JACK client and this port's handler state, for a `jack` port.
    private var jack: (client: JACKClient, processor: UnsafeMutablePointer<JACKReceiverProcessor>)?
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

    /// Registers the port's JACK output ports (`NAME_1 … NAME_N`) on `client`, whose process callback then
    /// plays this port's connections at `client.sampleRate`. Control plane, before the client activates.
    func attachJACK(to client: JACKClient) throws(PeerError) {
        let processor = try client.registerProcessor(
            JACKReceiverProcessor(table: table, captureClock: captureClock, channels: descriptor.channels, chunkFrames: periodFrames),
            prefix: descriptor.name, channels: descriptor.channels, direction: .output, handler: JACKReceiverProcessor.handler)
        jack = (client, processor)
        activeSampleRate = client.sampleRate
    }

    /// Renders every active connection's next `frames` frames at `now` and mixes them into the first
    /// `frames × channels` samples of `mix` (silence without connections). Device thread (paced clock or
    /// JACK cycle) only. Realtime-safe: yes.
    @inline(__always)
    static func mixPeriod(
        of table: ConnectionTable<ReceiveConnection>, into mix: UnsafeMutableBufferPointer<Float>, channels: Int, frames: Int,
        now: HostTime, captureClock: CaptureClockSource
    ) {
        for index in 0..<(frames * channels) { mix[index] = 0 }
        table.forEachActive { connection in
            connection.receiver.render(frames: frames, now: now, captureClockNow: captureClock.now(on: connection.captureClock, at: now))
            ChannelMixer.add(
                connection.receiver.output, streamChannels: connection.format.channels, into: mix, portChannels: channels, frames: frames)
        }
    }

    /// Starts playing `connection` (and the port's clock and sink, the first time).
    func add(_ connection: ReceiveConnection) throws(PeerError) {
        let format = connection.format
        let deviceRate = connection.receiver.outputSampleRate
        if let activeSampleRate, activeSampleRate != deviceRate {
            throw PeerError("\(descriptor.name) already runs at \(activeSampleRate) Hz")
        }
        if jack != nil {
            connection.start()
            guard table.insert(connection) else {
                connection.stop()
                throw PeerError("\(descriptor.name) has too many connections")
            }
            return
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
                Self.mixPeriod(of: table, into: mix, channels: channels, frames: frames, now: periodTime, captureClock: captureClock)
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
        _ = await table.remove(connection, deviceRunning: clock != nil || jack?.client.isRunning == true)
        connection.stop()
    }

    /// Stops the clock (or closes the JACK client, before freeing this port's handler state), flushes and
    /// closes the sink. Control plane; idempotent.
    func shutdown() {
        clock?.stop()
        clock = nil
        if let jack {
            jack.client.releaseProcessor(jack.processor)
            self.jack = nil
        }
        for connection in table.all { connection.stop() }
        writer?.stop()
        writer = nil
    }
}
