#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import TuttiCore
import TuttiIO
import TuttiStream

/// Takes a receiver port's mixed output from the device thread (through a `SampleRing`) and writes it to
/// its sink on a thread of its own, so the device thread never does file I/O. A WAV file's header is
/// rewritten every second, so the file is valid even if the peer is killed.
///
/// Control plane: `init`, `stop`. Device thread: `ring.write`. Writer thread: internal.
final class SinkWriter: @unchecked Sendable {
    let ring: SampleRing
    private let running = Atomic<Bool>(true)
    private var thread: OSThread?

    /// When the recording began; a WAV sink saves it beside the file.
    let timing = RecordingTiming()

    init(sink: AudioSink, sampleRate: Int, channels: Int, sampleFormat: SampleFormat) throws(PeerError) {
        ring = SampleRing(capacity: sampleRate * channels * 2)  // two seconds
        let ring = ring
        enum Target {
            case wav(WAVWriter)
            case raw(RawPCMEncoding)
            case discard
        }
        nonisolated(unsafe) let target: Target
        switch sink {
        case .wavFile(let path):
            do {
                target = .wav(
                    try WAVWriter(
                        path: path, sampleRate: sampleRate, channels: channels,
                        encoding: sampleFormat == .l16 ? .int16 : .int24))
            } catch {
                throw PeerError("cannot write \(path): \(error)")
            }
        case .standardOutput(let encoding): target = .raw(encoding)
        case .null: target = .discard
        case .jack: preconditionFailure("a JACK sink is played by its JACK client (JACKReceiverProcessor), not written")
        }
        let samplesPerFlush = sampleRate * channels
        thread = OSThread(name: "tutti-sink") { [self] in
            let chunk = UnsafeMutableBufferPointer<Float>.allocate(capacity: 4096)
            defer { chunk.deallocate() }
            var bytes = [UInt8](repeating: 0, count: 4096 * 4)
            var sinceFlush = 0
            var draining = false
            var timingSaved = false
            while true {
                let count = ring.read(into: chunk)
                if count == 0 {
                    if draining { break }
                    if !running.load(ordering: .acquiring) { draining = true; continue }
                    usleep(5_000)
                    continue
                }
                let samples = UnsafeBufferPointer(rebasing: chunk[0..<count])
                switch target {
                case .wav(let writer):
                    writer.write(samples)
                    sinceFlush += count
                    if sinceFlush >= samplesPerFlush {
                        writer.flush()
                        if !timingSaved { timingSaved = timing.save(besides: writer.path, sampleRate: sampleRate) }
                        sinceFlush = 0
                    }
                case .raw(let encoding):
                    let width = encoding.layout.bytesPerSample
                    bytes.withUnsafeMutableBytes { encoding.layout.encode(samples, into: $0) }
                    var written = 0
                    let total = count * width
                    while written < total {
                        let result = bytes.withUnsafeBytes { write(1, $0.baseAddress! + written, total - written) }
                        if result <= 0 { break }
                        written += result
                    }
                case .discard:
                    break
                }
            }
            if case .wav(let writer) = target {
                writer.close()
                if !timingSaved { _ = timing.save(besides: writer.path, sampleRate: sampleRate) }
            }
        }
    }

    /// Writes what is queued, closes the sink and waits. Control plane; idempotent.
    func stop() {
        running.store(false, ordering: .releasing)
        thread?.join()
        thread = nil
    }

    deinit { stop() }
}
