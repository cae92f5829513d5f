import Crypto

/// Noise's SymmetricState (spec §5.2) with SHA-256: the chaining key, the handshake hash and the cipher they
/// key. HKDF is Noise's own (spec §4.3): HMAC-SHA256 over the chaining key, two or three outputs.
///
/// A value; thread-safe: no (the handshake owns it).
struct NoiseSymmetricState: Sendable {
    private(set) var chainingKey: [UInt8]
    private(set) var handshakeHash: [UInt8]
    var cipher = NoiseCipherState()

    static let hashLength = 32

    init(protocolName: String) {
        let name = Array(protocolName.utf8)
        handshakeHash = name.count <= Self.hashLength ? name + [UInt8](repeating: 0, count: Self.hashLength - name.count) : Self.hash(name)
        chainingKey = handshakeHash
    }

    mutating func mixKey(_ input: [UInt8]) {
        let outputs = Self.hkdf(chainingKey: chainingKey, input: input, count: 2)
        chainingKey = outputs[0]
        cipher.initializeKey(SymmetricKey(data: outputs[1]))
    }

    mutating func mixHash(_ data: [UInt8]) {
        handshakeHash = Self.hash(handshakeHash + data)
    }

    mutating func mixKeyAndHash(_ input: [UInt8]) {
        let outputs = Self.hkdf(chainingKey: chainingKey, input: input, count: 3)
        chainingKey = outputs[0]
        mixHash(outputs[1])
        cipher.initializeKey(SymmetricKey(data: outputs[2]))
    }

    mutating func encryptAndHash(_ plaintext: [UInt8]) throws(NoiseError) -> [UInt8] {
        let ciphertext = try cipher.encrypt(plaintext, associatedData: handshakeHash)
        mixHash(ciphertext)
        return ciphertext
    }

    mutating func decryptAndHash(_ ciphertext: [UInt8]) throws(NoiseError) -> [UInt8] {
        let plaintext = try cipher.decrypt(ciphertext, associatedData: handshakeHash)
        mixHash(ciphertext)
        return plaintext
    }

    /// The two transport ciphers: initiator to responder, responder to initiator.
    func split() -> (NoiseCipherState, NoiseCipherState) {
        let outputs = Self.hkdf(chainingKey: chainingKey, input: [], count: 2)
        return (NoiseCipherState(key: SymmetricKey(data: outputs[0])), NoiseCipherState(key: SymmetricKey(data: outputs[1])))
    }

    static func hash(_ data: [UInt8]) -> [UInt8] { Array(SHA256.hash(data: data)) }

    static func hmac(key: [UInt8], _ data: [UInt8]) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: data, using: SymmetricKey(data: key)))
    }

    /// Noise's HKDF: `count` (2 or 3) outputs of 32 bytes.
    static func hkdf(chainingKey: [UInt8], input: [UInt8], count: Int) -> [[UInt8]] {
        let temporary = hmac(key: chainingKey, input)
        var outputs: [[UInt8]] = []
        var previous: [UInt8] = []
        for index in 1...count {
            previous = hmac(key: temporary, previous + [UInt8(index)])
            outputs.append(previous)
        }
        return outputs
    }
}
