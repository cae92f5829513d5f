import TuttiCore
import TuttiSecurity
import TuttiWire

/// Who may join a peer's session. A value; thread-safe: yes.
public enum PeerAccess: Sendable, Hashable {
    /// Anyone who can reach the peer may list, connect, disconnect and tear down: for a network the band owns.
    /// The CLI runs it only when asked (`--open`), and `tutti ls` shows it.
    case open
    /// Only holders of one of these keys (the first is the one the peer connects with): every control
    /// connection runs a Noise handshake with the key as pre-shared key, and its messages are encrypted.
    case members(SessionKeyRing)

    /// The key ring of a members-only session; nil when open.
    public var keys: SessionKeyRing? {
        if case .members(let keys) = self { keys } else { nil }
    }
}

/// What a peer or client proves when it opens control connections of a members-only session: the session
/// keys it holds and its key pair. A value; thread-safe: yes.
public struct ControlCredentials: Sendable {
    public var keys: SessionKeyRing
    public var keyPair: PeerKeyPair

    /// A client without an identity of its own (the CLI) proves membership with a fresh key pair.
    public init(keys: SessionKeyRing, keyPair: PeerKeyPair = PeerKeyPair()) {
        self.keys = keys
        self.keyPair = keyPair
    }
}

/// Who sent a control request, as far as the connection proves it. A value; thread-safe: yes.
public struct ControlCaller: Sendable, Hashable {
    /// The address the connection came from (numeric, no zone).
    public var host: String?
    /// In a members-only session, the peer ID the caller's handshake proved (a CLI's is a fresh one each time);
    /// nil on a plain connection (an open session, or a public read).
    public var member: PeerID?

    public init(host: String?, member: PeerID? = nil) {
        self.host = host
        self.member = member
    }
}

/// How a peer's control channel admits clients: its keys (none when open), its key pair, whether strangers
/// may read, and the peer's name for the refusals it words. A value; thread-safe: yes.
struct ControlChannelPolicy: Sendable {
    var access: PeerAccess = .open
    var keyPair = PeerKeyPair()
    var publicReads = false
    var peerName = "this peer"

    /// Whether a client that is not a member may make `request` (`describe` and `stats` with public reads).
    func allowsStrangers(_ request: ControlRequest) -> Bool {
        guard access.keys != nil else { return true }
        switch request {
        case .describe, .statistics: return publicReads
        default: return false
        }
    }

    /// The refusal a plain request of a members-only session gets.
    var strangerRefusal: ControlFailure {
        ControlFailure(
            .notMember,
            "peer \(peerName) is in a members-only session and this host has no session key: copy the session's key file to this host (tutti key show prints where it goes) or pass --key-file FILE"
        )
    }

    /// The refusal a handshake with another session key gets.
    var wrongKeyRefusal: ControlFailure {
        ControlFailure(
            .notMember,
            "peer \(peerName) is in a members-only session with another session key than this host's: copy the session's key file to this host again"
        )
    }

    /// The refusal an open peer gives a client that holds a key.
    var openRefusal: ControlFailure {
        ControlFailure(
            .notMember,
            "peer \(peerName) runs an open session without a session key; a host with a key does not talk to it: start it with the session key (or drop the key here with --open)"
        )
    }
}
