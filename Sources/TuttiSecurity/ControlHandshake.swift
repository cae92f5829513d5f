import Crypto
import TuttiCore

/// How a control connection of a members-only session begins, on top of Tutti's framing (a 4-byte length,
/// then the frame): the initiator's first frame is `TNX1` and Noise's first message, the responder answers
/// with the second, the initiator sends the third, and every frame after that is a transport message (the
/// JSON request or response, encrypted). A plain request starts with `{`, so a peer tells the two apart by
/// the first byte. Tutti's own length prefix frames the transport messages, so one may exceed Noise's
/// 65535 bytes (control frames are at most 256 KiB).
///
/// Pure: no I/O. Thread-safe: yes (stateless).
public enum ControlHandshake {
    /// The first four bytes of an initiator's first frame: the suite, and the version of this framing.
    public static let magic: [UInt8] = Array("TNX1".utf8)
    /// Hashed into the handshake first, so both sides agree on what they speak.
    static let prologue: [UInt8] = Array("tutti control channel 1".utf8)

    /// Whether `frame` begins a handshake (and is not a plain request).
    public static func isHandshake(_ frame: [UInt8]) -> Bool { frame.starts(with: magic) }
}

/// The connecting side of a control connection's handshake: `firstFrame`, then `readAnswer`, which gives the
/// third frame and the transport channel. A value; thread-safe: no (one connection owns it).
public struct ControlHandshakeInitiator: Sendable {
    private var noise: NoiseHandshake

    public init(
        keyPair: PeerKeyPair, sessionKey: SessionKey,
        ephemeral: @escaping @Sendable () -> Curve25519.KeyAgreement.PrivateKey = { Curve25519.KeyAgreement.PrivateKey() }
    ) {
        // 32-byte key: the initializer cannot throw.
        noise = try! NoiseHandshake(
            role: .initiator, staticKey: keyPair.privateKey, preSharedKey: sessionKey.bytes, prologue: ControlHandshake.prologue,
            ephemeral: ephemeral)
    }

    /// The first frame: the magic and Noise's `-> e`.
    public mutating func firstFrame() throws(NoiseError) -> [UInt8] {
        ControlHandshake.magic + (try noise.writeMessage())
    }

    /// Reads the responder's `<- e, ee, s, es` and writes `-> s, se, psk`.
    ///
    /// - Returns: the third frame to send, the transport channel, and the responder's peer ID (what its static
    ///   key proves).
    /// - Throws: `NoiseError` when the answer is not the responder's message of this session.
    public mutating func readAnswer(_ frame: [UInt8]) throws(NoiseError) -> (
        finalFrame: [UInt8], channel: SecureControlChannel, responder: PeerID
    ) {
        _ = try noise.readMessage(frame)
        guard let responderKey = noise.remoteStaticKey else { throw .invalidKey }
        let final = try noise.writeMessage()
        guard let (send, receive) = noise.transport() else { throw .outOfTurn }
        return (final, SecureControlChannel(send: send, receive: receive), PeerKeyPair.peerID(for: responderKey))
    }
}

/// The listening side of a control connection's handshake: `answer` the first frame, then `readFinal`. It
/// accepts any key of its ring (two during a key change). A value; thread-safe: no (one connection owns it).
public struct ControlHandshakeResponder: Sendable {
    private var noise: NoiseHandshake
    private let keys: SessionKeyRing

    public init(
        keyPair: PeerKeyPair, keys: SessionKeyRing,
        ephemeral: @escaping @Sendable () -> Curve25519.KeyAgreement.PrivateKey = { Curve25519.KeyAgreement.PrivateKey() }
    ) {
        self.keys = keys
        noise = try! NoiseHandshake(
            role: .responder, staticKey: keyPair.privateKey, preSharedKey: keys.current.bytes, prologue: ControlHandshake.prologue,
            ephemeral: ephemeral)
    }

    /// Reads the initiator's first frame (magic and `-> e`) and writes `<- e, ee, s, es`.
    ///
    /// - Throws: `.notAHandshake` without the magic; `NoiseError` for a message Noise refuses.
    public mutating func answer(_ firstFrame: [UInt8]) throws(NoiseError) -> [UInt8] {
        guard ControlHandshake.isHandshake(firstFrame) else { throw .notAHandshake }
        _ = try noise.readMessage(Array(firstFrame.dropFirst(ControlHandshake.magic.count)))
        return try noise.writeMessage()
    }

    /// Reads `-> s, se, psk`, trying each key of the ring.
    ///
    /// - Returns: the transport channel, the initiator's peer ID (what its static key proves), and the key it
    ///   holds.
    /// - Throws: `.authenticationFailed` when the initiator holds none of this peer's keys.
    public mutating func readFinal(_ frame: [UInt8]) throws(NoiseError) -> (
        channel: SecureControlChannel, initiator: PeerID, key: SessionKey
    ) {
        let (_, index) = try noise.readMessage(frame, tryingPreSharedKeys: keys.keys.map(\.bytes))
        guard let initiatorKey = noise.remoteStaticKey, let (send, receive) = noise.transport() else { throw .outOfTurn }
        return (SecureControlChannel(send: send, receive: receive), PeerKeyPair.peerID(for: initiatorKey), keys.keys[index])
    }
}

/// A control connection after its handshake: seals what this side sends, opens what it receives; a message
/// replayed, reordered or altered fails to open. A value; thread-safe: no (one connection owns it).
public struct SecureControlChannel: Sendable {
    private var send: NoiseCipherState
    private var receive: NoiseCipherState

    init(send: NoiseCipherState, receive: NoiseCipherState) {
        self.send = send
        self.receive = receive
    }

    public mutating func seal(_ plaintext: [UInt8]) throws(NoiseError) -> [UInt8] { try send.encrypt(plaintext) }

    public mutating func open(_ ciphertext: [UInt8]) throws(NoiseError) -> [UInt8] { try receive.decrypt(ciphertext) }
}
