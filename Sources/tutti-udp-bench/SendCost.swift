import TuttiCore
import TuttiIO

#if canImport(Glibc)
import Glibc
#endif

/// ns per datagram on loopback for the ways a datagram can leave. `drained`: a thread empties the receiver so
/// every datagram is delivered (the full receive path is in the figure); otherwise the receiver's queue stays
/// full and the kernel drops each datagram at the socket (less noise from the receive side).
func sendCost(drained: Bool) {
    let packets = 100_000
    let receiverA = try! UDPSocket()
    let drain = drained ? Drain(receiverA) : nil
    defer { drain?.stop() }
    let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: 8 * 284, alignment: 8)
    bytes.initializeMemory(as: UInt8.self, repeating: 0x5A)
    let one = UnsafeRawBufferPointer(rebasing: bytes[0..<284])

    let unconnected = try! UDPSocket()
    let destination = unconnected.destination(try! UDPAddress(host: "127.0.0.1", port: receiverA.localPort))
    report("sendto, unconnected socket", packets) { for _ in 0..<packets { unconnected.send(one, to: destination) } }

    let connected = try! UDPSocket()
    try! connected.connect(to: destination)
    report("send, connected socket", packets) { for _ in 0..<packets { connected.send(one) } }

    var batch = UDPSendBatch(capacity: 8)
    report("sendmmsg of 8, unconnected", packets) {
        for _ in 0..<(packets / 8) {
            batch.removeAll()
            for _ in 0..<8 { _ = batch.append(one, to: destination) }
            batch.send(from: unconnected)
        }
    }

    var segment: Int32 = 284
    let gso = try! UDPSocket()
    try! gso.connect(to: destination)
    let status = setsockopt(gso.descriptor, Int32(IPPROTO_UDP), 103 /* UDP_SEGMENT */, &segment, 4)
    if status == 0 {
        report("one GSO send of 8 segments, connected", packets) {
            for _ in 0..<(packets / 8) { gso.send(UnsafeRawBufferPointer(bytes)) }
        }
    } else {
        print("UDP_SEGMENT unavailable: errno \(errno)")
    }
    usleep(200_000)
    if let drain { print("drained \(drain.count) datagrams") }
}

func report(_ name: String, _ packets: Int, _ body: () -> Void) {
    body()  // warm-up
    var rounds: [Int64] = []
    for _ in 0..<5 {
        let start = MonotonicClock().now()
        body()
        rounds.append((MonotonicClock().now() - start).nanosecondsClamped / Int64(packets))
    }
    rounds.sort()
    let padded = name + String(repeating: " ", count: max(0, 40 - name.count))
    print("\(padded) min \(rounds[0]) median \(rounds[2]) ns/datagram")
}

/// Empties a socket on its own thread (recvmmsg batches), counting datagrams.
final class Drain: @unchecked Sendable {
    private let running = Counters()
    private let received = Counters()
    private var thread: OSThread?

    init(_ socket: UDPSocket) {
        running.received.store(1, ordering: .relaxed)
        let running = running
        let received = received
        thread = OSThread(name: "drain") {
            var batch = UDPReceiveBatch(capacity: 64)
            while running.received.load(ordering: .relaxed) == 1 {
                guard socket.waitUntilReadable(timeoutMilliseconds: 50) else { continue }
                while true {
                    let count = batch.receive(from: socket)
                    received.received.add(count, ordering: .relaxed)
                    if count < batch.capacity { break }
                }
            }
        }
    }

    var count: Int { received.received.load(ordering: .relaxed) }

    func stop() {
        running.received.store(0, ordering: .relaxed)
        thread?.join()
    }
}
