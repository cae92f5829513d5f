import TuttiCore
import TuttiWire

/// Who may ask what, in a members-only session where every request comes with the peer ID its sender proved:
/// any member connects, disconnects and reads, but speaks only in its own name.
extension ConnectionLifecycle {
    /// Why `request` from `member` (the peer ID its handshake proved) is refused, or nil when it may go on.
    /// - a hello, bye or offer must carry the sender's own peer ID, so no member answers in another's name;
    /// - a teardown or an upstream notice must come from the other end of that connection (a teardown of a
    ///   connection this peer does not have changes nothing, so it may go on).
    package func refusal(of request: ControlRequest, from member: PeerID) -> ControlFailure? {
        switch request {
        case .hello(let presence), .bye(let presence):
            guard presence.id != member else { return nil }
            return ControlFailure(.forbidden, "a \(request.typeName) in the name of peer \(presence.id) from peer \(member)")
        case .offer(let offer):
            guard offer.senderPeerID != member else { return nil }
            return ControlFailure(.forbidden, "an offer in the name of peer \(offer.senderPeerID) from peer \(member)")
        case .teardown(let notice):
            guard !isEnd(member, of: notice.connectionID) else { return nil }
            return ControlFailure(
                .forbidden, "only the two ends of connection \(notice.connectionID) may tear it down, and peer \(member) is neither")
        case .upstream(let notice):
            guard let entry = receiving[notice.connectionID], entry.senderPeerID != member else { return nil }
            return ControlFailure(.forbidden, "only the sender of connection \(notice.connectionID) may tell of its upstream")
        case .rekey(let notice):
            guard let entry = receiving[notice.connectionID], entry.senderPeerID != member else { return nil }
            return ControlFailure(.forbidden, "only the sender of connection \(notice.connectionID) may give it a new key")
        case .describe, .statistics, .connect, .disconnect, .setParameters, .mute:
            return nil
        }
    }

    /// Whether `member` is an end of connection `id` (this peer itself, the sender of a stream it receives, the
    /// receiver that answered a stream it sends), or no such connection is here.
    private func isEnd(_ member: PeerID, of id: ConnectionID) -> Bool {
        if member == identity.peerID { return true }
        let asReceiver = receiving[id].map { $0.senderPeerID == member }
        let asSender = sending[id].map { $0.receiverPeerID == nil || $0.receiverPeerID == member }
        switch (asReceiver, asSender) {
        case (nil, nil): return true
        case (let receiving, let sending): return receiving == true || sending == true
        }
    }
}
