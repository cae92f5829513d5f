/// How long each step of a connection's life may take before `ConnectionLifecycle` gives up on it; nil: never.
///
/// `.compatible` is the peer's behaviour before the lifecycle existed (only the check of an existing pair is
/// bounded); `.standard` frees every connection that carries no media within 10 s (issue 14). A value;
/// thread-safe: yes (any thread).
public struct LifecycleTimeouts: Hashable, Sendable {
    /// Offering → unreachable: the whole offer over all endpoints (the CLI waits 8 s). Nil: the edge's own
    /// per-endpoint timeouts end the offer.
    public var offer: Duration?
    /// The `describe` probe that asks the receiver about an existing pair before connecting it again.
    public var verify: Duration
    /// Receiver: answered, but the stream never started playing → freed.
    public var start: Duration?
    /// Receiver: lost (no packets for the jitter buffer's 1 s) this much longer → freed. 8 s: ≤ 1 s detection
    /// + 0.25 s poll + 8 s + 0.25 s tick stays under 10 s.
    public var lost: Duration?
    /// Sender: how often each live connection's receiving peer is asked (`describe`) whether it still has it.
    public var probeInterval: Duration?
    /// Sender: probes unanswered this long → freed.
    public var unanswered: Duration?
    /// Receiver: how often a lost stream's sending peer is asked (`describe`) whether it still sends it. A
    /// sender that answers without it (it restarted, or freed the stream while its teardown notice was lost)
    /// frees the connection here; one whose host refuses (its peer is gone) too; one that does not answer for
    /// `unanswered` too. Nil: a lost stream waits for its sender's teardown, bye or a new offer of the pair.
    public var lostProbeInterval: Duration? = nil
    /// Sender, members-only sessions: how often a live stream to a peer gets a new SRTP key (`.rekey`).
    public var rekeyInterval: Duration? = nil
    /// Sender, members-only sessions: a receiver whose probes went unanswered this long gets a new key when it
    /// answers again (the stream resumes after a long loss, as after a link down).
    public var rekeyAfterLoss: Duration? = nil

    /// Every field given; nil disables that timeout.
    public init(
        offer: Duration?, verify: Duration, start: Duration?, lost: Duration?, probeInterval: Duration?, unanswered: Duration?
    ) {
        self.offer = offer
        self.verify = verify
        self.start = start
        self.lost = lost
        self.probeInterval = probeInterval
        self.unanswered = unanswered
    }

    /// Issue 14: nothing without media outlives 10 s, and the sender notices a receiver that is gone.
    public static let standard = LifecycleTimeouts(
        offer: .seconds(6), verify: .seconds(1), start: .seconds(9), lost: .seconds(8), probeInterval: .seconds(1),
        unanswered: .seconds(10))

    /// What a running peer uses: `.standard`, except that a stream lost to the network is kept, so that it
    /// resumes when the network comes back, and that a sender keeps streaming for 90 s to a receiver that does
    /// not answer (a dropped Wi-Fi link, a cable out for a minute: issue 14's 60 s outage with room to spare);
    /// a receiver whose host refuses the control connection (its peer is gone) ends at once. A lost stream's
    /// sender is asked every 2 s whether it still sends it (freed when it does not, is gone, or has not
    /// answered for 90 s). Streams are re-keyed every 10 minutes and after 5 s without an answer.
    public static let peer: LifecycleTimeouts = {
        var timeouts = LifecycleTimeouts(
            offer: .seconds(6), verify: .seconds(1), start: .seconds(9), lost: nil, probeInterval: .seconds(1),
            unanswered: .seconds(90))
        timeouts.lostProbeInterval = .seconds(2)
        timeouts.rekeyInterval = .seconds(600)
        timeouts.rekeyAfterLoss = .seconds(5)
        return timeouts
    }()

    /// Today's peer: only the probe of an existing pair times out; nothing is freed by time and nothing probes.
    public static let compatible = LifecycleTimeouts(
        offer: nil, verify: .seconds(1), start: nil, lost: nil, probeInterval: nil, unanswered: nil)
}
