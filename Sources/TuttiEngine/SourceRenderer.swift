#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import TuttiCore
import TuttiIO
import TuttiStream

/// Produces a sender port's audio, one period at a time, on the port's device thread.
///
/// Built on the control plane when the port starts (a WAV file is loaded whole, a stdin reader thread
/// started); `render` is realtime-safe: no allocation, no lock, no I/O (stdin arrives through a `SampleRing`).
package final class SourceRenderer: @unchecked Sendable {
    private enum Kind {
        case tone(ToneGenerator)
        case click(ClickGenerator)
        case file(samples: UnsafeMutableBufferPointer<Float>, channels: Int, loop: Bool)
        case pipe(StandardInputReader)
        case block(AudioBlock)
    }

    private var kind: Kind
    private var filePosition = 0
    /// Frames that stdin could not deliver in time (filled with silence).
    package let underflowFrames = Atomic<UInt64>(0)

    /// - Throws: a one-line reason when the file cannot be read or does not match the port.
    package init(source: AudioSource, sampleRate: Int, channels: Int) throws(EngineError) {
        switch source {
        case .tone(let frequency, let amplitude):
            kind = .tone(ToneGenerator(frequency: frequency, amplitude: amplitude, sampleRate: sampleRate))
        case .click(let interval, let amplitude):
            kind = .click(
                ClickGenerator(
                    intervalNanoseconds: Int64((interval * 1e6).rounded()), amplitude: amplitude, sampleRate: sampleRate))
        case .wavFile(let path, let loop):
            let audio: WAVAudio
            do { audio = try WAVAudio.read(path: path) } catch { throw EngineError("cannot read \(error)") }
            guard audio.sampleRate == sampleRate else {
                throw EngineError("\(path) is \(audio.sampleRate) Hz, the stream needs \(sampleRate) Hz")
            }
            let samples = UnsafeMutableBufferPointer<Float>.allocate(capacity: max(audio.samples.count, 1))
            _ = samples.initialize(from: audio.samples)
            kind = .file(samples: samples, channels: audio.channels, loop: loop)
        case .standardInput(let encoding):
            kind = .pipe(StandardInputReader(encoding: encoding, channels: channels, sampleRate: sampleRate))
        case .jack:
            preconditionFailure("a JACK source is captured by its JACK client (JACKSenderProcessor), not rendered")
        case .block(let block):
            kind = .block(block)
        }
    }

    deinit {
        switch kind {
        case .file(let samples, _, _): samples.deallocate()
        case .pipe(let reader): reader.stop()
        case .tone, .click, .block: break
        }
    }

    /// Writes `frames` frames of `channels` interleaved samples captured at `captureTime` (ns, on the peer's
    /// capture clock). Device thread only.
    package func render(into output: UnsafeMutableBufferPointer<Float>, frames: Int, channels: Int, captureTime: Int64) {
        switch kind {
        case .tone(var generator):
            generator.render(into: output, frames: frames, channels: channels)
            kind = .tone(generator)
        case .click(var generator):
            generator.render(into: output, frames: frames, channels: channels, captureTime: captureTime)
            kind = .click(generator)
        case .file(let samples, let fileChannels, let loop):
            let fileFrames = samples.count / fileChannels
            for frame in 0..<frames {
                if filePosition >= fileFrames, loop { filePosition = 0 }
                for channel in 0..<channels {
                    output[frame * channels + channel] =
                        filePosition < fileFrames ? samples[filePosition * fileChannels + min(channel, fileChannels - 1)] : 0
                }
                if filePosition < fileFrames { filePosition += 1 }
            }
        case .pipe(let reader):
            let wanted = frames * channels
            let got = reader.ring.read(into: UnsafeMutableBufferPointer(rebasing: output[0..<wanted]))
            if got < wanted {
                for index in got..<wanted { output[index] = 0 }
                underflowFrames.add(UInt64((wanted - got) / channels), ordering: .relaxed)
            }
        case .block(let block):
            block(output, frames: frames, channels: channels, captureTime: captureTime)
        }
    }
}

/// Reads raw PCM from standard input on its own thread into a ring the device thread drains.
package final class StandardInputReader: @unchecked Sendable {
    package let ring: SampleRing
    private let running = Atomic<Bool>(true)
    private var thread: OSThread?

    package init(encoding: RawPCMEncoding, channels: Int, sampleRate: Int) {
        ring = SampleRing(capacity: sampleRate * channels)  // one second
        let ring = ring
        thread = OSThread(name: "tutti-stdin") { [self] in
            let width = encoding.layout.bytesPerSample
            var bytes = [UInt8](repeating: 0, count: 4096 * width)
            var samples = [Float](repeating: 0, count: 4096)
            var carry = 0
            while running.load(ordering: .relaxed) {
                // Back-pressure: wait while the ring is nearly full, so a file piped in plays in real time.
                if ring.available > ring.capacity - samples.count {
                    system_usleep(2_000)
                    continue
                }
                let count = bytes.withUnsafeMutableBytes { system_read(0, $0.baseAddress! + carry, $0.count - carry) }
                if count <= 0 { break }
                let total = carry + count
                let whole = total / width
                bytes.withUnsafeBytes { raw in
                    samples.withUnsafeMutableBufferPointer {
                        encoding.layout.decode(raw, into: UnsafeMutableBufferPointer(rebasing: $0[0..<whole]))
                    }
                }
                _ = samples.withUnsafeBufferPointer { ring.write(UnsafeBufferPointer(rebasing: $0[0..<whole])) }
                carry = total - whole * width
                for index in 0..<carry { bytes[index] = bytes[whole * width + index] }
            }
        }
    }

    /// Stops reading after the current `read` returns (at end of input, or the next data).
    package func stop() { running.store(false, ordering: .relaxed) }
}
