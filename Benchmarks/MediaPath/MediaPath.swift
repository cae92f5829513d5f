// Steady-state media path of Tutti: time and heap allocations per packet.
//
// Every benchmark iteration is exactly one packet's worth of work (one 64-frame period for the mix), so
// every metric reads "per packet". All buffers and structures are allocated in the benchmark's `setup`
// hook, before any measurement; state (jitter buffers, packetizers, rings) lives across iterations, so the
// measured iterations are the steady state (after warm-up), not the first packets of a stream.
//
// The pre-encoded packets of the receive-side benchmarks come from a `Packetizer` that keeps running:
// every 1024 packets the window is refilled with the next 1024 packets of the same stream, outside the
// measured region (before `benchmark.startMeasurement()`), so sequence numbers, RTP timestamps and
// capture times stay continuous (and wrap, as on a long-running stream) and the jitter buffer never
// re-anchors.

import Benchmark
import Synchronization
import TuttiCodec
import TuttiCore
import TuttiStream
import TuttiWire

// MARK: - Stream and harness configuration

/// Tutti's LAN defaults: stereo 48 kHz L24, 64-frame packets (1.33 ms), 5 ms target latency.
let stereoL24 = StreamFormat(sampleRate: 48_000, channels: 2, sampleFormat: .l24, packetFrames: 64, targetLatencyFrames: 240)
let payloadType: UInt8 = 96
let ssrc: UInt32 = 0x7475_7474

/// Packets pre-encoded per refill of a receive-side window.
let windowPackets = 1024
/// Network delay between capture and arrival in the simulated stream (constant: the benchmark measures
/// the steady state, not concealment).
let networkDelayNanoseconds: Int64 = 300_000
/// Capture clock and host clock share one timeline here; start far from zero.
let epochNanoseconds: Int64 = 1_000_000_000_000

/// Capture time of the first frame of packet `index` of the stream.
@inline(__always)
func captureNanoseconds(ofPacket index: Int64) -> Int64 {
    epochNanoseconds + index * Int64(stereoL24.packetFrames) * 1_000_000_000 / Int64(stereoL24.sampleRate)
}

/// Wall clock (and throughput, its inverse) and heap allocations, per iteration = per packet.
/// Only `mallocCountTotal` has a checked-in static threshold (Thresholds/*.p90.json, value 0) and its
/// tolerance is zero; time metrics are reported, never checked (shared CI machines are too noisy).
///
/// No `instructions`: on Linux, asking for it (or for any CPU/syscall/IO metric) makes the harness read
/// /proc inside the measured window, which allocates (16 mallocs per iteration here) and so corrupts
/// `mallocCountTotal`; and virtual machines without a PMU cannot count instructions at all. Measure
/// instructions in a separate run instead: `swift package benchmark --metric instructions`.
func makeConfiguration() -> Benchmark.Configuration {
    Benchmark.Configuration(
        metrics: [.wallClock, .throughput, .mallocCountTotal],
        timeUnits: .nanoseconds,
        warmupIterations: 5_000,
        maxDuration: .seconds(2),
        maxIterations: 500_000,
        thresholds: [.mallocCountTotal: .strict]
    )
}

/// Holds a benchmark's state between its `setup` and `teardown` hooks.
final class Fixture<State: AnyObject>: @unchecked Sendable {
    var state: State?
}

// MARK: - Shared helpers

/// A window of consecutive datagrams of one continuous stream, produced by a running `Packetizer`.
final class DatagramWindow {
    static let stride = 512  // ≥ 12 + 16 + 384 bytes
    var packetizer: Packetizer
    var tone = ToneGenerator(frequency: 997, amplitude: 0.5, sampleRate: stereoL24.sampleRate)
    let period: UnsafeMutableBufferPointer<Float>
    let bytes: UnsafeMutableRawBufferPointer
    let lengths: UnsafeMutableBufferPointer<Int>
    /// Arrival time (host clock) of each datagram of the window.
    let arrivals: UnsafeMutableBufferPointer<Int64>
    /// Stream packets produced so far.
    var produced: Int64 = 0

    init() {
        packetizer = Packetizer(
            format: stereoL24, payloadType: payloadType, ssrc: ssrc, initialSequenceNumber: 0xFF00,
            initialTimestamp: 0xFFFF_0000)
        period = .allocate(capacity: stereoL24.samplesPerPacket)
        period.initialize(repeating: 0)
        bytes = .allocate(byteCount: windowPackets * Self.stride, alignment: 16)
        bytes.initializeMemory(as: UInt8.self, repeating: 0)
        lengths = .allocate(capacity: windowPackets)
        lengths.initialize(repeating: 0)
        arrivals = .allocate(capacity: windowPackets)
        arrivals.initialize(repeating: 0)
    }

    deinit {
        period.deallocate()
        bytes.deallocate()
        lengths.deallocate()
        arrivals.deallocate()
    }

    /// Encodes the next `windowPackets` packets of the stream into the window. Not measured.
    func refill() {
        for slot in 0..<windowPackets {
            tone.render(into: period, frames: stereoL24.packetFrames, channels: stereoL24.channels)
            let capture = captureNanoseconds(ofPacket: produced)
            var written = 0
            packetizer.append(UnsafeBufferPointer(period), frames: stereoL24.packetFrames, captureTime: capture) {
                datagram in
                precondition(datagram.count <= Self.stride)
                UnsafeMutableRawBufferPointer(rebasing: bytes[(slot * Self.stride)...]).copyMemory(from: datagram)
                written = datagram.count
            }
            precondition(written > 0, "one period of packetFrames frames must produce exactly one packet")
            lengths[slot] = written
            arrivals[slot] = capture + networkDelayNanoseconds
            produced += 1
        }
    }

    @inline(__always)
    func datagram(_ slot: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: bytes.baseAddress! + slot * Self.stride, count: lengths[slot])
    }
}

/// One receive connection without its socket: Tutti's own `StreamReceiver`, as `ReceiveConnection` uses it.
func makeReceiver() -> StreamReceiver {
    StreamReceiver(format: stereoL24, ssrc: ssrc, payloadType: payloadType, maxPeriodFrames: stereoL24.packetFrames)
}

extension StreamReceiver {
    /// Fails loudly (after the run) if the stream was not in the steady state the benchmark claims.
    func verifySteadyState(_ name: String) {
        let (statistics, state) = snapshot()
        // fatalError, not precondition: its message survives -O.
        guard
            state == .playing && statistics.lost == 0 && statistics.late == 0 && statistics.duplicated == 0
                && statistics.invalid == 0 && statistics.underruns == 0 && statistics.concealedFrames == 0
                && statistics.resynchronizations == 1
        else { fatalError("\(name): not a clean steady state: \(statistics)") }
    }
}

// MARK: - Benchmark states

final class HeaderState {
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64, alignment: 8)
    var sequenceNumber: UInt16 = 0xFFF0
    var timestamp: UInt32 = 0xFFFF_F000
    var captureTime: Int64 = epochNanoseconds

    init() { buffer.initializeMemory(as: UInt8.self, repeating: 0) }
    deinit { buffer.deallocate() }
}

final class PCMState {
    let format: SampleFormat
    let samples: UnsafeMutableBufferPointer<Float>
    let payload: UnsafeMutableRawBufferPointer
    let decoded: UnsafeMutableBufferPointer<Float>

    init(format: SampleFormat) {
        self.format = format
        samples = .allocate(capacity: stereoL24.samplesPerPacket)
        var tone = ToneGenerator(frequency: 997, amplitude: 0.5, sampleRate: stereoL24.sampleRate)
        tone.render(into: samples, frames: stereoL24.packetFrames, channels: stereoL24.channels)
        payload = .allocate(byteCount: stereoL24.samplesPerPacket * format.bytesPerSample, alignment: 8)
        payload.initializeMemory(as: UInt8.self, repeating: 0)
        decoded = .allocate(capacity: stereoL24.samplesPerPacket)
        decoded.initialize(repeating: 0)
    }

    deinit {
        samples.deallocate()
        payload.deallocate()
        decoded.deallocate()
    }
}

final class PacketizerState {
    var packetizer = Packetizer(
        format: stereoL24, payloadType: payloadType, ssrc: ssrc, initialSequenceNumber: 0, initialTimestamp: 0)
    let period: UnsafeMutableBufferPointer<Float>
    var packetIndex: Int64 = 0

    init() {
        period = .allocate(capacity: stereoL24.samplesPerPacket)
        var tone = ToneGenerator(frequency: 997, amplitude: 0.5, sampleRate: stereoL24.sampleRate)
        tone.render(into: period, frames: stereoL24.packetFrames, channels: stereoL24.channels)
    }

    deinit { period.deallocate() }
}

final class LevelMeterState {
    var meter = LevelMeter(windowFrames: LevelMeter.standardWindowFrames(sampleRate: stereoL24.sampleRate))
    let published = PublishedLevel()
    let period: UnsafeMutableBufferPointer<Float>
    var periods = 0

    init() {
        period = .allocate(capacity: stereoL24.samplesPerPacket)
        var tone = ToneGenerator(frequency: 1_000, amplitude: 0.5, sampleRate: stereoL24.sampleRate)
        tone.render(into: period, frames: stereoL24.packetFrames, channels: stereoL24.channels)
    }

    deinit { period.deallocate() }
}

final class JitterState {
    let window = DatagramWindow()
    var jitterBuffer = JitterBuffer(format: stereoL24)
    let output: UnsafeMutableBufferPointer<Float>
    var slot = 0

    init() {
        output = .allocate(capacity: stereoL24.samplesPerPacket)
        output.initialize(repeating: 0)
    }

    deinit { output.deallocate() }
}

/// A receiver's concealer with a full history of a stereo 1 kHz tone, as at the first lost packet of a stream.
final class GapStartState {
    var concealer = PacketLossConcealer(channels: stereoL24.channels, sampleRate: stereoL24.sampleRate)
    let period: UnsafeMutableBufferPointer<Float>

    init() {
        period = .allocate(capacity: stereoL24.samplesPerPacket)
        var tone = ToneGenerator(frequency: 1_000, amplitude: 0.5, sampleRate: stereoL24.sampleRate)
        // More than the history holds (20 ms), so the search sees a full window at every lag.
        for _ in 0..<16 {
            tone.render(into: period, frames: stereoL24.packetFrames, channels: stereoL24.channels)
            concealer.record(period, from: 0, frames: stereoL24.packetFrames)
        }
    }

    deinit { period.deallocate() }
}

final class ReceivePathState {
    let window = DatagramWindow()
    let receiver = makeReceiver()
    var slot = 0
    /// What the receiver asked of its device (the follower's benchmark).
    var requests = 0

    /// The window's next packet through the whole receive path: `accept` it at its arrival and `render` one
    /// period then; with `deviceFollows`, as on a paced clock the stream plays alone (its requests counted).
    @inline(__always)
    func receiveNextPacket(deviceFollows: Bool) {
        let arrival = HostTime(nanoseconds: window.arrivals[slot])
        receiver.accept(datagram: window.datagram(slot), arrival: arrival)
        receiver.render(
            frames: stereoL24.packetFrames, now: arrival, captureClockNow: arrival.nanoseconds, deviceCatchesUp: deviceFollows,
            deviceDelayLimitFrames: deviceFollows ? stereoL24.packetFrames - 1 : 0)
        if deviceFollows { requests &+= receiver.takeDeviceTimingRequest() == .none ? 0 : 1 }
        blackHole(receiver.output)
        slot = (slot + 1) & (windowPackets - 1)
    }
}

final class MixState {
    static let streams = 8
    let window = DatagramWindow()
    let receivers = (0..<MixState.streams).map { _ in makeReceiver() }
    let mix: UnsafeMutableBufferPointer<Float>
    /// The port's ring to its sink writer (`SinkWriter` drains it on its own thread).
    let sinkRing = SampleRing(capacity: 8 * stereoL24.samplesPerPacket)
    let sinkScratch: UnsafeMutableBufferPointer<Float>
    var slot = 0

    init() {
        mix = .allocate(capacity: stereoL24.samplesPerPacket)
        mix.initialize(repeating: 0)
        sinkScratch = .allocate(capacity: 8 * stereoL24.samplesPerPacket)
        sinkScratch.initialize(repeating: 0)
    }

    deinit {
        mix.deallocate()
        sinkScratch.deallocate()
    }
}

// MARK: - Benchmarks

let benchmarks: @Sendable () -> Void = {
    let configuration = makeConfiguration()

    // Names avoid spaces and "/": `thresholds update` writes such names with "_" in the file name but
    // `thresholds check` looks for the raw name (ordo-one/package-benchmark issues #301, #373).

    // 0. Calibration: an empty iteration. Its time is the harness's own per-iteration overhead (clock and
    // counter reads), included in every figure below; its allocation count must be 0 too, which shows the
    // measurement window itself allocates nothing, so any allocation reported below is Tutti's.
    Benchmark("Empty-iteration-harness-overhead", configuration: configuration) { _ in
        blackHole(0)
    }

    // 1. RTP header with the capture-time extension: write, then decode the 28 bytes back.
    let header = Fixture<HeaderState>()
    Benchmark("RTP-header-write+decode", configuration: configuration) { _ in
        let state = header.state!
        state.sequenceNumber &+= 1
        state.timestamp &+= 64
        state.captureTime &+= 1_333_333
        let value = RTPHeader(
            payloadType: payloadType, sequenceNumber: state.sequenceNumber, timestamp: state.timestamp, ssrc: ssrc,
            captureTime: state.captureTime)
        let written = value.write(to: state.buffer)!
        let view = try! RTPPacketView.decode(UnsafeRawBufferPointer(rebasing: state.buffer[0..<written]))
        blackHole(view)
    } setup: {
        let state = HeaderState()
        // Sanity (not measured): the round trip is exact.
        let value = RTPHeader(payloadType: payloadType, sequenceNumber: 1, timestamp: 2, ssrc: ssrc, captureTime: 3)
        let written = value.write(to: state.buffer)!
        precondition(written == 28)
        precondition(try! RTPPacketView.decode(UnsafeRawBufferPointer(rebasing: state.buffer[0..<written])).header == value)
        header.state = state
    } teardown: {
        header.state = nil
    }

    // 2. PCM codec, one packet (64 stereo frames = 128 samples): encode floats to the payload, decode back.
    for sampleFormat in [SampleFormat.l24, .l16] {
        let pcm = Fixture<PCMState>()
        Benchmark("PCM-\(sampleFormat)-encode+decode-128-samples", configuration: configuration) { _ in
            let state = pcm.state!
            PCMCodec.encode(UnsafeBufferPointer(state.samples), as: state.format, into: state.payload)
            PCMCodec.decode(UnsafeRawBufferPointer(state.payload), as: state.format, into: state.decoded)
            blackHole(state.decoded)
        } setup: {
            pcm.state = PCMState(format: sampleFormat)
        } teardown: {
            pcm.state = nil
        }
    }

    // 3. Sender: one 64-frame device period into the packetizer, which emits exactly one datagram.
    let packetizer = Fixture<PacketizerState>()
    Benchmark("Packetizer-append-one-64-frame-period", configuration: configuration) { _ in
        let state = packetizer.state!
        state.packetizer.append(
            UnsafeBufferPointer(state.period), frames: stereoL24.packetFrames,
            captureTime: captureNanoseconds(ofPacket: state.packetIndex)
        ) { datagram in
            blackHole(datagram)
        }
        state.packetIndex &+= 1
    } setup: {
        packetizer.state = PacketizerState()
    } teardown: {
        let state = packetizer.state!
        precondition(state.packetizer.packetsSent > 0 && state.packetizer.packetsSent == UInt64(state.packetIndex))
        packetizer.state = nil
    }

    // 3b. The level meter of a connection (what `SendConnection.send` and `StreamReceiver.render` do each
    // period): one 64-frame stereo period measured, a completed 0.5 s window published.
    let level = Fixture<LevelMeterState>()
    Benchmark("LevelMeter-measure-one-64-frame-stereo-period", configuration: configuration) { _ in
        let state = level.state!
        if let reading = state.meter.measure(
            UnsafeBufferPointer(state.period), frames: stereoL24.packetFrames, channels: stereoL24.channels)
        {
            state.published.publish(reading)
        }
        state.periods &+= 1
    } setup: {
        level.state = LevelMeterState()
    } teardown: {
        let state = level.state!
        // Enough periods for a window, and the reading is the period's: its peak is the tone's.
        if state.periods * stereoL24.packetFrames >= state.meter.windowFrames {
            precondition(state.published.latest?.peak == state.period.map(\.magnitude).max())
        }
        level.state = nil
    }

    // 4. Receiver without the ring: decode one datagram, insert it, read one 64-frame period.
    let jitter = Fixture<JitterState>()
    Benchmark("JitterBuffer-insert+read-per-packet", configuration: configuration) { benchmark in
        let state = jitter.state!
        if state.slot == 0 { state.window.refill() }
        benchmark.startMeasurement()
        let datagram = state.window.datagram(state.slot)
        let arrival = HostTime(nanoseconds: state.window.arrivals[state.slot])
        let packet = try! RTPPacketView.decode(datagram)
        let payload = UnsafeRawBufferPointer(
            rebasing: datagram[packet.payloadOffset..<(packet.payloadOffset + packet.payloadCount)])
        let result = state.jitterBuffer.insert(
            sequenceNumber: packet.header.sequenceNumber, timestamp: packet.header.timestamp,
            captureTime: packet.header.captureTime, arrival: arrival, payload: payload)
        state.jitterBuffer.read(
            into: state.output, frames: stereoL24.packetFrames, now: arrival, captureClockNow: arrival.nanoseconds)
        blackHole(result)
        blackHole(state.output)
        state.slot = (state.slot + 1) & (windowPackets - 1)
    } setup: {
        jitter.state = JitterState()
    } teardown: {
        let state = jitter.state!
        let statistics = state.jitterBuffer.statistics
        guard
            state.jitterBuffer.state == .playing && statistics.lost == 0 && statistics.late == 0
                && statistics.underruns == 0 && statistics.concealedFrames == 0 && statistics.resynchronizations == 1
        else { fatalError("JitterBuffer-insert+read-per-packet: not a clean steady state: \(statistics)") }
        jitter.state = nil
    }

    // 4b. The start of a gap, concealed by repetition (Tutti's default): the period search over the last
    // 15 ms, then the missing packet's 64 frames. Once per loss event per stream, on the device thread; compare
    // it with a steady packet's receive path (5): a loss that hits many streams in one period pays it for each.
    let gapStart = Fixture<GapStartState>()
    Benchmark("Conceal-gap-start-by-repetition-64-frame-stereo-packet", configuration: configuration) { _ in
        let state = gapStart.state!
        state.concealer.beginGap()
        state.concealer.conceal(into: state.period, at: 0, frames: stereoL24.packetFrames)
        blackHole(state.period)
    } setup: {
        gapStart.state = GapStartState()
    } teardown: {
        // A 1 kHz tone at 48 kHz repeats every 48 frames.
        precondition(gapStart.state!.concealer.repeatedPeriod == 48, "\(gapStart.state!.concealer.repeatedPeriod)")
        gapStart.state = nil
    }

    // 5. The whole receive path of one packet, as ReceiveConnection does it: decode and validate the
    // datagram and push it into the PacketRing (network thread), then drain the ring into the jitter
    // buffer, read one period and publish the counters (device thread) — here on one thread.
    let receivePath = Fixture<ReceivePathState>()
    Benchmark("Receive-path-per-packet", configuration: configuration) { benchmark in
        let state = receivePath.state!
        if state.slot == 0 { state.window.refill() }
        benchmark.startMeasurement()
        state.receiveNextPacket(deviceFollows: false)
    } setup: {
        receivePath.state = ReceivePathState()
    } teardown: {
        receivePath.state!.receiver.verifySteadyState("Receive-path-per-packet")
        receivePath.state = nil
    }

    // 5b. The same on a device that plays the stream alone and follows it (a paced receiver port with one
    // stream): the start's delay and the phase checks every 16 packets (`LatencyPolicy.deviceMove`) ride on it.
    // The device here never moves, so the checks keep asking: the most the follower ever does in a period.
    let followedPath = Fixture<ReceivePathState>()
    Benchmark("Receive-path-per-packet-device-follows", configuration: configuration) { benchmark in
        let state = followedPath.state!
        if state.slot == 0 { state.window.refill() }
        benchmark.startMeasurement()
        state.receiveNextPacket(deviceFollows: true)
    } setup: {
        followedPath.state = ReceivePathState()
    } teardown: {
        let state = followedPath.state!
        state.receiver.verifySteadyState("Receive-path-per-packet-device-follows")
        precondition(state.requests > 0, "the device was asked to start later or to follow")
        followedPath.state = nil
    }

    // 6. A receiver port's device period with 8 connections (ReceiverPort's clock callback): for each
    // stream drain its ring into its jitter buffer, read one period, publish, add it to the mix; then hand
    // the mix to the sink ring. The 8 datagrams are pushed by the "network threads" before the measurement;
    // the sink writer's drain of the previous period happens there too.
    let mix = Fixture<MixState>()
    Benchmark("Mix-8-streams-into-one-period", configuration: configuration) { benchmark in
        let state = mix.state!
        if state.slot == 0 { state.window.refill() }
        let arrival = HostTime(nanoseconds: state.window.arrivals[state.slot])
        for receiver in state.receivers { receiver.accept(datagram: state.window.datagram(state.slot), arrival: arrival) }
        state.sinkRing.read(into: state.sinkScratch)
        benchmark.startMeasurement()
        let frames = stereoL24.packetFrames
        let channels = stereoL24.channels
        let count = frames * channels
        for index in 0..<count { state.mix[index] = 0 }
        for receiver in state.receivers {
            receiver.render(frames: frames, now: arrival, captureClockNow: arrival.nanoseconds)
            ChannelMixer.add(receiver.output, streamChannels: channels, into: state.mix, portChannels: channels, frames: frames)
        }
        state.sinkRing.write(UnsafeBufferPointer(rebasing: state.mix[0..<count]))
        benchmark.stopMeasurement()
        state.slot = (state.slot + 1) & (windowPackets - 1)
    } setup: {
        mix.state = MixState()
    } teardown: {
        let state = mix.state!
        for receiver in state.receivers { receiver.verifySteadyState("Mix-8-streams-into-one-period") }
        precondition(state.sinkRing.dropped == 0)
        mix.state = nil
    }

    // Codec, resampler, engine and processor benchmarks, each in its own file.
    registerCodecBenchmarks(configuration)
    registerResampleBenchmarks(configuration)
    registerEngineBenchmarks(configuration)
    registerProcessorBenchmarks(configuration)
    registerSRTPBenchmarks(configuration)
    registerHandshakeBenchmarks(configuration)
}
