import TuttiCore
import TuttiStream
import TuttiTesting
import TuttiWire
import XCTest

/// The test signal: a per-sample counter with alternating sign, every value an exact L24 step and at least
/// 0.1 in magnitude, so each output sample names the input sample it came from and silence is unmistakable.
enum CounterSignal {
    static func value(frame: Int, channel: Int, channels: Int) -> Float {
        let magnitude = Float(838_861 + (frame * channels + channel) % 3_000_000) / 8_388_608
        return frame % 2 == 0 ? magnitude : -magnitude
    }

    static func samples(frames: Range<Int>, channels: Int) -> [Float] {
        var out: [Float] = []
        out.reserveCapacity(frames.count * channels)
        for frame in frames {
            for channel in 0..<channels { out.append(value(frame: frame, channel: channel, channels: channels)) }
        }
        return out
    }
}

/// A datagram the test sender produced.
struct SentPacket {
    var index: Int
    var bytes: [UInt8]
    /// Frame (on the shared sender/receiver timeline) at which the packet left: the end of the sender period
    /// that completed it.
    var sendFrame: Int64
}

/// A datagram arriving at the receiver.
struct Arrival {
    var index: Int
    var bytes: [UInt8]
    var arrivalFrame: Int64
}

/// Runs a `Packetizer` over `packetCount` packets of `CounterSignal`, fed in periods of `senderPeriod` frames;
/// each period's capture time is its start frame on the shared clock (in nanoseconds).
func makePackets(
    format: StreamFormat, packetCount: Int, initialSequenceNumber: UInt16 = 1_000, initialTimestamp: UInt32 = 50_000,
    senderPeriod: Int = 48, signalOffset: Int = 0, timelineOffset: Int64 = 0
) -> [SentPacket] {
    var packetizer = Packetizer(
        format: format, payloadType: 96, ssrc: 0x1234_5678, initialSequenceNumber: initialSequenceNumber,
        initialTimestamp: initialTimestamp)
    let totalFrames = packetCount * format.packetFrames
    var packets: [SentPacket] = []
    var frame = 0
    while frame < totalFrames {
        let count = min(senderPeriod, totalFrames - frame)
        let samples = CounterSignal.samples(frames: (signalOffset + frame)..<(signalOffset + frame + count), channels: format.channels)
        let endFrame = timelineOffset + Int64(frame + count)
        let captureTime = HostTime(frames: timelineOffset + Int64(frame), sampleRate: format.sampleRate).nanoseconds
        samples.withUnsafeBufferPointer { buffer in
            packetizer.append(buffer, frames: count, captureTime: captureTime) { datagram in
                packets.append(SentPacket(index: packets.count, bytes: Array(datagram), sendFrame: endFrame))
            }
        }
        frame += count
    }
    precondition(packets.count == packetCount)
    return packets
}

/// What a playout run produced.
struct PlayoutRun {
    /// Interleaved output of every read, in order.
    var output: [Float] = []
    /// Insert results, in insertion order, with the packet index.
    var results: [(index: Int, result: JitterBufferInsertResult)] = []
    /// Statistics and state after each read.
    var statistics: [JitterBufferStatistics] = []
    var states: [JitterBufferState] = []
    /// Frame (on the shared timeline) of each read.
    var readFrames: [Int64] = []
    /// Statistics after the last read.
    var final: JitterBufferStatistics { statistics.last ?? JitterBufferStatistics() }

    func count(_ result: JitterBufferInsertResult) -> Int { results.filter { $0.result == result }.count }
}

/// Drives a jitter buffer like a receiver's device thread: at every period it inserts the datagrams that have
/// arrived by then (decoded with `RTPPacketView`), then reads `period` frames, with a `ManualClock` moved
/// in step. Reads run from `startFrame` (default: the first arrival) while the read frame is below `endFrame`.
func runPlayout(
    _ buffer: inout JitterBuffer, arrivals: [Arrival], period: Int, startFrame: Int64? = nil, endFrame: Int64,
    clock: ManualClock = ManualClock()
) -> PlayoutRun {
    let format = buffer.format
    // Stable sort by arrival: equal arrival times keep the order the test gave.
    let queue = arrivals.enumerated().sorted { ($0.element.arrivalFrame, $0.offset) < ($1.element.arrivalFrame, $1.offset) }.map(\.element)
    var next = 0
    var run = PlayoutRun()
    var periodOutput = [Float](repeating: 0, count: period * format.channels)
    var frame = startFrame ?? queue.first?.arrivalFrame ?? 0
    while frame < endFrame {
        clock.set(frames: frame, sampleRate: format.sampleRate)
        while next < queue.count, queue[next].arrivalFrame <= frame {
            let arrival = queue[next]
            next += 1
            let result = arrival.bytes.withUnsafeBytes { raw -> JitterBufferInsertResult? in
                guard let view = try? RTPPacketView.decode(raw) else { return nil }
                let payload = UnsafeRawBufferPointer(rebasing: raw[view.payloadOffset..<(view.payloadOffset + view.payloadCount)])
                return buffer.insert(
                    sequenceNumber: view.header.sequenceNumber, timestamp: view.header.timestamp,
                    captureTime: view.header.captureTime,
                    arrival: HostTime(frames: arrival.arrivalFrame, sampleRate: format.sampleRate), payload: payload)
            }
            guard let result else {
                XCTFail("packet \(arrival.index) did not decode")
                continue
            }
            run.results.append((arrival.index, result))
        }
        let now = clock.now()
        _ = periodOutput.withUnsafeMutableBufferPointer {
            buffer.read(into: $0, frames: period, now: now, captureClockNow: now.nanoseconds)
        }
        run.output += periodOutput
        run.statistics.append(buffer.statistics)
        run.states.append(buffer.state)
        run.readFrames.append(frame)
        frame += Int64(period)
    }
    return run
}

/// Arrivals with a fixed network delay.
/// Hands `receiver` every arrival of `queue` (sorted by arrival) from `next` on that came at or before `frame`,
/// each with its own arrival time; advances `next`.
func acceptArrivals(_ queue: [Arrival], from next: inout Int, until frame: Int64, into receiver: StreamReceiver) {
    while next < queue.count, queue[next].arrivalFrame <= frame {
        let arrival = queue[next]
        next += 1
        arrival.bytes.withUnsafeBytes { raw in
            _ = receiver.accept(datagram: raw, arrival: HostTime(frames: arrival.arrivalFrame, sampleRate: receiver.format.sampleRate))
        }
    }
}

func arrivals(_ packets: [SentPacket], delay: Int64 = 0) -> [Arrival] {
    packets.map { Arrival(index: $0.index, bytes: $0.bytes, arrivalFrame: $0.sendFrame + delay) }
}

/// How many output frames (of `channels` samples) at the start of `output` are exactly zero.
func leadingSilentFrames(_ output: [Float], channels: Int) -> Int {
    let firstSound = output.firstIndex { $0 != 0 } ?? output.count
    return firstSound / channels
}

/// Checks a stretch of playout sample by sample against `CounterSignal`.
///
/// Output frame `leadIn` must carry the first frame of packet `firstPacket`; packets `firstPacket..<endPacket`
/// follow back to back, except those in `missing`, which must be exact silence. Around a missing packet (and at
/// the stream's start and end) the audio fades: out over the last `fadeFrames` of the packet before the gap, in
/// over the first `fadeFrames` after it. Every other frame must equal the input exactly, and everything before
/// `leadIn` or after the last packet must be silence.
@discardableResult
func assertPlayout(
    _ output: ArraySlice<Float>, format: StreamFormat, fadeFrames: Int, leadIn: Int, firstPacket: Int = 0, endPacket: Int,
    missing: Set<Int> = [], file: StaticString = #filePath, line: UInt = #line
) -> (exact: Int, faded: Int, silent: Int) {
    let channels = format.channels
    let packetFrames = format.packetFrames
    let base = output.startIndex
    var exact = 0
    var faded = 0
    var silent = 0
    var failures = 0
    func fail(_ message: String) {
        failures += 1
        if failures <= 5 { XCTFail(message, file: file, line: line) }
    }
    for outputFrame in 0..<(output.count / channels) {
        let relative = outputFrame - leadIn
        let packet = relative >= 0 ? firstPacket + relative / packetFrames : -1
        let position = relative >= 0 ? relative % packetFrames : 0
        let playing = relative >= 0 && packet < endPacket && !missing.contains(packet)
        for channel in 0..<channels {
            let actual = output[base + outputFrame * channels + channel]
            guard playing else {
                if actual != 0 { fail("output frame \(outputFrame) should be silent (packet \(packet)), got \(actual)") }
                continue
            }
            let input = CounterSignal.value(frame: packet * packetFrames + position, channel: channel, channels: channels)
            let previousMissing = packet == firstPacket || missing.contains(packet - 1)
            let nextMissing = packet + 1 == endPacket || missing.contains(packet + 1)
            let fadingIn = previousMissing && position < fadeFrames
            let fadingOut = nextMissing && position >= packetFrames - fadeFrames
            if !fadingIn && !fadingOut {
                if actual != input {
                    fail("output frame \(outputFrame) (packet \(packet) frame \(position) ch \(channel)) is \(actual), expected \(input)")
                }
                continue
            }
            // Nominal linear ramps; the buffer accumulates the fade-in gain in Float, so allow rounding.
            var gain: Float = 1
            if fadingIn { gain = Float(position + 1) / Float(fadeFrames) }
            if fadingOut { gain = min(gain, Float(packetFrames - position - 1) / Float(fadeFrames)) }
            if abs(actual - input * gain) > 1e-5 {
                fail("output frame \(outputFrame) (packet \(packet) frame \(position)) is \(actual), expected \(input) faded by \(gain)")
            }
        }
        if !playing {
            silent += 1
        } else {
            let previousMissing = packet == firstPacket || missing.contains(packet - 1)
            let nextMissing = packet + 1 == endPacket || missing.contains(packet + 1)
            if (previousMissing && position < fadeFrames) || (nextMissing && position >= packetFrames - fadeFrames) {
                faded += 1
            } else {
                exact += 1
            }
        }
    }
    if failures > 5 { XCTFail("\(failures) mismatching samples in all", file: file, line: line) }
    return (exact, faded, silent)
}

/// RFC 3550 interarrival jitter computed directly from its definition, for packets in acceptance order:
/// arrivals in frames as the buffer sees them (nanoseconds of the arrival time × rate), timestamps in frames.
func referenceJitter(_ packets: [(arrivalFrame: Int64, timestamp: Int64)], sampleRate: Int) -> Double {
    var jitter = 0.0
    var previousTransit: Double?
    for packet in packets {
        let arrival = Double(HostTime(frames: packet.arrivalFrame, sampleRate: sampleRate).nanoseconds) * Double(sampleRate) / 1e9
        let transit = arrival - Double(packet.timestamp)
        if let previousTransit { jitter += (abs(transit - previousTransit) - jitter) / 16 }
        previousTransit = transit
    }
    return jitter
}

/// The plain reference for `LatencyPolicy.alignedLatency`: tries every latency from the target up, and
/// accepts the first at which each of 2P consecutive reads finds the packet holding its last frame
/// arrived at least the slack (target − packet) before it. Packet j (frames jP ..< (j+1)P) arrives at
/// (j+1)P; reads come `phase` after a packet's arrival, every `read` frames; a read at t with latency L
/// plays t − L ..< t − L + read.
func referenceAlignedLatency(target: Int, packet: Int, read: Int, phase: Int) -> Int {
    let slack = target - packet
    var latency = target
    while true {
        var everyReadKeepsTheSlack = true
        for k in 0..<(2 * packet) {
            let t = 10 * packet + packet + phase + k * read
            let last = t - latency + read - 1
            let arrival = (last / packet + 1) * packet
            if t - arrival < slack {
                everyReadKeepsTheSlack = false
                break
            }
        }
        if everyReadKeepsTheSlack { return latency }
        latency += 1
    }
}
