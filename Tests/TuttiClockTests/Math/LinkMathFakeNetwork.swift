import TuttiClock
import TuttiTesting

/// A simulated measurement exchange for the LinkMath tests: the initiator's host clock is the simulation's
/// time (µs), a responder whose ghost clock is `host + trueOffset` answers every PING as Link's responder
/// does (5.2: reads its ghost clock, echoes the ping), and every datagram gets a seeded one-way delay.
/// Event-driven and fully deterministic; nothing reads a real clock.
struct LinkMathFakeNetwork {
    /// Draws a delay or duration in µs.
    typealias Draw = (inout SeededGenerator) -> Int64

    var trueOffset: Int64 = 1_234_567_890
    /// The SessionID the responder puts in its PONGs.
    var responderSession = SessionID(rawValue: 0x4142_4344_4546_4748)
    /// Initiator to responder.
    var outDelay: Draw = { Int64.random(in: 50...500, using: &$0) }
    /// Responder to initiator.
    var backDelay: Draw = { Int64.random(in: 50...500, using: &$0) }
    /// The responder's processing time; it reads its clock at a uniformly drawn point within it.
    var processing: Draw = { Int64.random(in: 5...50, using: &$0) }
    /// Whether the responder answers the n-th PING it receives (1-based); datagrams are otherwise never lost.
    var answers: (Int) -> Bool = { _ in true }
    var seed: UInt64 = 1

    struct Outcome {
        var measurement: GhostClockMeasurement
        /// The last action that ended the measurement, if it ended.
        var result: GhostClockMeasurement.Action?
        var pingsSent = 0
        var pongsSent = 0
        /// PONGs that arrived after the measurement had ended (ignored by it).
        var latePongs = 0
        /// (time, action) for every action, in order.
        var log: [(time: Int64, action: GhostClockMeasurement.Action)] = []
        var startTime: Int64 = 0
        var endTime: Int64?

        /// Link's estimate minus the true offset, µs.
        func linkError(trueOffset: Int64) -> Int64? {
            guard case .finished(let transform) = result else { return nil }
            return transform.intercept - trueOffset
        }
    }

    private enum Event {
        case pingArrives(hostTime: Int64, previousGhostTime: Int64?)
        case pongArrives(session: SessionID, ghostTime: Int64, previousGhostTime: Int64?, hostTime: Int64)
    }

    /// Runs one measurement from host time `start` until it ends and the network is empty.
    func run(start: Int64 = 1_000_000_000) -> Outcome {
        var generator = SeededGenerator(seed: seed)
        var outcome = Outcome(
            measurement: GhostClockMeasurement(targetSession: SessionID(rawValue: 0x4142_4344_4546_4748)))
        outcome.startTime = start
        var queue: [(time: Int64, order: Int, event: Event)] = []
        var order = 0
        var timer: Int64?
        var pingsReceived = 0

        func schedule(_ time: Int64, _ event: Event) {
            queue.append((time, order, event))
            order += 1
        }
        func perform(_ actions: [GhostClockMeasurement.Action], at now: Int64) {
            for action in actions {
                outcome.log.append((now, action))
                switch action {
                case .sendPing(let hostTime, let previousGhostTime):
                    outcome.pingsSent += 1
                    schedule(
                        now + outDelay(&generator),
                        .pingArrives(hostTime: hostTime, previousGhostTime: previousGhostTime))
                case .armTimer(let deadline):
                    timer = deadline
                case .finished, .failed:
                    timer = nil
                    outcome.result = action
                    outcome.endTime = now
                }
            }
        }

        perform(outcome.measurement.start(now: start), at: start)
        while true {
            let next = queue.indices.min { (queue[$0].time, queue[$0].order) < (queue[$1].time, queue[$1].order) }
            if let timerDeadline = timer, next == nil || timerDeadline < queue[next!].time {
                timer = nil
                perform(outcome.measurement.timerFired(now: timerDeadline), at: timerDeadline)
                continue
            }
            guard let index = next else { break }
            let (now, _, event) = queue.remove(at: index)
            switch event {
            case .pingArrives(let hostTime, let previousGhostTime):
                pingsReceived += 1
                guard answers(pingsReceived) else { break }
                let total = processing(&generator)
                let readAt = now + Int64.random(in: 0...total, using: &generator)
                outcome.pongsSent += 1
                schedule(
                    now + total + backDelay(&generator),
                    .pongArrives(
                        session: responderSession, ghostTime: readAt + trueOffset, previousGhostTime: previousGhostTime,
                        hostTime: hostTime))
            case .pongArrives(let session, let ghostTime, let previousGhostTime, let hostTime):
                if outcome.result != nil { outcome.latePongs += 1 }
                perform(
                    outcome.measurement.receivedPong(
                        sessionID: session, ghostTime: ghostTime, previousGhostTime: previousGhostTime,
                        hostTimeEchoed: hostTime, now: now), at: now)
            }
        }
        return outcome
    }
}
