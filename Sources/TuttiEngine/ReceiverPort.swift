#if canImport(Glibc)
import Glibc
#endif
import TuttiCore
import TuttiIO
import TuttiJACK
import TuttiStream
import TuttiWire

/// A receiver port at run time: its period work on the engine clock of its current rate, the connections it
/// plays, their mix, and its sink.
///
/// A `wav` (or `null`) port records takes: the port joins its engine clock and the sink starts with its first
/// connection, at that connection's rate, and stop when its last connection goes (the file is closed with a
/// final header and its `.timing.json` sidecar). The next connection starts a new take, in a new file named
/// by `TakeNaming` (`foh.wav`, `foh-2.wav`…, never overwriting a file), possibly at another rate. While
/// nothing is connected nothing runs and nothing is written; a lost sender (still connected) keeps its take
/// going with silence, a real gap. A `stdout` port starts with its first connection and then runs until the
/// peer stops, writing silence between connections: a raw stream has no header to announce a new rate, and
/// a player reading it (`aplay`) keeps playing instead of running dry; its rate stays the first one.
///
/// A `jack` port has no clock or sink writer: once attached to the peer's JACK client (`attachJACK`), the
/// client's process callback renders its connections into the JACK output ports every cycle at the server's
/// rate. Control plane: `attachJACK`, `add`, `remove`, `shutdown` (the peer). Device thread (engine clock or
/// JACK): `PacedReceiverProcessor` or `JACKReceiverProcessor`.
public final class ReceiverPort: @unchecked Sendable {
    public let configuration: PortConfiguration
    public let sink: AudioSink
    public let periodFrames: Int
    private let table = ConnectionTable<ReceiveConnection>(capacity: ConnectionTable<ReceiveConnection>.portCapacity)
    private let engine: MediaEngine
    /// While a take runs on a paced clock: the clock, the port's node on it, its period state, and the
    /// clock's overruns when the take started.
    private var paced: PacedAttachment<PacedReceiverProcessor>?

    /// What the port's engine clock did while the port ran (for a receiver: in the current take). Control plane.
    public var deviceFigures: DeviceClockFigures { paced?.figures ?? DeviceClockFigures() }

    /// Datagrams the media socket this port's connections receive on dropped because they belonged to no
    /// stream (`StreamDemux`): the engine clock's socket for a paced port while a take runs, the JACK ports'
    /// socket for a `jack` port; nil while neither is open. Control plane.
    public var strayDatagrams: UInt64? {
        if configuration.isJACK { return engine.jackStrayDatagrams }
        return paced?.clock.media.demux.strayDatagrams
    }
    private var writer: SinkWriter?
    /// A separate-mode port's monitor on standard output, while a take runs.
    private var monitorWriter: SinkWriter?
    /// The JACK client and this port's handler state, for a `jack` port.
    private var jack: (client: JACKClient, processor: UnsafeMutablePointer<JACKReceiverProcessor>)?
    public private(set) var activeSampleRate: Int?
    /// The file names of a `wav` port's takes (nil for other sinks).
    private let takeNaming: TakeNaming?
    /// The number of the last take started (0: none yet).
    private var lastTake = 0
    /// The file of the take being recorded (nil between takes and for other sinks; a port with a file per
    /// track: track 1's, the others in `takePaths`).
    public private(set) var takePath: String?
    /// Every file of the take being recorded (one, or one per track).
    public private(set) var takePaths: [String] = []
    /// The port's tracks (1 when it mixes its sources).
    private var tracks: Int { descriptor.tracks ?? 1 }

    public var descriptor: PortDescriptor { configuration.descriptor }
    public var connections: [ReceiveConnection] { table.all }

    private let captureClock: CaptureClockSource
    /// The port's mute (`tutti mute PEER:PORT`), with short fades: what the port plays (its mix). Kept across its
    /// streams' starts and stops. Set from the control plane.
    public let fader = MuteFader()

    public init(configuration: PortConfiguration, sink: AudioSink, engine: MediaEngine, captureClock: CaptureClockSource) {
        self.captureClock = captureClock
        self.configuration = configuration
        self.sink = sink
        self.engine = engine
        periodFrames = engine.periodFrames
        switch sink {
        case .wavFile(let path), .wavFilePerTrack(let path): takeNaming = TakeNaming(path: path)
        default: takeNaming = nil
        }
    }

    deinit {
        // Only when the peer went away without `shutdown`: stop the clock before freeing what it runs.
        paced?.tearDown()
        if let jack { jack.client.releaseProcessor(jack.processor) }
        for connection in table.all { connection.stop() }
        writer?.stop()
        monitorWriter?.stop()
    }

    /// Registers the port's JACK output ports (`NAME_1 … NAME_N`) on `client`, whose process callback then
    /// plays this port's connections at `client.sampleRate`. Control plane, before the client activates.
    public func attachJACK(to client: JACKClient) throws(EngineError) {
        let processor = try client.registerProcessor(
            JACKReceiverProcessor(
                table: table, captureClock: captureClock, channels: descriptor.channels, tracks: tracks, chunkFrames: periodFrames,
                fader: fader, sampleRate: client.sampleRate, monitor: configuration.monitor == .jack),
            prefix: descriptor.name, channels: configuration.jackOutputChannels, direction: .output, handler: JACKReceiverProcessor.handler)
        jack = (client, processor)
        activeSampleRate = client.sampleRate
    }

    /// Renders every active connection's next `frames` frames at `now` and mixes them into the first
    /// `frames × channels × tracks` samples of `mix` (silence without connections): each connection into the
    /// `channels` of its track (`trackIndex`), tracks side by side in each frame; one track: the port's mix.
    /// Device thread (paced clock or JACK cycle) only. Realtime-safe: yes. `deviceCatchesUp`: a paced clock,
    /// which runs its missed periods back to back after a stall, so that each read takes in only what arrived
    /// up to its time (`StreamReceiver.render`). A JACK cycle takes in everything: its time is a line fitted
    /// to the server's cycle starts, and with packets held back to it the JACK loop test's round trip jumped
    /// by 1.4–2.5 ms in two loaded runs while the legs' own figures stood still (not yet understood).
    /// `deviceTimeStepped`: the JACK timeline caught up frames just before (`StreamReceiver.render`).
    ///
    /// - Returns: the capture time of the mix's first frame on `captureTimeOn` (nanoseconds): the first
    ///   stream's on that clock that knows it; `Int64.min` when none does (or `captureTimeOn` is nil).
    @inline(__always)
    @discardableResult
    package static func mixPeriod(
        of table: ConnectionTable<ReceiveConnection>, into mix: UnsafeMutableBufferPointer<Float>, channels: Int, tracks: Int = 1,
        frames: Int, now: HostTime, captureClock: CaptureClockSource, captureTimeOn carried: CaptureClock? = nil,
        deviceCatchesUp: Bool, deviceDelayLimitFrames: Int = 0, deviceTimeStepped: Bool = false
    ) -> Int64 {
        let width = channels * tracks
        for index in 0..<(frames * width) { mix[index] = 0 }
        var captureTime = Int64.min
        table.forEachActive { connection in
            let rendered = connection.receiver.render(
                frames: frames, now: now, captureClockNow: captureClock.now(on: connection.captureClock, at: now),
                deviceCatchesUp: deviceCatchesUp, deviceDelayLimitFrames: deviceDelayLimitFrames, deviceTimeStepped: deviceTimeStepped)
            if captureTime == .min, connection.captureClock == carried { captureTime = rendered }
            let track = min(max(connection.trackIndex, 0), tracks - 1)
            ChannelMixer.add(
                connection.receiver.output, streamChannels: connection.format.channels, into: mix, portChannels: channels, frames: frames,
                firstChannel: track * channels, frameWidth: width)
        }
        return captureTime
    }

    /// Starts playing `connection` (and, when the port is idle, its clock and sink: a new take).
    ///
    /// - Throws: a one-line `EngineError` when the port runs at another rate, has no free slot, cannot create
    ///   the take's file, or its output has failed for good (a `stdout` port whose pipe is closed).
    public func add(_ connection: ReceiveConnection) async throws(EngineError) {
        let format = connection.format
        let deviceRate = connection.receiver.outputSampleRate
        if let activeSampleRate, activeSampleRate != deviceRate {
            throw EngineError("\(descriptor.name) already runs at \(activeSampleRate) Hz")
        }
        if jack != nil {
            if let key = connection.remoteClock { connection.receiver.joinDriftGroup(engine.jackDriftGroup(for: key)) }
            try connection.start(on: engine.jackMedia())
            guard table.insert(connection) else {
                connection.stop()
                throw tooMany
            }
            return
        }
        if let reason = writer?.failure?.reason {
            throw EngineError("\(descriptor.name) cannot play: \(reason)")
        }
        if writer == nil {
            try startTake(sampleRate: deviceRate, sampleFormat: format.sampleFormat.isPCM ? format.sampleFormat : .l24)
        }
        connection.sinkFailure = writer?.failure
        // A paced take's clock takes in the connection's packets, on its media socket, at each period's start.
        do throws(EngineError) {
            if let key = connection.remoteClock, let paced {
                connection.receiver.joinDriftGroup(paced.clock.driftGroup(for: key))
            }
            let input = if let paced { paced.clock.media } else { try engine.jackMedia() }
            try connection.start(on: input)
        } catch {
            await endTakeIfIdle()
            throw error
        }
        guard table.insert(connection) else {
            connection.stop()
            await endTakeIfIdle()
            throw tooMany
        }
    }

    private var tooMany: EngineError {
        EngineError("\(descriptor.name) has \(table.capacity) connections, the most a port holds")
    }

    /// Whether a port with `sink` records takes (its clock and sink stop when its last connection goes):
    /// `wav` and `null` do; `stdout` runs on once started (see the class comment); `jack` follows its server.
    public static func recordsTakes(_ sink: AudioSink) -> Bool {
        switch sink {
        case .wavFile, .wavFilePerTrack, .null, .block: true
        case .standardOutput, .jack: false
        }
    }

    /// Whether a port with `sink` writes WAV files, whose `.timing.json` maps their frames to the host clock
    /// from the first on (so its clock must not follow a stream's: `PacedReceiverProcessor.followsStream`).
    private static func writesTimedFiles(_ sink: AudioSink) -> Bool {
        switch sink {
        case .wavFile, .wavFilePerTrack: true
        case .null, .block, .standardOutput, .jack: false
        }
    }

    /// The application's block, for a `block` sink.
    private static func block(of sink: AudioSink) -> AudioBlock? { if case .block(let block) = sink { block } else { nil } }

    /// Opens the sink (a `wav` port: the take's new file) and joins the engine clock of `sampleRate`.
    private func startTake(sampleRate: Int, sampleFormat: SampleFormat) throws(EngineError) {
        let output: SinkWriter.Output
        switch sink {
        case .wavFile:
            let file = try createTakeFiles(sampleRate: sampleRate, encoding: sampleFormat == .l16 ? .int16 : .int24, perTrack: false)[0]
            output = .wav(file)
            takePaths = [file.path]
        case .wavFilePerTrack:
            let files = try createTakeFiles(sampleRate: sampleRate, encoding: sampleFormat == .l16 ? .int16 : .int24, perTrack: true)
            output = .wavPerTrack(files)
            takePaths = files.map(\.path)
        case .standardOutput(let encoding): output = .standardOutput(encoding)
        case .null, .block: output = .discard
        case .jack: preconditionFailure("a JACK sink is played by its JACK client (JACKReceiverProcessor), not written")
        }
        takePath = takePaths.first
        let writer = SinkWriter(output: output, sampleRate: sampleRate, channels: descriptor.outputChannels)
        var monitor: SinkWriter?
        if case .standardOutput(let encoding) = configuration.monitor {
            monitor = SinkWriter(output: .standardOutput(encoding), sampleRate: sampleRate, channels: descriptor.channels)
        }
        let clock: EngineClock
        do throws(EngineError) { clock = try engine.clock(sampleRate: sampleRate) } catch {
            writer.stop()
            monitor?.stop()
            forgetTakeFiles()
            throw error
        }
        do throws(EngineError) {
            paced = try PacedAttachment(
                PacedReceiverProcessor(
                    table: table, writer: writer, captureClock: captureClock, channels: descriptor.channels,
                    periodFrames: periodFrames, fader: fader, sampleRate: sampleRate, clock: clock,
                    followsStream: !Self.writesTimedFiles(sink), tracks: tracks, block: Self.block(of: sink), monitor: monitor),
                handler: PacedReceiverProcessor.handler, on: clock)
        } catch {
            writer.stop()
            monitor?.stop()
            forgetTakeFiles()
            throw error
        }
        self.writer = writer
        monitorWriter = monitor
        activeSampleRate = sampleRate
    }

    /// Creates the next take's WAV files: the first take number after the last one whose files do not exist yet
    /// (`foh.wav`, `foh-2.wav`…; with `perTrack`, `foh-track1.wav`… for each track), each created exclusively, so
    /// no file is ever overwritten. One file holds every track side by side; a file per track holds its channels.
    private func createTakeFiles(sampleRate: Int, encoding: WAVEncoding, perTrack: Bool) throws(EngineError) -> [WAVWriter] {
        guard let takeNaming else { preconditionFailure("only a wav port has takes") }
        let fileCount = perTrack ? tracks : 1
        let channels = perTrack ? descriptor.channels : descriptor.outputChannels
        numbers: for number in takeNaming.candidates(after: lastTake) {
            var files: [WAVWriter] = []
            for index in 0..<fileCount {
                let path = perTrack ? takeNaming.path(ofTake: number, track: index + 1) : takeNaming.path(ofTake: number)
                do {
                    files.append(
                        try WAVWriter(path: path, sampleRate: sampleRate, channels: channels, encoding: encoding, replacing: false))
                } catch {
                    // Never leave a take half created: the files made for this number go again.
                    for file in files { file.discard() }
                    if error.errno == EEXIST { continue numbers }
                    throw EngineError("cannot record \(descriptor.name) to \(path): \(String(cString: strerror(error.errno)))")
                }
            }
            lastTake = number
            return files
        }
        throw EngineError("cannot record \(descriptor.name): \(TakeNaming.maximumTakes) takes of \(takeNaming.path) exist already")
    }

    /// Forgets the files of a take that could not start.
    private func forgetTakeFiles() {
        takePath = nil
        takePaths = []
    }

    /// A take that ended: its file (nil for a `null` port), its length and why it stopped early, if it did.
    public struct FinishedTake: Sendable {
        /// Its file (track 1's when the port writes a file per track).
        public var path: String?
        /// Every file of the take.
        public var paths: [String] = []
        public var seconds: Double
        public var failure: String?
    }

    /// Stops playing and receiving `connection`; when it was the last one of a port that records
    /// takes, ends the take (port detached from its clock, file closed) and returns it.
    public func remove(_ connection: ReceiveConnection) async -> FinishedTake? {
        _ = await table.remove(connection, deviceRunning: paced?.clock.isRunning == true || jack?.client.isRunning == true)
        connection.stop()
        return await endTakeIfIdle()
    }

    /// Ends the take when no connection is left on a port that records takes. Control plane.
    ///
    /// The port forgets the take before it waits for the clock to let go of it, so a connection arriving
    /// meanwhile starts a new take instead of joining the one that is ending.
    @discardableResult
    private func endTakeIfIdle() async -> FinishedTake? {
        // Not while another `remove` still waits for the device thread to let its connection go.
        guard Self.recordsTakes(sink), table.isEmpty, let writer else { return nil }
        let rate = Double(activeSampleRate ?? 1)
        let (take, takes) = (takePath, takePaths)
        let paced = self.paced
        let monitor = monitorWriter
        self.writer = nil
        monitorWriter = nil
        self.paced = nil
        activeSampleRate = nil
        forgetTakeFiles()
        await paced?.detach()
        writer.stop()
        monitor?.stop()
        return FinishedTake(path: take, paths: takes, seconds: Double(writer.recordedFrames) / rate, failure: writer.failure?.reason)
    }

    /// Leaves the engine clock (or closes the JACK client, before freeing this port's handler state),
    /// flushes and closes the sink. Control plane; idempotent.
    public func shutdown() async {
        let paced = self.paced
        self.paced = nil
        await paced?.detach()
        if let jack {
            jack.client.releaseProcessor(jack.processor)
            self.jack = nil
        }
        for connection in table.all { connection.stop() }
        writer?.stop()
        writer = nil
        monitorWriter?.stop()
        monitorWriter = nil
        forgetTakeFiles()
    }
}
