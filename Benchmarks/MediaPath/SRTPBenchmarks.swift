import Benchmark
import TuttiSRTP

/// One 64-frame L24 stereo packet (12-byte header, 16-byte capture-time extension, 384 bytes of audio)
/// protected by the sender and verified by the receiver, with a new sequence number each iteration.
final class SRTPState {
    let protector: SRTPProtector
    let verifier: SRTPVerifier
    let packet: UnsafeMutableRawBufferPointer
    var sequence: UInt16 = 0

    init(suite: SRTPSuite) {
        let key = SRTPMasterKey.random(suite)
        protector = try! SRTPProtector(key: key, ssrc: ssrc)
        verifier = try! SRTPVerifier(key: key, ssrc: ssrc)
        packet = .allocate(byteCount: 412, alignment: 16)
        for index in 0..<412 { packet[index] = UInt8(truncatingIfNeeded: index &* 31) }
        packet[0] = 0x90  // version 2, extension
        packet[1] = payloadType
        for index in 0..<4 { packet[8 + index] = UInt8(truncatingIfNeeded: ssrc >> (24 - 8 * UInt32(index))) }
        // RFC 8285's one-byte header: 0xBEDE, then 3 words (12 bytes) of elements, as Tutti's capture time.
        packet[12] = 0xBE
        packet[13] = 0xDE
        packet[14] = 0
        packet[15] = 3
    }

    deinit { packet.deallocate() }

    /// Protects and verifies the next packet; traps if it does not come back whole.
    func roundTrip() {
        sequence &+= 1
        packet[2] = UInt8(sequence >> 8)
        packet[3] = UInt8(sequence & 0xFF)
        guard let sealed = protector.protect(UnsafeRawBufferPointer(packet)),
            let opened = verifier.unprotect(sealed), opened.count == packet.count
        else { fatalError("SRTP round trip failed at sequence \(sequence)") }
        blackHole(opened)
    }
}

/// SRTP's cost per packet (the goal: under 1 µs for a 64-frame packet, and no allocation), for the suite
/// between Tutti peers and the one for standard receivers; the plain path's cost is `Receive-path-per-packet`.
func registerSRTPBenchmarks(_ configuration: Benchmark.Configuration) {
    for (suite, name) in [(SRTPSuite.aeadAES128GCM, "AEAD-AES-128-GCM"), (.aesCM128HMACSHA1Tag80, "AES-CM-128-HMAC-SHA1-80")] {
        let fixture = Fixture<SRTPState>()
        Benchmark("SRTP-\(name)-protect+unprotect-64-frame-packet", configuration: configuration) { _ in
            fixture.state!.roundTrip()
        } setup: {
            fixture.state = SRTPState(suite: suite)
        } teardown: {
            fixture.state = nil
        }
    }
}
