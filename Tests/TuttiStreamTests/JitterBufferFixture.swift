import TuttiCore
import TuttiStream

/// The format most jitter-buffer tests use: 48 kHz, 2 channels, L24, 64-frame packets, 5 ms (240 frames)
/// target latency, read in 48-frame periods (not a divisor of the packet size).
enum Fixture {
    static let format = StreamFormat(sampleRate: 48_000, channels: 2, sampleFormat: .l24, packetFrames: 64, targetLatencyFrames: 240)
    static let period = 48
    /// Silent frames before the first packet: the first packet waits `target − packet` frames.
    static let leadIn = 176

    /// Frames of reads that play `count` packets after the lead-in, rounded up to whole periods.
    static func playoutFrames(packets count: Int) -> Int64 {
        Int64(((leadIn + count * format.packetFrames + period - 1) / period) * period)
    }

    /// Frames read after the last packet's end (concealment of the stream's tail) in `playoutFrames`.
    static func tailFrames(packets count: Int) -> Int {
        Int(playoutFrames(packets: count)) - leadIn - count * format.packetFrames
    }
}
