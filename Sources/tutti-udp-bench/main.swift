// tutti-udp-bench: loopback harness for the batched UDP edge (Benchmarks/UDPBatching.md). Run each role as its
// own process under `perf stat -e raw_syscalls:sys_enter,context-switches,task-clock` to get system calls and
// context switches per packet for the receive side and the send side separately.
//
//   tutti-udp-bench receive-threads|receive-loop STREAMS BASE_PORT PACKETS_PER_STREAM
//       one thread per socket (poll + recv + a clock read per packet, as ReceiveConnection does today), or one
//       PacketReceiveLoop (epoll + recvmmsg + kernel timestamps). Exits when every packet came or 2 s of silence.
//   tutti-udp-bench receive-poll|receive-ready STREAMS BASE_PORT PACKETS_PER_STREAM [PERIOD_US]
//       no network thread: a period thread reads every socket once per period with a non-blocking recvmmsg,
//       or calls PacketReceiveLoop.receiveReady once per period.
//   tutti-udp-bench send-each|send-batch STREAMS BASE_PORT PERIODS [PERIOD_US]
//       every period (default 1333 µs, 64 frames at 48 kHz) one 284-byte datagram to each stream: one sendto per
//       stream (today's SenderPort) or one sendmmsg per period (UDPSendBatch).
//   tutti-udp-bench send-cost [drop]
//       ns per datagram on loopback, tight loop: sendto unconnected, send connected, sendmmsg of 8, and one
//       UDP GSO send of 8 segments; the receiver drained by a thread, or (`drop`) left full.
import Synchronization
import TuttiCore
import TuttiIO

#if canImport(Glibc)
import Glibc
#endif

let arguments = CommandLine.arguments
guard arguments.count >= 2 else {
    print("usage: tutti-udp-bench receive-threads|receive-loop|send-each|send-batch|send-cost …")
    exit(2)
}
let datagramBytes = 284
// TUTTI_BENCH_REALTIME=1: audio threads (receivers, the loop) at SCHED_FIFO 70, as `tutti peer --realtime` runs them.
if getenv("TUTTI_BENCH_REALTIME") != nil { print("realtime scheduling:", RealtimeScheduling.enable(priority: 70)) }

func integer(_ index: Int, default value: Int? = nil) -> Int {
    if index < arguments.count, let parsed = Int(arguments[index]) { return parsed }
    guard let value else {
        print("missing argument \(index)")
        exit(2)
    }
    return value
}

func monotonicNanoseconds() -> Int64 { MonotonicClock().now().nanoseconds }

final class Counters: @unchecked Sendable {
    let received = Atomic<Int>(0)
    let lastArrival = Atomic<Int64>(0)
    /// Receive loop only: how long after its kernel arrival time each datagram reached the handler, in µs
    /// buckets (the last one: 1 ms or more). Written by the loop thread, read after it stopped.
    let delay = UnsafeMutablePointer<Int>.allocate(capacity: 1_001)
    init() { delay.initialize(repeating: 0, count: 1_001) }

    /// The receive loop's handler. A static member, not a closure in main.swift's top-level code: that code
    /// is main-actor isolated, and a handler declared there traps on the loop thread (isolation check).
    static let record: DatagramHandler = { context, _, _, arrival in
        Unmanaged<Counters>.fromOpaque(context!)._withUnsafeGuaranteedRef { counters in
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            let delay = (Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec) - arrival) / 1_000
            counters.delay[Int(max(0, min(delay, 1_000)))] += 1
            counters.lastArrival.store(arrival, ordering: .relaxed)
            counters.received.add(1, ordering: .relaxed)
        }
    }

    /// The `fraction` quantile of `delay`, in µs.
    func delayQuantile(_ fraction: Double) -> Int {
        let total = (0...1_000).reduce(0) { $0 + delay[$1] }
        var seen = 0
        for bucket in 0...1_000 {
            seen += delay[bucket]
            if Double(seen) >= fraction * Double(total) { return bucket }
        }
        return 1_000
    }
}

func waitForCompletion(_ counters: Counters, expected: Int) {
    let started = monotonicNanoseconds()
    var lastCount = -1
    var lastChange = started
    while true {
        usleep(50_000)
        let count = counters.received.load(ordering: .relaxed)
        let now = monotonicNanoseconds()
        if count != lastCount {
            lastCount = count
            lastChange = now
        }
        if count >= expected || (count > 0 && now - lastChange > 2_000_000_000) || now - started > 120_000_000_000 { break }
    }
}

switch arguments[1] {
case "receive-threads":
    let streams = integer(2)
    let basePort = integer(3)
    let expected = streams * integer(4)
    let sockets = (0..<streams).map { try! UDPSocket(port: UInt16(basePort + $0)) }
    let counters = Counters()
    let running = Counters()
    running.received.store(1, ordering: .relaxed)
    let threads = sockets.map { socket in
        OSThread(name: "recv", realtime: true) {
            let clock = MonotonicClock()
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: StreamLimits.maxDatagramBytes, alignment: 8)
            while running.received.load(ordering: .relaxed) == 1 {
                guard let length = socket.receive(into: buffer, timeoutMilliseconds: 100), length > 0 else { continue }
                counters.lastArrival.store(clock.now().nanoseconds, ordering: .relaxed)
                counters.received.add(1, ordering: .relaxed)
            }
        }
    }
    waitForCompletion(counters, expected: expected)
    running.received.store(0, ordering: .relaxed)
    for thread in threads { thread.join() }
    print("received \(counters.received.load(ordering: .relaxed)) of \(expected)")

case "receive-loop":
    let streams = integer(2)
    let basePort = integer(3)
    let expected = streams * integer(4)
    let sockets = (0..<streams).map { try! UDPSocket(port: UInt16(basePort + $0)) }
    let counters = Counters()
    let loop = try! PacketReceiveLoop(capacity: max(streams, 1))
    for socket in sockets {
        _ = try! loop.register(socket, handler: Counters.record, context: Unmanaged.passUnretained(counters).toOpaque())
    }
    loop.start()
    waitForCompletion(counters, expected: expected)
    loop.stop()
    let statistics = loop.statistics
    print(
        "received \(counters.received.load(ordering: .relaxed)) of \(expected); wake-ups \(statistics.wakeUps), "
            + "recvmmsg \(statistics.receiveCalls), kernel-timed \(statistics.kernelTimestamped); "
            + "handler − kernel arrival: p50 \(counters.delayQuantile(0.5)) µs, p99 \(counters.delayQuantile(0.99)) µs, "
            + "p99.9 \(counters.delayQuantile(0.999)) µs")

case "receive-poll", "receive-ready":
    // The device clock's thread reads every socket once per period (non-blocking recvmmsg, kernel arrival
    // times): no network thread, no wake-up per packet. receive-poll: a recvmmsg on every socket;
    // receive-ready: PacketReceiveLoop.receiveReady (epoll_wait with timeout 0, recvmmsg on ready sockets).
    let throughLoop = arguments[1] == "receive-ready"
    let streams = integer(2)
    let basePort = integer(3)
    let expected = streams * integer(4)
    let periodNanoseconds = Int64(integer(5, default: 1333)) * 1_000
    let sockets = (0..<streams).map { try! UDPSocket(port: UInt16(basePort + $0)) }
    let counters = Counters()
    let running = Counters()
    running.received.store(1, ordering: .relaxed)
    let loop = try! PacketReceiveLoop(capacity: max(streams, 1))
    if throughLoop {
        for socket in sockets {
            _ = try! loop.register(socket, handler: Counters.record, context: Unmanaged.passUnretained(counters).toOpaque())
        }
    }
    let clockThread = OSThread(name: "period", realtime: true) {
        var batch = UDPReceiveBatch(capacity: 32)
        var next = timespec()
        clock_gettime(CLOCK_MONOTONIC, &next)
        var calls = 0
        while running.received.load(ordering: .relaxed) == 1 {
            if throughLoop {
                loop.receiveReady()
            } else {
                for socket in sockets {
                    let count = batch.receive(from: socket)
                    calls += 1
                    if count > 0 { counters.received.add(count, ordering: .relaxed) }
                }
            }
            let advanced = Int64(next.tv_nsec) + periodNanoseconds
            next.tv_sec += Int(advanced / 1_000_000_000)
            next.tv_nsec = Int(advanced % 1_000_000_000)
            while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, nil) == EINTR {}
        }
        counters.lastArrival.store(Int64(calls), ordering: .relaxed)
    }
    waitForCompletion(counters, expected: expected)
    running.received.store(0, ordering: .relaxed)
    clockThread.join()
    if throughLoop {
        let statistics = loop.statistics
        print(
            "received \(counters.received.load(ordering: .relaxed)) of \(expected); epoll_wait \(statistics.wakeUps), "
                + "recvmmsg \(statistics.receiveCalls), kernel-timed \(statistics.kernelTimestamped); "
                + "handler − kernel arrival: p50 \(counters.delayQuantile(0.5)) µs, p99 \(counters.delayQuantile(0.99)) µs")
    } else {
        print(
            "received \(counters.received.load(ordering: .relaxed)) of \(expected); recvmmsg \(counters.lastArrival.load(ordering: .relaxed))"
        )
    }

case "send-each", "send-batch":
    let streams = integer(2)
    let basePort = integer(3)
    let periods = integer(4)
    let periodNanoseconds = Int64(integer(5, default: 1333)) * 1_000
    let socket = try! UDPSocket()
    let destinations = (0..<streams).map { socket.destination(try! UDPAddress(host: "127.0.0.1", port: UInt16(basePort + $0))) }
    let payload = UnsafeMutableRawBufferPointer.allocate(byteCount: datagramBytes, alignment: 8)
    payload.initializeMemory(as: UInt8.self, repeating: 0x5A)
    var batch = UDPSendBatch(capacity: max(streams, 1))
    let batched = arguments[1] == "send-batch"
    var failures = 0
    var next = timespec()
    clock_gettime(CLOCK_MONOTONIC, &next)
    for _ in 0..<periods {
        if batched {
            batch.removeAll()
            for destination in destinations { _ = batch.append(UnsafeRawBufferPointer(payload), to: destination) }
            failures += batch.send(from: socket).failed
        } else {
            for destination in destinations where !socket.send(UnsafeRawBufferPointer(payload), to: destination) { failures += 1 }
        }
        let advanced = Int64(next.tv_nsec) + periodNanoseconds
        next.tv_sec += Int(advanced / 1_000_000_000)
        next.tv_nsec = Int(advanced % 1_000_000_000)
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, nil) == EINTR {}
    }
    print("sent \(periods * streams - failures) of \(periods * streams) (\(failures) refused)")

case "send-cost":
    sendCost(drained: arguments.count < 3 || arguments[2] != "drop")

default:
    print("unknown mode \(arguments[1])")
    exit(2)
}
