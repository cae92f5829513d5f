import Benchmark
import Crypto
import TuttiSecurity

/// A members-only session's control handshake (`Noise_XXpsk3_25519_ChaChaPoly_SHA256`), both ends in one
/// iteration: the initiator's first frame, the responder's answer, the initiator's final frame and the
/// responder's check of it, each side ending with its transport channel. Fresh ephemeral keys each time, as on
/// the wire. Beside it, its unit of cost measured in the same run: one X25519 key agreement (the handshake
/// makes 6, plus 2 ephemeral key pairs); and the responder during a key change, trying the second key of its
/// ring (each wrong key costs one more decryption of the final frame, not another agreement).
///
/// The handshake is the control plane's (once per control connection): it allocates (arrays, CryptoKit's
/// keys), which `Thresholds/known-allocations.txt` records.
func registerHandshakeBenchmarks(_ configuration: Benchmark.Configuration) {
    let current = SessionKey.random()
    let older = SessionKey.random()
    let initiatorPair = PeerKeyPair()
    let responderPair = PeerKeyPair()
    for (name, initiatorKey, ring) in [
        ("Noise-XXpsk3-handshake-both-ends", current, SessionKeyRing([current])),
        ("Noise-XXpsk3-handshake-both-ends-second-key-of-ring", older, SessionKeyRing([current, older])),
    ] {
        Benchmark(name, configuration: configuration) { _ in
            var initiator = ControlHandshakeInitiator(keyPair: initiatorPair, sessionKey: initiatorKey)
            var responder = ControlHandshakeResponder(keyPair: responderPair, keys: ring)
            guard let first = try? initiator.firstFrame(), let answer = try? responder.answer(first),
                let (final, initiatorChannel, _) = try? initiator.readAnswer(answer),
                let (responderChannel, _, _) = try? responder.readFinal(final)
            else { fatalError("\(name): the handshake failed") }
            blackHole(initiatorChannel)
            blackHole(responderChannel)
        }
    }
    let ours = Curve25519.KeyAgreement.PrivateKey()
    let theirs = Curve25519.KeyAgreement.PrivateKey().publicKey
    Benchmark("X25519-key-agreement-baseline", configuration: configuration) { _ in
        guard let secret = try? ours.sharedSecretFromKeyAgreement(with: theirs) else { fatalError("X25519 failed") }
        blackHole(secret)
    }
}
