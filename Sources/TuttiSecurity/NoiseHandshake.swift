import Crypto

/// A Noise handshake (revision 34) of the suite Tutti's control channel speaks,
/// `Noise_XXpsk3_25519_ChaChaPoly_SHA256`: both peers prove their static Curve25519 keys, and the session
/// key is the pre-shared key, mixed in at the end of the third message, so a peer without it fails there.
///
///     -> e
///     <- e, ee, s, es
///     -> s, se, psk
///
/// Pure: no I/O, no clock; randomness only in the ephemeral keys, which tests inject (`ephemeral`). Each
/// message carries a payload, encrypted from the second message on. After the third message both sides
/// `split` into the transport ciphers.
///
/// A value; thread-safe: no (one connection owns it).
public struct NoiseHandshake: Sendable {
    public enum Role: Sendable { case initiator, responder }

    /// The suite's name, hashed into the handshake (spec §5.2).
    public static let protocolName = "Noise_XXpsk3_25519_ChaChaPoly_SHA256"
    public static let keyLength = 32

    private enum Token { case e, s, ee, es, se, psk }
    private static let messages: [[Token]] = [[.e], [.e, .ee, .s, .es], [.s, .se, .psk]]

    public let role: Role
    private var symmetric: NoiseSymmetricState
    private let staticKey: Curve25519.KeyAgreement.PrivateKey
    private var preSharedKey: [UInt8]
    private var makeEphemeral: @Sendable () -> Curve25519.KeyAgreement.PrivateKey
    private var ephemeral: Curve25519.KeyAgreement.PrivateKey?
    private var remoteEphemeral: Curve25519.KeyAgreement.PublicKey?
    /// The other side's static public key, once its message carrying it was read.
    public private(set) var remoteStaticKey: Curve25519.KeyAgreement.PublicKey?
    private var next = 0

    /// - Parameters:
    ///   - staticKey: this peer's long-term key pair (its identity).
    ///   - preSharedKey: the session key, 32 bytes.
    ///   - prologue: bytes both sides must agree on (the protocol's version), hashed in first.
    ///   - ephemeral: where ephemeral keys come from (tests pass fixed ones).
    /// - Throws: `.invalidPreSharedKey` for a key that is not 32 bytes.
    public init(
        role: Role, staticKey: Curve25519.KeyAgreement.PrivateKey, preSharedKey: [UInt8], prologue: [UInt8] = [],
        ephemeral: @escaping @Sendable () -> Curve25519.KeyAgreement.PrivateKey = { Curve25519.KeyAgreement.PrivateKey() }
    ) throws(NoiseError) {
        guard preSharedKey.count == Self.keyLength else { throw .invalidPreSharedKey(length: preSharedKey.count) }
        self.role = role
        self.staticKey = staticKey
        self.preSharedKey = preSharedKey
        makeEphemeral = ephemeral
        symmetric = NoiseSymmetricState(protocolName: Self.protocolName)
        symmetric.mixHash(prologue)
    }

    /// Whether all three messages have been written or read.
    public var isComplete: Bool { next == Self.messages.count }

    /// Whether the next message is this side's to write.
    public var isMyTurn: Bool { !isComplete && (next % 2 == 0) == (role == .initiator) }

    /// The handshake hash: equal on both sides after the handshake, a channel binding.
    public var handshakeHash: [UInt8] { symmetric.handshakeHash }

    /// Writes the next message, carrying `payload`.
    public mutating func writeMessage(payload: [UInt8] = []) throws(NoiseError) -> [UInt8] {
        guard isMyTurn else { throw .outOfTurn }
        var message: [UInt8] = []
        for token in Self.messages[next] {
            switch token {
            case .e:
                let key = makeEphemeral()
                ephemeral = key
                let publicKey = Array(key.publicKey.rawRepresentation)
                message += publicKey
                symmetric.mixHash(publicKey)
                symmetric.mixKey(publicKey)  // a PSK handshake mixes e into the key too (spec §9.2)
            case .s:
                message += try symmetric.encryptAndHash(Array(staticKey.publicKey.rawRepresentation))
            case .ee, .es, .se:
                try mixDiffieHellman(token)
            case .psk:
                symmetric.mixKeyAndHash(preSharedKey)
            }
        }
        message += try symmetric.encryptAndHash(payload)
        next += 1
        return message
    }

    /// Reads the other side's next message and returns its payload.
    public mutating func readMessage(_ message: [UInt8]) throws(NoiseError) -> [UInt8] {
        guard !isComplete, !isMyTurn else { throw .outOfTurn }
        var rest = message[...]
        for token in Self.messages[next] {
            switch token {
            case .e:
                guard rest.count >= Self.keyLength else { throw .truncated(needed: Self.keyLength, got: rest.count) }
                let publicKey = Array(rest.prefix(Self.keyLength))
                rest = rest.dropFirst(Self.keyLength)
                guard let key = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: publicKey) else { throw .invalidKey }
                remoteEphemeral = key
                symmetric.mixHash(publicKey)
                symmetric.mixKey(publicKey)
            case .s:
                let length = Self.keyLength + (symmetric.cipher.hasKey ? NoiseCipherState.tagLength : 0)
                guard rest.count >= length else { throw .truncated(needed: length, got: rest.count) }
                let publicKey = try symmetric.decryptAndHash(Array(rest.prefix(length)))
                rest = rest.dropFirst(length)
                guard let key = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: publicKey) else { throw .invalidKey }
                remoteStaticKey = key
            case .ee, .es, .se:
                try mixDiffieHellman(token)
            case .psk:
                symmetric.mixKeyAndHash(preSharedKey)
            }
        }
        let payload = try symmetric.decryptAndHash(Array(rest))
        next += 1
        return payload
    }

    /// Reads the other side's next message, trying each of `preSharedKeys` in turn for the PSK it mixes in:
    /// a responder that accepts two session keys while the session changes its key. The key this side was
    /// made with is not tried unless it is among them.
    ///
    /// - Returns: the payload and the index of the key that verified.
    /// - Throws: the error of the last key tried (`.authenticationFailed` when none verified); the handshake
    ///   is then unchanged.
    public mutating func readMessage(_ message: [UInt8], tryingPreSharedKeys preSharedKeys: [[UInt8]]) throws(NoiseError)
        -> (payload: [UInt8], keyIndex: Int)
    {
        var last = NoiseError.authenticationFailed
        for (index, key) in preSharedKeys.enumerated() {
            guard key.count == Self.keyLength else { throw .invalidPreSharedKey(length: key.count) }
            var attempt = self
            attempt.preSharedKey = key
            do {
                let payload = try attempt.readMessage(message)
                self = attempt
                return (payload, index)
            } catch {
                last = error
            }
        }
        throw last
    }

    /// The transport ciphers once the handshake is complete: what this side sends with, and receives with.
    public func transport() -> (send: NoiseCipherState, receive: NoiseCipherState)? {
        guard isComplete else { return nil }
        let (initiatorToResponder, responderToInitiator) = symmetric.split()
        return role == .initiator ? (initiatorToResponder, responderToInitiator) : (responderToInitiator, initiatorToResponder)
    }

    /// ee, es, se as the role reads them: es is the initiator's ephemeral with the responder's static, se the
    /// initiator's static with the responder's ephemeral (spec §7.1).
    private mutating func mixDiffieHellman(_ token: Token) throws(NoiseError) {
        let local: Curve25519.KeyAgreement.PrivateKey?
        let remote: Curve25519.KeyAgreement.PublicKey?
        switch (token, role) {
        case (.ee, _): (local, remote) = (ephemeral, remoteEphemeral)
        case (.es, .initiator): (local, remote) = (ephemeral, remoteStaticKey)
        case (.es, .responder): (local, remote) = (staticKey, remoteEphemeral)
        case (.se, .initiator): (local, remote) = (staticKey, remoteEphemeral)
        case (.se, .responder): (local, remote) = (ephemeral, remoteStaticKey)
        default: (local, remote) = (nil, nil)
        }
        guard let local, let remote, let secret = try? local.sharedSecretFromKeyAgreement(with: remote) else { throw .invalidKey }
        symmetric.mixKey(secret.withUnsafeBytes { Array($0) })
    }
}
