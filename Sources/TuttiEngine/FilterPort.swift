import TuttiCore
import TuttiStream
import TuttiIO
import TuttiProcess
import TuttiWire

/// A filter port at run time: audio comes in on its incoming connections (mixed, as a receiver port mixes
/// them), goes through its processor, and goes out on its outgoing connections (fanned out, as a sender port
/// feeds them), all in one period of its engine clock, so a filter adds its processor's latency and nothing
/// else to the path.
///
/// The port joins the engine clock of its first connection's rate (in or out) and leaves it after the last;
/// meanwhile every connection uses that rate. Its processor is made when it joins, from its current
/// parameter values; `set` changes a value live. Control plane: everything here (the peer, one caller at a
/// time). Engine thread: `PacedFilterProcessor`.
public final class FilterPort: @unchecked Sendable {
    public let descriptor: PortDescriptor
    /// The processor and its current parameter values (what `set` changed last).
    public private(set) var specification: ProcessorSpecification
    public let periodFrames: Int
    private let engine: MediaEngine
    private let captureClock: CaptureClockSource
    /// The port's mute (`tutti mute PEER:PORT`), with short fades: what the port sends on, to every destination. Kept across its
    /// streams' starts and stops. Set from the control plane.
    public let fader = MuteFader()
    /// The capture clock the outgoing streams are stamped on (the peer's).
    private let outputClock: CaptureClock
    private let inputs = ConnectionTable<ReceiveConnection>(capacity: ConnectionTable<ReceiveConnection>.portCapacity)
    private let outputs = ConnectionTable<SendConnection>(capacity: ConnectionTable<SendConnection>.portCapacity)
    private let mailbox = ParameterMailbox()
    private var paced: PacedAttachment<PacedFilterProcessor>?
    /// The processor's latency at the running rate, as the engine last saw it (0 while the port is idle).
    public var latencyFrames: Int { paced == nil ? 0 : mailbox.latencyFrames }
    public private(set) var activeSampleRate: Int?

    public var incoming: [ReceiveConnection] { inputs.all }
    public var outgoing: [SendConnection] { outputs.all }
    /// What the port's engine clock did while the port ran (for a receiver: in the current take). Control plane.
    public var deviceFigures: DeviceClockFigures { paced?.figures ?? DeviceClockFigures() }
    /// The rates the port can run at now: only its running rate while it runs.
    public var currentRates: [Int] { activeSampleRate.map { [$0] } ?? descriptor.sampleRates }

    /// The application's block (the embedding API) that processes instead of `specification`'s processor.
    private let block: AudioBlock?

    /// - Parameter block: the application's own processing (`PortConfiguration.application(.filter, …)`); `processor`
    ///   then only names it (`ProcessorSpecification(application:)`).
    public init(
        descriptor: PortDescriptor, processor: ProcessorSpecification, block: AudioBlock? = nil, engine: MediaEngine,
        captureClock: CaptureClockSource, outputClock: CaptureClock
    ) {
        self.block = block
        self.descriptor = descriptor
        specification = processor
        self.engine = engine
        self.captureClock = captureClock
        self.outputClock = outputClock
        periodFrames = engine.periodFrames
    }

    deinit {
        // Only when the peer went away without `shutdown`: stop the clock before freeing what it runs.
        paced?.tearDown()
        for connection in inputs.all { connection.stop() }
    }

    /// The socket outgoing connections send from: the engine's.
    public func sendingSocket() throws(EngineError) -> UDPSocket { try engine.sendSocket() }

    /// Sets one parameter live, from the user's text; the engine applies it at its next period.
    ///
    /// - Throws: `ProcessorError` (one line): an unknown parameter, not a number, out of range. Nothing changes then.
    public func set(_ parameter: String, to value: String) throws(ProcessorError) {
        let index = try specification.set(parameter, to: value)
        mailbox.post(index, specification.values[index])
    }

    /// Starts taking `connection`'s audio in (and, when the port is idle, joins the clock of its rate).
    ///
    /// - Throws: `EngineError` (one line): another rate is running, no free slot, or the clock refuses the port.
    public func add(_ connection: ReceiveConnection) async throws(EngineError) {
        let clock = try start(sampleRate: connection.receiver.outputSampleRate)
        do throws(EngineError) {
            if let key = connection.remoteClock { connection.receiver.joinDriftGroup(clock.driftGroup(for: key)) }
            try connection.start(on: clock.media)
        } catch {
            await stopIfIdle()
            throw error
        }
        guard inputs.insert(connection) else {
            connection.stop()
            await stopIfIdle()
            throw tooMany
        }
    }

    /// Starts feeding `connection` with the processed audio (and, when the port is idle, joins the clock).
    ///
    /// - Throws: `EngineError` (one line): another rate is running, no free slot, or the clock refuses the port.
    public func add(_ connection: SendConnection) async throws(EngineError) {
        _ = try start(sampleRate: connection.format.sampleRate)
        guard outputs.insert(connection) else {
            await stopIfIdle()
            throw tooMany
        }
    }

    /// Stops taking `connection` in; the port leaves its clock when nothing is connected any more.
    public func remove(_ connection: ReceiveConnection) async {
        _ = await inputs.remove(connection, deviceRunning: paced?.clock.isRunning == true)
        connection.stop()
        await stopIfIdle()
    }

    /// Stops feeding `connection`; the port leaves its clock when nothing is connected any more.
    public func remove(_ connection: SendConnection) async {
        _ = await outputs.remove(connection, deviceRunning: paced?.clock.isRunning == true)
        await stopIfIdle()
    }

    /// Leaves the engine clock and stops every incoming connection. Control plane; idempotent.
    public func shutdown() async {
        let paced = self.paced
        self.paced = nil
        activeSampleRate = nil
        await paced?.detach()
        for connection in inputs.all { connection.stop() }
    }

    private var tooMany: EngineError {
        EngineError("\(descriptor.name) has \(inputs.capacity) connections each way, the most a port holds")
    }

    /// The clock the port runs on at `sampleRate`, joining it (with a fresh processor) when idle.
    private func start(sampleRate: Int) throws(EngineError) -> EngineClock {
        if let paced {
            guard activeSampleRate == sampleRate else {
                throw EngineError("\(descriptor.name) already runs at \(activeSampleRate ?? 0) Hz")
            }
            return paced.clock
        }
        let clock = try engine.clock(sampleRate: sampleRate)
        let processor: FilterProcessor
        do throws(ProcessorError) {
            processor = try FilterProcessor.make(
                specification, sampleRate: sampleRate, channels: descriptor.channels, maxFrames: periodFrames, block: block)
        } catch {
            throw EngineError("filter \(descriptor.name): \(error.message)")
        }
        paced = try PacedAttachment(
            PacedFilterProcessor(
                inputs: inputs, outputs: outputs, fanOut: clock.fanOut, mailbox: mailbox, processor: processor,
                captureClock: captureClock, outputClock: outputClock, channels: descriptor.channels, periodFrames: periodFrames,
                sampleRate: sampleRate, fader: fader),
            handler: PacedFilterProcessor.handler, on: clock)
        activeSampleRate = sampleRate
        mailbox.publishLatency(processor.latencyFrames)
        return clock
    }

    /// Leaves the clock when no connection is left either way. The port forgets its run before it waits for the
    /// clock to let go, so a connection arriving meanwhile starts it afresh.
    private func stopIfIdle() async {
        guard inputs.isEmpty, outputs.isEmpty, let paced else { return }
        self.paced = nil
        activeSampleRate = nil
        await paced.detach()
    }
}
