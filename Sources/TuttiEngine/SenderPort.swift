import TuttiCore
import TuttiIO
import TuttiJACK
import TuttiWire

/// A sender port at run time: its source, a paced device clock at the port's current rate, one UDP socket,
/// and the connections it feeds (fan-out: every connection gets the same audio).
///
/// The clock starts with the first connection, at that connection's rate, and stops with the last; while
/// it runs, new connections must use the same rate. A `jack` port has no clock of its own: once attached to
/// the peer's JACK client (`attachJACK`), the client's process callback feeds its connections every cycle
/// at the server's rate. Control plane: `attachJACK`, `add`, `remove`, `currentRates` (called from the peer
/// only). Device thread (clock or JACK): the processing closure or `JACKSenderProcessor`.
package final class SenderPort: @unchecked Sendable {
    package let configuration: PortConfiguration
    package let source: AudioSource
    private let periodFrames: Int
    private let table = ConnectionTable<SendConnection>(capacity: 64)
    private var clock: PacedDeviceClock?

    /// Periods the port's device clock skipped because its thread stalled for more than 100 ms (their
    /// audio is lost). Control plane.
    package var deviceOverruns: UInt64 { clock?.overruns ?? 0 }
    private var renderer: SourceRenderer?
    private var socket: UDPSocket?
    /// The JACK client and this port's handler state, for a `jack` port.
    private var jack: (client: JACKClient, processor: UnsafeMutablePointer<JACKSenderProcessor>)?
    private var periodBuffer: UnsafeMutableBufferPointer<Float>
    package private(set) var activeSampleRate: Int?

    package var descriptor: PortDescriptor { configuration.descriptor }
    package var connections: [SendConnection] { table.all }

    private let captureClock: CaptureClockSource

    package init(configuration: PortConfiguration, source: AudioSource, periodFrames: Int, captureClock: CaptureClockSource) {
        self.captureClock = captureClock
        self.configuration = configuration
        self.source = source
        self.periodFrames = periodFrames
        periodBuffer = .allocate(capacity: periodFrames * configuration.descriptor.channels)
        periodBuffer.initialize(repeating: 0)
    }

    deinit {
        shutdown()
        periodBuffer.deallocate()
    }

    /// Registers the port's JACK input ports (`NAME_1 … NAME_N`) on `client`, whose process callback then
    /// feeds this port's connections at `client.sampleRate`. Control plane, before the client activates.
    package func attachJACK(to client: JACKClient) throws(EngineError) {
        let processor = try client.registerProcessor(
            JACKSenderProcessor(
                table: table, socket: try sendingSocket(), captureClock: captureClock, channels: descriptor.channels,
                chunkFrames: periodFrames),
            prefix: descriptor.name, channels: descriptor.channels, direction: .input, handler: JACKSenderProcessor.handler)
        jack = (client, processor)
        activeSampleRate = client.sampleRate
    }

    /// The rates the port can stream at now: only its running rate while it streams.
    package var currentRates: [Int] { activeSampleRate.map { [$0] } ?? descriptor.sampleRates }

    /// The socket connections send from (created on first use).
    package func sendingSocket() throws(EngineError) -> UDPSocket {
        if let socket { return socket }
        do {
            let created = try UDPSocket()
            socket = created
            return created
        } catch {
            throw EngineError("cannot open a UDP socket: \(error)")
        }
    }

    /// Starts feeding `connection`, starting the device clock if this is the first connection.
    package func add(_ connection: SendConnection) throws(EngineError) {
        let rate = connection.format.sampleRate
        if let activeSampleRate, activeSampleRate != rate {
            throw EngineError("\(descriptor.name) already streams at \(activeSampleRate) Hz")
        }
        let socket = try sendingSocket()
        if jack != nil {
            guard table.insert(connection) else { throw EngineError("\(descriptor.name) has too many connections") }
            return
        }
        if clock == nil {
            renderer = try SourceRenderer(source: source, sampleRate: rate, channels: descriptor.channels)
            activeSampleRate = rate
        }
        guard table.insert(connection) else { throw EngineError("\(descriptor.name) has too many connections") }
        if clock == nil {
            let renderer = renderer!
            let channels = descriptor.channels
            nonisolated(unsafe) let buffer = periodBuffer
            let table = table
            let captureClock = captureClock
            let newClock = PacedDeviceClock(name: "tutti-send-\(descriptor.name)", sampleRate: rate, periodFrames: periodFrames) {
                periodTime, frames in
                // Capture time: the period's nominal start on the capture clock (Link ghost time or wall clock).
                let captureTime = captureClock.captureTime(of: periodTime)
                renderer.render(into: buffer, frames: frames, channels: channels)
                let samples = UnsafeBufferPointer(buffer)
                table.forEachActive { connection in
                    connection.send(
                        samples, portChannels: channels, frames: frames, captureTime: captureTime,
                        socket: socket)
                }
            }
            clock = newClock
            newClock.start()
        }
    }

    /// Stops feeding `connection`; stops the clock after the last one.
    package func remove(_ connection: SendConnection) async {
        _ = await table.remove(connection, deviceRunning: clock != nil || jack?.client.isRunning == true)
        if table.all.isEmpty, jack == nil {
            clock?.stop()
            clock = nil
            renderer = nil
            activeSampleRate = nil
        }
    }

    /// Stops everything (closing the JACK client before freeing this port's handler state). Control plane;
    /// idempotent.
    package func shutdown() {
        clock?.stop()
        clock = nil
        if let jack {
            jack.client.releaseProcessor(jack.processor)
            self.jack = nil
        }
        socket?.close()
        socket = nil
    }
}
