import Synchronization
import TuttiCore
import TuttiIO
import TuttiStream

/// One paced device clock of a peer's media engine, at one (sample rate, period): a single thread that wakes
/// once per period and, in that one wake-up, takes in every packet that has arrived for the receiving
/// connections of its ports (`network`: one `epoll_wait` and one `recvmmsg` per ready socket, kernel arrival
/// times), then runs every port attached to it, receivers and senders alike, and sends what the senders
/// queued, to every destination, with one `sendmmsg` (`fanOut`).
///
/// The thread runs only while a port is attached: it starts with the first `attach` and stops after the last
/// `detach`. Ports come and go while it runs, through a lock-free `ConnectionTable` of `PeriodNode`s.
///
/// Thread rules: `attach`, `detach`, `overruns`, `isRunning` on the control plane (one caller at a time: the
/// peer); the nodes' handlers run on the clock thread. Realtime-safe: the period loop.
public final class EngineClock: @unchecked Sendable {
    public let sampleRate: Int
    public let periodFrames: Int
    /// Ports a clock runs at most (a peer's ports at one rate).
    public static var nodeCapacity: Int { 256 }
    private let nodes = ConnectionTable<PeriodNode>(capacity: EngineClock.nodeCapacity)
    /// The sockets of the receiving connections of this clock's ports, served at the start of each period by
    /// the clock's own thread (never started as a thread of its own).
    package let network: PacketReceiveLoop
    /// The media socket every receiving connection of this clock's ports gets its packets through.
    public let media: MediaInput
    /// The period's outgoing packets of every sender port on this clock; written and flushed by the clock
    /// thread only (allocated here, freed in `deinit`).
    package let fanOut: UnsafeMutablePointer<SendFanOut>
    private var device: PacedDeviceClock?
    /// Overruns of earlier runs of the thread (each run has its own `PacedDeviceClock`).
    private var earlierOverruns: UInt64 = 0
    /// Late wake-ups, and the latest one's lateness, of earlier runs of the thread.
    private var earlierLateWakes: UInt64 = 0
    private var earlierWorstWakeLateness: Int64 = 0
    private var attached = 0
    private let name: String
    /// Whether periods come from the clock's own thread, or only from `runPeriod(at:)` (tests).
    private let threaded: Bool
    /// Whether a port alone on the clock may move its periods (`moveNextPeriod(byFrames:startingStream:)`): a threaded clock
    /// by default; a clock run by hand only when its driver honours `runPeriod(at:)`'s answer. Control plane,
    /// before the first port attaches.
    package var allowsPhaseAlignment: Bool
    /// Ports attached, or being attached (counted before the port can run, so that a port alone until then
    /// never moves the clock under a newcomer's first period). Written on the control plane, read by the clock.
    private let portsAttached = Atomic<Int>(0)
    /// Frames the next period was asked to come later by, applied at the period's end. Clock thread only.
    private var pendingMoveFrames = 0
    /// The move applied at the end of the last period run by hand (`runPeriod(at:)`'s answer).
    private var movedByHand = 0
    private let alignments = Atomic<UInt64>(0)
    private let alignedFrames = Atomic<UInt64>(0)
    private let moves = Atomic<UInt64>(0)
    private let movedFrames = Atomic<Int>(0)

    /// - Parameter threaded: false for a clock driven by hand (`runPeriod(at:)`, deterministic tests): no
    ///   thread is started.
    /// - Throws: `EngineError` when the system refuses the network poller (epoll, eventfd).
    /// - Parameter sendSocket: the socket the clock's sender ports send from (the engine's).
    package init(
        name: String, sampleRate: Int, periodFrames: Int, sendSocket: UDPSocket, threaded: Bool = true
    ) throws(EngineError) {
        do {
            // A few sockets (the clock's media socket), drained every period: up to 64 batches of 32 each.
            network = try PacketReceiveLoop(capacity: 8, batchCapacity: 32, batchesPerSocket: 64, name: name)
        } catch {
            throw EngineError("cannot poll the network: \(error)")
        }
        media = try MediaInput(loop: network, streamCapacity: MediaEngine.receiveCapacity)
        fanOut = .allocate(capacity: 1)
        fanOut.initialize(to: SendFanOut(socket: sendSocket))
        self.name = name
        self.threaded = threaded
        allowsPhaseAlignment = threaded
        self.sampleRate = sampleRate
        self.periodFrames = periodFrames
    }

    deinit {
        device?.stop()
        fanOut.deinitialize(count: 1)
        fanOut.deallocate()
    }

    private var driftGroups: [String: DriftGroup] = [:]

    /// The drift group of the streams from remote device clock `key` played on this clock (made on first
    /// use). Control plane.
    public func driftGroup(for key: String) -> DriftGroup {
        if let group = driftGroups[key] { return group }
        let group = DriftGroup()
        driftGroups[key] = group
        return group
    }

    /// Whether the clock thread runs (some port is attached). Control plane.
    public var isRunning: Bool { device != nil }

    /// Periods skipped since the clock was made because its thread stalled for more than 100 ms (their audio
    /// is lost). Control plane; a port reports the difference since it attached.
    public var overruns: UInt64 { earlierOverruns + (device?.overruns ?? 0) }

    /// Wake-ups of the clock thread later than half a period after their deadline, since the clock was made:
    /// the machine kept the thread from running in time (packets sent late, or played late). Control plane; a
    /// port reports the difference since it attached.
    public var lateWakes: UInt64 { earlierLateWakes + (device?.lateWakes ?? 0) }

    /// The latest wake-up of the clock thread since the clock was made, in milliseconds after its deadline (0
    /// when none was later than half a period). Control plane.
    public var worstWakeLatenessMilliseconds: Double {
        Double(max(earlierWorstWakeLateness, device?.worstWakeLatenessNanoseconds ?? 0)) / 1_000_000
    }

    /// Whether the port that runs now is the only one on the clock, so that it may move the clock's timeline
    /// (`moveNextPeriod(byFrames:startingStream:)`) without moving anyone else's audio. Clock thread only.
    package var runsOnePortOnly: Bool { allowsPhaseAlignment && portsAttached.load(ordering: .sequentiallyConsistent) == 1 }

    /// Makes the next period come `frames` later (negative: earlier, by less than a period) than one period
    /// after this one: a receiver port alone on the clock aligns its reads with the packets of its one stream
    /// when it starts (`startingStream`, `LatencyPolicy.phaseDelayFrames`) and keeps them there while it plays
    /// (`LatencyPolicy.deviceMove`). Only when `runsOnePortOnly`. Clock thread only; realtime-safe.
    /// The move takes effect at the end of the period, and only if no port attached meanwhile (a newcomer may
    /// run in this very period: its second period must come one period after its first).
    /// - Returns: whether the clock will move (not when another port is there).
    @discardableResult
    package func moveNextPeriod(byFrames frames: Int, startingStream: Bool) -> Bool {
        guard frames != 0, runsOnePortOnly else { return false }
        if startingStream {
            alignments.add(1, ordering: .relaxed)
            alignedFrames.add(UInt64(max(0, frames)), ordering: .relaxed)
        } else {
            moves.add(1, ordering: .relaxed)
            movedFrames.add(frames, ordering: .relaxed)
        }
        pendingMoveFrames += frames
        return true
    }

    /// At the end of a period: hands the period's move to the device thread (or to the hand-run driver), unless
    /// a port attached while the period ran. Clock thread only.
    private func applyPendingMove() -> Int {
        let frames = pendingMoveFrames
        pendingMoveFrames = 0
        guard frames != 0, runsOnePortOnly else { return 0 }
        // The thread runs only while `device` is set: written before it starts, cleared after it stops.
        if threaded { device?.moveNextPeriod(byFrames: frames) }
        return frames
    }

    /// Times a port delayed the clock's periods to align its reads as its stream started, and the frames it
    /// delayed them by in all. Any thread.
    public var phaseAlignments: (count: UInt64, frames: UInt64) {
        (alignments.load(ordering: .relaxed), alignedFrames.load(ordering: .relaxed))
    }

    /// Times a port moved the clock's periods to follow its stream while it played, and the frames it moved
    /// them by in all (positive: later). Any thread.
    public var phaseMoves: (count: UInt64, frames: Int) {
        (moves.load(ordering: .relaxed), movedFrames.load(ordering: .relaxed))
    }

    /// Runs `node` from the next period on, starting the clock thread if it is idle.
    ///
    /// - Throws: `EngineError` when `nodeCapacity` ports are attached already.
    package func attach(_ node: PeriodNode) throws(EngineError) {
        portsAttached.add(1, ordering: .sequentiallyConsistent)
        guard nodes.insert(node) else {
            portsAttached.subtract(1, ordering: .relaxed)
            throw EngineError("the \(sampleRate) Hz engine clock runs \(Self.nodeCapacity) ports already")
        }
        attached += 1
        guard threaded, device == nil else { return }
        let device = PacedDeviceClock(
            name: name, sampleRate: sampleRate, periodFrames: periodFrames, context: Unmanaged.passUnretained(self).toOpaque(),
            process: Self.runPeriod)
        self.device = device
        device.start()
    }

    /// Stops running `node`: when this returns the clock thread never touches it (or its context) again.
    /// Stops the thread after the last port.
    package func detach(_ node: PeriodNode) async {
        guard await nodes.remove(node, deviceRunning: device != nil) else { return }
        portsAttached.subtract(1, ordering: .relaxed)
        attached -= 1
        if attached == 0, let device {
            device.stop()
            earlierOverruns += device.overruns
            earlierLateWakes += device.lateWakes
            earlierWorstWakeLateness = max(earlierWorstWakeLateness, device.worstWakeLatenessNanoseconds)
            self.device = nil
        }
    }

    /// Stops the clock thread at once, for good, without waiting for ports to detach: only for a peer torn
    /// down without stopping its ports, before they free what the thread runs. Control plane.
    public func stopForTeardown() {
        device?.stop()
        device = nil
    }

    /// Periods run since the media socket was last read while it carried no stream. Clock thread only.
    private var periodsSinceQuietRead = 0
    /// How often a media socket that carries no stream is still read, in periods (85 ms at 64 frames and
    /// 48 kHz): what arrives for no stream is counted stray within that, at no system call per period for a
    /// clock that only sends.
    private static let quietReadInterval = 64

    /// The period loop's body: the packets that arrived, every attached port, then the packets to send.
    /// Clock thread only.
    private static let runPeriod: PacedDeviceClock.Handler = { context, periodTime, frames in
        Unmanaged<EngineClock>.fromOpaque(context!)._withUnsafeGuaranteedRef { clock in
            clock.periodsSinceQuietRead &+= 1
            if clock.media.demux.carriesStreams || clock.periodsSinceQuietRead >= EngineClock.quietReadInterval {
                clock.periodsSinceQuietRead = 0
                // The kernel's arrival times, even for packets that came after the period's time (the thread
                // woke late): clamped to the period's time, they looked up to the wake-up's lateness faster than
                // they were, which the fastest-transit reference of every fixed target took in, and drift
                // compensation then moved the play head by as much (under two packets of target, past its
                // margin: the lab's 1.5-packet stream played 5414 reads short). A clock run by hand is on
                // fake time, which the kernel's times are not: its periods still see them at the period's time.
                clock.network.receiveReady(notAfter: HostTime(nanoseconds: clock.threaded ? .max : periodTime))
            }
            clock.nodes.forEachActive { node in node.handler(node.context, periodTime, frames) }
            clock.movedByHand = clock.applyPendingMove()
            clock.fanOut.pointee.flush()
        }
    }

    /// Runs one period on the caller's thread, as the clock thread would: a clock made with `threaded: false`
    /// only (deterministic tests on a manual clock).
    /// - Returns: frames by which a port asked the next period to come later (negative: earlier) than one period
    ///   after this one (0 unless `allowsPhaseAlignment`): a driver that honours it keeps the clock's timeline as
    ///   the thread would.
    @discardableResult
    public func runPeriod(at periodTime: HostTime) -> Int {
        precondition(!threaded, "a threaded clock runs its own periods")
        Self.runPeriod(Unmanaged.passUnretained(self).toOpaque(), periodTime.nanoseconds, periodFrames)
        return movedByHand
    }
}
