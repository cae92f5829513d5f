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
/// A write that fails (a closed pipe: EPIPE; a full disk: ENOSPC; a failing device: EIO) is recorded in
/// `failure` and ends the writing: from then on the thread only empties the ring (the device thread never
/// waits for it), and the control plane reports the failure. A WAV file is still closed with a valid header
/// for what was written.
///
/// A `discard` output (a `null` or `block` sink) has no thread: the device thread counts its frames
/// (`noteDiscarded`) instead of queueing them, so the port costs no wake-ups beyond its clock's.
///
/// Control plane: `init`, `stop`, `failure`, `recordedFrames`. Device thread: `ring.write` (when not
/// `discards`), `noteDiscarded`, `timing`. Writer thread: internal.
package final class SinkWriter: @unchecked Sendable {
    /// Where the audio goes, already opened by the port.
    package enum Output {
        /// A take's WAV file (the writer closes it).
        case wav(WAVWriter)
        /// A take's WAV files, one per track of a separate-mode port, in track order (the writer closes them):
        /// each frame's channels are split among them, an equal share each.
        case wavPerTrack([WAVWriter])
        /// Raw PCM on standard output (file descriptor 1).
        case standardOutput(RawPCMEncoding)
        /// Nowhere (a `null` port: statistics only).
        case discard
    }

    package let ring: SampleRing
    /// Whether the output is `discard`: nothing is queued or written, the device thread only counts.
    package let discards: Bool
    private let running = Atomic<Bool>(true)
    private let frames = Atomic<Int>(0)
    private var thread: OSThread?

    /// When the recording began; a WAV sink saves it beside the file.
    package let timing = RecordingTiming()
    /// The sink's first write error (nil for a `discard` output, which cannot fail).
    package let failure: SinkFailure?

    /// Frames written to the sink so far (after a failure: up to the failure). Any thread.
    package var recordedFrames: Int { frames.load(ordering: .relaxed) }

    package init(output: Output, sampleRate: Int, channels: Int) {
        if case .discard = output {
            ring = SampleRing(capacity: 2)
            discards = true
            failure = nil
            return
        }
        discards = false
        ring = SampleRing(capacity: sampleRate * channels * 2)  // two seconds
        let ring = ring
        switch output {
        case .wav(let writer):
            // A file size limit (ulimit -f) must be an error this thread sees (EFBIG), not a signal that ends the peer.
            system_ignoreSignal(SIGXFSZ)
            failure = SinkFailure(target: .file(path: writer.path), sampleRate: sampleRate)
        case .wavPerTrack(let writers):
            system_ignoreSignal(SIGXFSZ)
            failure = SinkFailure(target: .file(path: writers[0].path), sampleRate: sampleRate)
        case .standardOutput:
            // A closed pipe must be an error this thread sees (EPIPE), not a signal that ends the peer.
            system_ignoreSignal(SIGPIPE)
            failure = SinkFailure(target: .standardOutput, sampleRate: sampleRate)
        case .discard: failure = nil
        }
        let failure = failure
        nonisolated(unsafe) let output = output
        let samplesPerFlush = sampleRate * channels
        thread = OSThread(name: "tutti-sink") { [self] in
            // Whole frames only, so each read splits into tracks (the device thread writes whole periods).
            let chunk = UnsafeMutableBufferPointer<Float>.allocate(capacity: max(1, 4096 / channels) * channels)
            let track = UnsafeMutableBufferPointer<Float>.allocate(capacity: chunk.count)
            defer {
                chunk.deallocate()
                track.deallocate()
            }
            var bytes = [UInt8](repeating: 0, count: 4096 * 4)
            var sinceFlush = 0
            var draining = false
            var timingSaved = false
            while true {
                let count = ring.read(into: chunk)
                if count == 0 {
                    if draining { break }
                    if !running.load(ordering: .acquiring) {
                        draining = true
                        continue
                    }
                    system_usleep(5_000)
                    continue
                }
                if let failure, failure.hasFailed {
                    failure.noteDropped(frames: count / channels)  // what cannot be written is dropped, and counted
                    continue
                }
                let samples = UnsafeBufferPointer(rebasing: chunk[0..<count])
                switch output {
                case .wav(let writer):
                    do throws(SystemError) {
                        try writer.write(samples)
                        sinceFlush += count
                        if sinceFlush >= samplesPerFlush {
                            try writer.flush()
                            if !timingSaved { timingSaved = timing.save(besides: writer.path, sampleRate: sampleRate) }
                            sinceFlush = 0
                        }
                    } catch {
                        failure?.record(errno: error.errno)
                    }
                    frames.store(writer.frames, ordering: .relaxed)
                case .wavPerTrack(let writers):
                    do throws(SystemError) {
                        try Self.write(samples, channels: channels, splitInto: writers, through: track)
                        sinceFlush += count
                        if sinceFlush >= samplesPerFlush {
                            for writer in writers { try writer.flush() }
                            if !timingSaved {
                                timingSaved = writers.allSatisfy { timing.save(besides: $0.path, sampleRate: sampleRate) }
                            }
                            sinceFlush = 0
                        }
                    } catch {
                        failure?.record(errno: error.errno)
                    }
                    frames.store(writers[0].frames, ordering: .relaxed)
                case .standardOutput(let encoding):
                    let width = encoding.layout.bytesPerSample
                    bytes.withUnsafeMutableBytes { encoding.layout.encode(samples, into: $0) }
                    let total = count * width
                    if Self.writeAll(bytes, count: total, to: STDOUT_FILENO, while: running, failure: failure) {
                        frames.add(count / channels, ordering: .relaxed)
                    }
                case .discard:
                    break  // never queued (`discards`)
                }
            }
            let files: [WAVWriter] =
                switch output {
                case .wav(let writer): [writer]
                case .wavPerTrack(let writers): writers
                case .standardOutput, .discard: []
                }
            for writer in files {
                do throws(SystemError) { try writer.close() } catch { failure?.record(errno: error.errno) }
                if !timingSaved { _ = timing.save(besides: writer.path, sampleRate: sampleRate) }
            }
            if let first = files.first { frames.store(first.frames, ordering: .relaxed) }
        }
    }

    /// Writes whole frames of `channels` interleaved samples to `writers`, each its equal share of every frame's
    /// channels (track 1's first), through `scratch` (at least `samples.count`). Writer thread.
    private static func write(
        _ samples: UnsafeBufferPointer<Float>, channels: Int, splitInto writers: [WAVWriter],
        through scratch: UnsafeMutableBufferPointer<Float>
    ) throws(SystemError) {
        let share = channels / writers.count
        let frames = samples.count / channels
        for (index, writer) in writers.enumerated() {
            for frame in 0..<frames {
                for channel in 0..<share { scratch[frame * share + channel] = samples[frame * channels + index * share + channel] }
            }
            try writer.write(UnsafeBufferPointer(rebasing: scratch[0..<(frames * share)]))
        }
    }

    /// Writes `count` bytes of `bytes` to `descriptor`, retrying after interruptions and, on a non-blocking
    /// descriptor, when the reader is slow (while `running`). Records any other error in `failure` and
    /// returns whether everything was written. Writer thread.
    private static func writeAll(
        _ bytes: [UInt8], count: Int, to descriptor: Int32, while running: borrowing Atomic<Bool>, failure: SinkFailure?
    ) -> Bool {
        var written = 0
        while written < count {
            let result = bytes.withUnsafeBytes { system_write(descriptor, $0.baseAddress! + written, count - written) }
            if result > 0 {
                written += result
                continue
            }
            let error = result == 0 ? EIO : errno
            if error == EINTR { continue }
            if error == EAGAIN, running.load(ordering: .relaxed) {
                system_usleep(1_000)
                continue
            }
            failure?.record(errno: error)
            return false
        }
        return true
    }

    /// Counts `frames` frames a `discard` output took in place of queueing them. Device thread. Realtime-safe.
    @inline(__always)
    package func noteDiscarded(frames count: Int) { frames.add(count, ordering: .relaxed) }

    /// Writes what is queued, closes the sink and waits. Control plane; idempotent.
    package func stop() {
        running.store(false, ordering: .releasing)
        thread?.join()
        thread = nil
    }

    deinit { stop() }
}
