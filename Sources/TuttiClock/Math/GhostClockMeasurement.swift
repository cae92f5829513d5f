// Ableton Link's ghost-clock measurement (protocol reference 5.3), the initiator's side, as a value-type state
// machine: the driver feeds it inputs (start, each PONG, timer expiry) with the host time it read, and
// carries out the actions it returns (send a PING, arm the one timer, report the result). No sockets, no
// timers, no clock of its own. It pings, counts, retries and estimates exactly as Link does, so a Link peer
// sees the same 52 PINGs; Tutti's better estimates over the same samples are in `GhostClockEstimator`.

/// One offset sample of a measurement: an estimate of `ghost - host` in µs (a double; Link's samples end in
/// .5 when a sum is odd), with the round trip that bounds its error.
package struct GhostClockSample: Hashable, Sendable {
    /// Which of the two estimates of 5.3 this is.
    package enum Kind: Hashable, Sendable {
        /// `gt - (ht + h) / 2`: the responder read its clock halfway through this PING's round trip.
        /// Round trip: `h - ht` (our send to our receive, host µs).
        case pingRoundTrip
        /// `(gt + pgt) / 2 - ht`: this PING left halfway between the responder's two consecutive clock reads.
        /// Round trip: `gt - pgt` (the responder's interval between the reads, ghost µs).
        case responderInterval
    }

    /// The estimate of `ghost - host`, µs.
    package var offset: Double
    /// The interval the estimate assumes was split in half, µs: its error is at most half of it (plus
    /// clock-read granularity), whatever the two one-way delays were.
    package var roundTrip: Int64
    package var kind: Kind

    package init(offset: Double, roundTrip: Int64, kind: Kind) {
        self.offset = offset
        self.roundTrip = roundTrip
        self.kind = kind
    }
}

/// Measures a session's ghost clock against this peer's host clock by PING/PONG with one of its peers,
/// exactly as Link's initiator does (5.3):
///
/// - `start(now:)`: PING with `__ht` = now only; arm a 50 ms timer.
/// - each PONG from the target session (`receivedPong`): at once the next PING with `__ht` = now and
///   `_pgt` = the PONG's `__gt` (no pacing); then samples: if `gt ≠ 0` and `ht ≠ 0`,
///   `gt - (ht + now) / 2`, and if also `pgt ≠ 0`, `(gt + pgt) / 2 - ht`; once there are more than 100
///   samples (the 51st PONG, 101 samples) the measurement is finished, otherwise the timer is re-armed.
///   A complete measurement therefore puts 52 PINGs on the wire (the 52nd PONG arrives after the end and
///   is ignored).
/// - a PONG carrying another SessionID: fails at once.
/// - timer expiry: fewer than 5 retries so far, a fresh PING (`__ht` only, a new chain), one more retry,
///   re-arm; otherwise fail. The retry count is never reset, so an unanswered target sees 6 PINGs 50 ms
///   apart and the measurement fails at 300 ms.
/// - finished: offset = median of the samples (mean of the two middle ones for an even count), rounded
///   half away from zero; result `GhostTransform(slope: 1, intercept: offset)`.
///
/// Driving it: send every `.sendPing` right away (the first and every retry to the target's measurement
/// endpoint, a PING answering a PONG to that PONG's source; Tutti should only feed PONGs from the target's
/// address, see reference 14.5), keep one timer and replace its deadline on every `.armTimer`, call
/// `timerFired(now:)` when it expires. After `.finished` or `.failed` stop the timer; every later input
/// returns no action. A timer firing before the current deadline (a stale one) is ignored.
///
/// Realtime-safe: no (actions are returned in an array, samples are kept in one; all of it on a network or
/// control thread). Thread-safe: a value; use one instance from one thread at a time.
package struct GhostClockMeasurement: Sendable {
    /// The PONG timeout: 50,000 µs.
    package static let pingTimeout: Int64 = 50_000
    /// Timer expiries answered with a fresh PING before the measurement fails: 5.
    package static let maximumRetries = 5
    /// The measurement finishes once it holds more than this many samples: 100.
    package static let sampleThreshold = 100

    /// Why a measurement failed.
    package enum FailureReason: Hashable, Sendable {
        /// A PONG carried this SessionID instead of the target's (the peer changed session).
        case wrongSession(SessionID)
        /// The timer expired after the 5th retry (no PONG for 50 ms, six times in all).
        case noAnswer
    }

    /// Something the driver must do.
    package enum Action: Hashable, Sendable {
        /// Send a PING with `__ht` = `hostTime` and, if not nil, `_pgt` = `previousGhostTime`.
        case sendPing(hostTime: Int64, previousGhostTime: Int64?)
        /// (Re)arm the one timer to fire at host time `deadline` (replacing any earlier deadline).
        case armTimer(deadline: Int64)
        /// Done: the session's ghost clock is `ghost = host + intercept` (Link's median estimate).
        case finished(GhostTransform)
        /// Abandoned.
        case failed(FailureReason)
    }

    /// Where the measurement is.
    package enum State: Hashable, Sendable {
        case idle
        case measuring
        case finished(GhostTransform)
        case failed(FailureReason)
    }

    /// The session the target must belong to.
    package let targetSession: SessionID
    /// Where the measurement is: idle until `start`, then measuring until finished or failed.
    package private(set) var state: State = .idle
    /// The samples so far, in arrival order (for each PONG the `.pingRoundTrip` one first).
    package private(set) var samples: [GhostClockSample] = []
    /// Retries made so far (0...5).
    package private(set) var retries = 0
    /// PINGs asked for so far (the first, one per PONG, one per retry).
    package private(set) var pingsSent = 0
    /// PONGs of the target session processed so far.
    package private(set) var pongsReceived = 0
    /// The deadline of the armed timer, if any.
    package private(set) var timerDeadline: Int64?

    /// A measurement of a peer of `targetSession`, not started yet.
    package init(targetSession: SessionID) { self.targetSession = targetSession }

    /// Starts measuring at host time `now`: `[.sendPing(now, nil), .armTimer(now + 50 ms)]`. Ignored unless idle.
    package mutating func start(now: Int64) -> [Action] {
        guard state == .idle else { return [] }
        state = .measuring
        samples.reserveCapacity(Self.sampleThreshold + 2)
        return [ping(now: now, previousGhostTime: nil), arm(now: now)]
    }

    /// A PONG arrived at host time `now`: its `sess`, `__gt`, and the echoed `_pgt` and `__ht` (nil when
    /// absent; Link treats an absent value and 0 alike). Returns the next PING and then either a re-armed
    /// timer or the result, or `.failed` for another session. Ignored unless measuring.
    package mutating func receivedPong(
        sessionID: SessionID, ghostTime: Int64, previousGhostTime: Int64?, hostTimeEchoed: Int64?, now: Int64
    ) -> [Action] {
        guard state == .measuring else { return [] }
        guard sessionID == targetSession else { return fail(.wrongSession(sessionID)) }
        pongsReceived += 1
        let gt = ghostTime
        let pgt = previousGhostTime ?? 0
        let ht = hostTimeEchoed ?? 0
        var actions = [ping(now: now, previousGhostTime: gt)]
        if gt != 0 && ht != 0 {
            samples.append(
                GhostClockSample(
                    offset: Double(gt) - (Double(ht) + Double(now)) / 2,
                    roundTrip: LinkArithmetic.subtract(now, ht), kind: .pingRoundTrip))
            if pgt != 0 {
                samples.append(
                    GhostClockSample(
                        offset: (Double(gt) + Double(pgt)) / 2 - Double(ht),
                        roundTrip: LinkArithmetic.subtract(gt, pgt), kind: .responderInterval))
            }
        }
        if samples.count > Self.sampleThreshold {
            let offset = GhostClockEstimator.linkMedian(samples.map(\.offset)) ?? 0
            let result = GhostTransform.measured(offset: offset)
            state = .finished(result)
            timerDeadline = nil
            actions.append(.finished(result))
        } else {
            actions.append(arm(now: now))
        }
        return actions
    }

    /// The timer armed for `timerDeadline` fired at host time `now`: a fresh PING (new chain, `__ht` only)
    /// and a re-armed timer while fewer than 5 retries were made, otherwise `.failed(.noAnswer)`. Ignored
    /// unless measuring, and when `now` is before the current deadline (a stale timer).
    package mutating func timerFired(now: Int64) -> [Action] {
        guard state == .measuring, let deadline = timerDeadline, now >= deadline else { return [] }
        guard retries < Self.maximumRetries else { return fail(.noAnswer) }
        retries += 1
        return [ping(now: now, previousGhostTime: nil), arm(now: now)]
    }

    /// Link's estimate over the samples so far (`GhostClockEstimator.linkMedian`), nil without samples.
    package var linkOffset: Int64? { GhostClockEstimator.linkMedian(samples.map(\.offset)) }

    /// The shortest-round-trip estimate over the samples so far (`GhostClockEstimator.shortestRoundTrip`),
    /// nil without samples.
    package func shortestRoundTripOffset(keeping count: Int = GhostClockEstimator.defaultShortestCount) -> Int64? {
        GhostClockEstimator.shortestRoundTrip(samples, keeping: count)
    }

    /// Tutti's recommended estimate over the samples so far (`GhostClockEstimator.tightestBounds`), nil
    /// without samples.
    package func tightestBoundsOffset(discarding: Int = GhostClockEstimator.defaultDiscardedBounds) -> Int64? {
        GhostClockEstimator.tightestBounds(samples, discarding: discarding)
    }

    private mutating func ping(now: Int64, previousGhostTime: Int64?) -> Action {
        pingsSent += 1
        return .sendPing(hostTime: now, previousGhostTime: previousGhostTime)
    }

    private mutating func arm(now: Int64) -> Action {
        let deadline = LinkArithmetic.add(now, Self.pingTimeout)
        timerDeadline = deadline
        return .armTimer(deadline: deadline)
    }

    private mutating func fail(_ reason: FailureReason) -> [Action] {
        state = .failed(reason)
        timerDeadline = nil
        return [.failed(reason)]
    }
}

/// Offset estimators over measurement samples (`ghost - host`, µs).
///
/// Every sample's error is half the *asymmetry* of the interval it splits (one-way delay and processing on
/// the way out minus those on the way back) and at most half its round trip: the true offset lies in
/// `[offset - roundTrip / 2, offset + roundTrip / 2]`. Queueing and scheduling delays only ever add.
///
/// - `linkMedian`: Link's estimator (5.3), the one the measurement reports, so a Tutti peer lands where a
///   Link peer would. Unbiased only if the delays in both directions have the same distribution.
/// - `shortestRoundTrip`: the median of the `count` samples with the shortest round trip (ties by offset,
///   so the choice is deterministic): the samples least disturbed in either direction. Much better than
///   the plain median with jitter on one direction only (a busy uplink, a loaded responder); with
///   symmetric uniform jitter it is somewhat noisier (it averages fewer samples).
/// - `tightestBounds`: Tutti's recommended estimator. Intersects the samples' brackets: the largest lower
///   bound is set by the PONG that came back fastest, the smallest upper bound by the PING that went out
///   fastest, so the estimate (the middle of the intersection) is off by half the difference of the two
///   directions' *fastest* excess delays, not of their typical delays. In the simulations of the LinkMath
///   measurement tests it has about 2/3 of the median's spread with symmetric jitter, and removes about
///   90 % of the median's bias with one-sided jitter (as `shortestRoundTrip` does).
///
/// No estimator can see a *constant* asymmetry (a slower path one way): all three are then off by half of
/// it. Samples with a negative round trip (a clock step in between) are skipped by the last two.
///
/// Realtime-safe: no (they sort a copy). Thread-safe: pure.
package enum GhostClockEstimator {
    /// How many shortest-round-trip samples `shortestRoundTrip` keeps by default: 10 of Link's 101
    /// (about the fastest decile).
    package static let defaultShortestCount = 10

    /// Link's estimate: the median (the mean of the two middle values for an even count), rounded half away
    /// from zero; nil for no samples.
    package static func linkMedian(_ offsets: [Double]) -> Int64? {
        guard !offsets.isEmpty else { return nil }
        let sorted = offsets.sorted()
        let mid = sorted.count / 2
        let median = sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
        return LinkArithmetic.round(median)
    }

    /// The median (as `linkMedian`) of the `count` samples with the shortest round trip (all of them if there
    /// are fewer; at least one is kept); nil if no sample has a non-negative round trip.
    package static func shortestRoundTrip(_ samples: [GhostClockSample], keeping count: Int = defaultShortestCount)
        -> Int64?
    {
        let usable = samples.filter { $0.roundTrip >= 0 }.sorted {
            ($0.roundTrip, $0.offset) < ($1.roundTrip, $1.offset)
        }
        return linkMedian(usable.prefix(max(1, count)).map(\.offset))
    }

    /// How many of the most extreme distinct bounds `tightestBounds` ignores on each side by default: 1,
    /// so one wild PONG (a responder whose ghost clock stepped mid-measurement) cannot move the estimate by
    /// more than the next one allows.
    package static let defaultDiscardedBounds = 1

    /// Tutti's recommended estimate: each sample brackets the offset in `offset ± roundTrip / 2` (for the
    /// `.pingRoundTrip` kind `[gt - h, gt - ht]`, for `.responderInterval` `[pgt - ht, gt - ht]`; each PONG's
    /// bounds therefore appear in two samples, so bounds are taken as distinct values). Takes the largest
    /// lower bound and the smallest upper bound after discarding the `discarding` most extreme distinct
    /// values on each side, and returns the middle of that interval, rounded half away from zero. If the
    /// bounds cross (inconsistent samples), falls back to `shortestRoundTrip`. Nil if no sample has a
    /// non-negative round trip.
    package static func tightestBounds(_ samples: [GhostClockSample], discarding: Int = defaultDiscardedBounds)
        -> Int64?
    {
        let usable = samples.filter { $0.roundTrip >= 0 }
        guard !usable.isEmpty else { return nil }
        let lowers = Set(usable.map { $0.offset - Double($0.roundTrip) / 2 }).sorted(by: >)
        let uppers = Set(usable.map { $0.offset + Double($0.roundTrip) / 2 }).sorted()
        let lower = lowers[min(max(0, discarding), lowers.count - 1)]
        let upper = uppers[min(max(0, discarding), uppers.count - 1)]
        guard lower <= upper else { return shortestRoundTrip(usable) }
        return LinkArithmetic.round((lower + upper) / 2)
    }
}
