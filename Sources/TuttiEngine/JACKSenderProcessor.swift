import TuttiCore
import TuttiIO
import TuttiJACK
import TuttiStream

/// What a `jack` sender port's handler needs on JACK's process thread: its connections, the fan-out that
/// sends their packets from the port's socket in one system call, the capture clock, and an interleaving
/// buffer of one chunk.
///
/// Lives behind an `UnsafeMutablePointer` that `SenderPort` allocates before the JACK client activates and
/// frees after it closes; JACK passes it to `handler` as the context. Class references are held unmanaged
/// (the port keeps them alive), so the cycle does no reference counting; only the fan-out's batch changes.
///
/// A JACK cycle longer than `chunkFrames` (the peer's period, which every connection's buffers are sized
/// for) is processed in chunks, so a buffer-size change needs no reallocation. Cycles the client missed
/// (`skippedFrames`) are sent as silence first, so the stream's RTP timeline stays on the server's frame
/// clock and a receiver's latency does not drop by a cycle at each miss. Realtime-safe: yes.
package struct JACKSenderProcessor: ~Copyable {
    package let table: Unmanaged<ConnectionTable<SendConnection>>
    /// The period's datagrams to every connection, sent in one system call.
    package var fanOut: SendFanOut
    package let captureClock: CaptureClockSource
    package let channels: Int
    package let chunkFrames: Int
    /// One chunk of `channels` interleaved samples (the packetizer's input layout).
    package let interleaved: UnsafeMutableBufferPointer<Float>
    /// The port's mute, applied to what it captures (every connection hears it).
    package let fader: Unmanaged<MuteFader>
    package let sampleRate: Int

    package init(
        table: ConnectionTable<SendConnection>, socket: UDPSocket, captureClock: CaptureClockSource, channels: Int, chunkFrames: Int,
        fader: MuteFader, sampleRate: Int
    ) {
        self.fader = Unmanaged.passUnretained(fader)
        self.sampleRate = sampleRate
        self.table = Unmanaged.passUnretained(table)
        fanOut = SendFanOut(socket: socket)
        self.captureClock = captureClock
        self.channels = channels
        self.chunkFrames = chunkFrames
        interleaved = .allocate(capacity: chunkFrames * channels)
        interleaved.initialize(repeating: 0)
    }

    deinit { interleaved.deallocate() }

    /// The JACK handler: `context` is an `UnsafeMutablePointer<JACKSenderProcessor>`.
    package static let handler: JACKPeriodHandler = { context, buffers, frames, skipped, start, end in
        guard let context, let buffers else { return }
        context.assumingMemoryBound(to: JACKSenderProcessor.self).pointee.process(
            buffers, frames: frames, skippedFrames: skipped, start: HostTime(nanoseconds: start), end: HostTime(nanoseconds: end))
    }

    /// Sends `skippedFrames` of silence (the cycles missed before this one, which end at `start`), then
    /// interleaves one cycle of the JACK input ports, chunk by chunk, stamps each chunk with its capture time
    /// on the peer's capture clock, and hands it to every connection. JACK's process thread only.
    package mutating func process(
        _ buffers: UnsafePointer<UnsafeMutablePointer<Float>?>, frames: Int, skippedFrames: Int, start: HostTime, end: HostTime
    ) {
        for channel in 0..<channels where buffers[channel] == nil { return }
        if skippedFrames > 0 {
            for index in 0..<(chunkFrames * channels) { interleaved[index] = 0 }
            var offset = -skippedFrames
            while offset < 0 {
                let count = min(chunkFrames, -offset)
                send(frames: count, chunkStart: JACKTimeline.hostTime(atFrameOffset: offset, frames: frames, start: start, end: end))
                offset += count
            }
        }
        var offset = 0
        while offset < frames {
            let count = min(chunkFrames, frames - offset)
            for channel in 0..<channels {
                let input = buffers[channel]! + offset
                for frame in 0..<count { interleaved[frame * channels + channel] = input[frame] }
            }
            send(frames: count, chunkStart: JACKTimeline.hostTime(atFrameOffset: offset, frames: frames, start: start, end: end))
            offset += count
        }
    }

    /// Hands the first `frames` frames of `interleaved`, which start at `chunkStart`, to every connection.
    @inline(__always)
    private mutating func send(frames count: Int, chunkStart: HostTime) {
        let captureTime = captureClock.captureTime(of: chunkStart)
        let (interleaved, channels, sampleRate) = (interleaved, channels, sampleRate)
        fader._withUnsafeGuaranteedRef { $0.apply(interleaved, frames: count, channels: channels, sampleRate: sampleRate) }
        let samples = UnsafeBufferPointer(rebasing: interleaved[0..<(count * channels)])
        table._withUnsafeGuaranteedRef { table in
            table.forEachActive { connection in
                connection.send(samples, portChannels: channels, frames: count, captureTime: captureTime, fanOut: &fanOut)
            }
        }
        fanOut.flush()
    }
}
