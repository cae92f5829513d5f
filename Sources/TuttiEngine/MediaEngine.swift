import TuttiIO
import TuttiStream

/// A peer's media engine: its paced device clocks, one per sample rate at the peer's period, each taking in
/// the packets of its ports' connections and running every paced port streaming at that rate in one wake-up
/// per period; and, for `jack` ports (which run on the JACK cycle, where no system call may be made), one
/// network thread (`PacketReceiveLoop`) that receives their connections' packets into lock-free rings.
///
/// Ports ask the engine for their clock when they start streaming (`clock(sampleRate:)`) and attach their
/// period work to it; a clock's thread runs only while a port is attached.
///
/// Thread rules: control plane only (the peer), one caller at a time.
public final class MediaEngine: @unchecked Sendable {
    /// Frames per period of every paced clock.
    public let periodFrames: Int
    private let threaded: Bool
    private var clocks: [Int: EngineClock] = [:]
    private var jackInput: MediaInput?
    private var jackDriftGroups: [String: DriftGroup] = [:]
    private var sender: UDPSocket?

    /// - Parameter threaded: false for an engine whose clocks are driven by hand (deterministic tests).
    public init(periodFrames: Int, threaded: Bool = true) {
        precondition(periodFrames > 0)
        self.periodFrames = periodFrames
        self.threaded = threaded
    }

    /// The clock of every paced port at `sampleRate` (made on first use).
    ///
    /// - Throws: `EngineError` when the system refuses the clock's network poller.
    public func clock(sampleRate: Int) throws(EngineError) -> EngineClock {
        if let clock = clocks[sampleRate] { return clock }
        let clock = try EngineClock(
            name: "tutti-clock-\(sampleRate / 1000)k", sampleRate: sampleRate, periodFrames: periodFrames,
            sendSocket: try sendSocket(), threaded: threaded)
        clocks[sampleRate] = clock
        return clock
    }

    /// The one socket every sender port of the peer sends from (made on first use): a clock sends all its
    /// ports' packets of a period with one `sendmmsg` from it. Control plane.
    ///
    /// - Throws: `EngineError` when no UDP socket can be opened.
    package func sendSocket() throws(EngineError) -> UDPSocket {
        if let sender { return sender }
        do {
            let created = try UDPSocket()
            sender = created
            return created
        } catch {
            throw EngineError("cannot open a UDP socket: \(error)")
        }
    }

    /// The media socket of `jack` ports' receiving connections, served by the engine's network thread (made
    /// and started on first use; it runs until the engine goes). Control plane.
    ///
    /// - Throws: `EngineError` when the system refuses epoll, an eventfd or a socket.
    /// Datagrams the JACK ports' media socket dropped because they belonged to no stream (nil before it
    /// opened). Control plane.
    public var jackStrayDatagrams: UInt64? { jackInput?.demux.strayDatagrams }

    package func jackMedia() throws(EngineError) -> MediaInput {
        if let jackInput { return jackInput }
        let loop: PacketReceiveLoop
        do {
            loop = try PacketReceiveLoop(capacity: 4, name: "tutti-net")
        } catch {
            throw EngineError("cannot start the network thread: \(error)")
        }
        let input = try MediaInput(loop: loop, streamCapacity: Self.receiveCapacity)
        loop.start()
        jackInput = input
        return input
    }

    /// The drift group of `jack` ports' streams from remote device clock `key` (made on first use).
    /// Control plane.
    public func jackDriftGroup(for key: String) -> DriftGroup {
        if let group = jackDriftGroups[key] { return group }
        let group = DriftGroup()
        jackDriftGroups[key] = group
        return group
    }

    /// Receiving connections a peer holds at most (every port's).
    public static var receiveCapacity: Int { 1024 }

    /// The clocks made so far, by rate. Control plane.
    public var allClocks: [EngineClock] { clocks.keys.sorted().compactMap { clocks[$0] } }
}
