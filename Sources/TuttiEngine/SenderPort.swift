import TuttiCore
import TuttiStream
import TuttiIO
import TuttiJACK
import TuttiWire

/// A sender port at run time: its source, its period work on the engine clock of its current rate, and the
/// connections it feeds (fan-out: every connection gets the same audio), all sent from the engine's socket.
///
/// The port attaches to the engine clock of the first connection's rate and detaches after the last; while
/// it streams, new connections must use the same rate. A `jack` port has no paced clock: once attached to
/// the peer's JACK client (`attachJACK`), the client's process callback feeds its connections every cycle at
/// the server's rate. Control plane: `attachJACK`, `add`, `remove`, `shutdown`, `currentRates` (called from
/// the peer only). Device thread (engine clock or JACK): `PacedSenderProcessor` or `JACKSenderProcessor`.
public final class SenderPort: @unchecked Sendable {
    public let configuration: PortConfiguration
    public let source: AudioSource
    private let periodFrames: Int
    private let engine: MediaEngine
    private let table = ConnectionTable<SendConnection>(capacity: ConnectionTable<SendConnection>.portCapacity)
    /// While the port streams on a paced clock: the clock, the port's node on it, its period state, and the
    /// clock's overruns when the port attached.
    private var paced: PacedAttachment<PacedSenderProcessor>?

    /// What the port's engine clock did while the port ran (for a receiver: in the current take). Control plane.
    public var deviceFigures: DeviceClockFigures { paced?.figures ?? DeviceClockFigures() }
    private var renderer: SourceRenderer?
    /// The JACK client and this port's handler state, for a `jack` port.
    private var jack: (client: JACKClient, processor: UnsafeMutablePointer<JACKSenderProcessor>)?
    public private(set) var activeSampleRate: Int?

    public var descriptor: PortDescriptor { configuration.descriptor }
    public var connections: [SendConnection] { table.all }

    private let captureClock: CaptureClockSource
    /// The port's mute (`tutti mute PEER:PORT`), with short fades: what the port sends, to every connection. Kept across its
    /// streams' starts and stops. Set from the control plane.
    public let fader = MuteFader()

    public init(
        configuration: PortConfiguration, source: AudioSource, engine: MediaEngine, captureClock: CaptureClockSource
    ) {
        self.captureClock = captureClock
        self.configuration = configuration
        self.source = source
        self.engine = engine
        periodFrames = engine.periodFrames
    }

    deinit {
        // Only when the peer went away without `shutdown`: stop the clock before freeing what it runs.
        paced?.tearDown()
        if let jack { jack.client.releaseProcessor(jack.processor) }
    }

    /// Registers the port's JACK input ports (`NAME_1 … NAME_N`) on `client`, whose process callback then
    /// feeds this port's connections at `client.sampleRate`. Control plane, before the client activates.
    public func attachJACK(to client: JACKClient) throws(EngineError) {
        let processor = try client.registerProcessor(
            JACKSenderProcessor(
                table: table, socket: try sendingSocket(), captureClock: captureClock, channels: descriptor.channels,
                chunkFrames: periodFrames, fader: fader, sampleRate: client.sampleRate),
            prefix: descriptor.name, channels: descriptor.channels, direction: .input, handler: JACKSenderProcessor.handler)
        jack = (client, processor)
        activeSampleRate = client.sampleRate
    }

    /// The rates the port can stream at now: only its running rate while it streams.
    public var currentRates: [Int] { activeSampleRate.map { [$0] } ?? descriptor.sampleRates }

    /// The socket connections send from: the engine's, shared by every sender port of the peer.
    public func sendingSocket() throws(EngineError) -> UDPSocket { try engine.sendSocket() }

    /// Starts feeding `connection`; the first one attaches the port to the engine clock of its rate.
    public func add(_ connection: SendConnection) throws(EngineError) {
        let rate = connection.format.sampleRate
        if let activeSampleRate, activeSampleRate != rate {
            throw EngineError("\(descriptor.name) already streams at \(activeSampleRate) Hz")
        }
        if jack != nil {
            guard table.insert(connection) else { throw tooMany }
            return
        }
        if paced == nil {
            let renderer = try SourceRenderer(source: source, sampleRate: rate, channels: descriptor.channels)
            let clock = try engine.clock(sampleRate: rate)
            guard table.insert(connection) else { throw tooMany }
            do throws(EngineError) {
                paced = try PacedAttachment(
                    PacedSenderProcessor(
                        table: table, fanOut: clock.fanOut, renderer: renderer, captureClock: captureClock,
                        channels: descriptor.channels, periodFrames: periodFrames, fader: fader, sampleRate: rate),
                    handler: PacedSenderProcessor.handler, on: clock)
            } catch {
                _ = table.removeIdle(connection)
                throw error
            }
            self.renderer = renderer
            activeSampleRate = rate
            return
        }
        guard table.insert(connection) else { throw tooMany }
    }

    private var tooMany: EngineError {
        EngineError("\(descriptor.name) has \(table.capacity) connections, the most a port holds")
    }

    /// Stops feeding `connection`; after the last one the port leaves its engine clock.
    public func remove(_ connection: SendConnection) async {
        _ = await table.remove(connection, deviceRunning: paced?.clock.isRunning == true || jack?.client.isRunning == true)
        if table.isEmpty, jack == nil { await stopStreaming() }
    }

    /// Detaches the port from its engine clock and frees its period state. Control plane.
    ///
    /// The port forgets its stream before it waits for the clock to let go, so a connection arriving
    /// meanwhile starts the port afresh (and the old renderer lives until the clock has let go of it).
    private func stopStreaming() async {
        guard let paced else { return }
        let renderer = self.renderer
        self.paced = nil
        self.renderer = nil
        activeSampleRate = nil
        await paced.detach()
        withExtendedLifetime(renderer) {}
    }

    /// Stops everything (closing the JACK client before freeing this port's handler state). Control plane;
    /// idempotent.
    public func shutdown() async {
        await stopStreaming()
        if let jack {
            jack.client.releaseProcessor(jack.processor)
            self.jack = nil
        }
    }
}
