import CTuttiIO
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import TuttiCore

/// A reusable batch for `sendmmsg`: up to `capacity` (datagram, destination) pairs sent in one system call,
/// e.g. a sender port's period fanned out to all its connections. Slots of `StreamLimits.maxDatagramBytes`,
/// iovecs, `mmsghdr`s and destination addresses are allocated once in `init`.
///
/// Use: `removeAll()`, `append` each datagram (copied into its slot; the returned slot index lets the caller
/// attribute the outcome), `send(from:)`, then read `wasSent(at:)` per slot until the next `removeAll()`.
/// `send` goes on past a message the kernel refuses (buffer full, unreachable): that message is counted as
/// failed and the rest are still sent, so one bad destination never silences the others.
///
/// Realtime-safe: yes, all of it (copies and one system call per batch, more only after a refusal).
/// Thread-safe: no; one thread owns a batch (a value: noncopyable).
public struct UDPSendBatch: ~Copyable {
    /// The most datagrams one batch holds.
    public let capacity: Int
    /// The largest datagram a slot holds: `StreamLimits.maxDatagramBytes`.
    public let datagramCapacity: Int
    /// Datagrams appended since the last `removeAll()`.
    public private(set) var count = 0

    /// What one `send(from:)` did.
    public struct Outcome: Sendable, Equatable {
        /// Datagrams the kernel took whole.
        public var sent = 0
        /// Datagrams refused (or taken only in part): see `wasSent(at:)`.
        public var failed = 0
        /// `sendmmsg` calls made: 1 unless the kernel refused a message.
        public var systemCalls = 0

        public init(sent: Int = 0, failed: Int = 0, systemCalls: Int = 0) {
            self.sent = sent
            self.failed = failed
            self.systemCalls = systemCalls
        }
    }

    private let storage: UnsafeMutableRawPointer
    private let vectors: UnsafeMutablePointer<iovec>
    private let messages: UnsafeMutablePointer<CTuttiIO_mmsghdr>
    private let destinations: UnsafeMutablePointer<sockaddr_storage>
    private let results: UnsafeMutablePointer<Bool>

    /// Allocates `capacity` slots (default 64). Control plane.
    public init(capacity: Int = 64) {
        precondition(capacity > 0, "a send batch needs at least one slot")
        self.capacity = capacity
        datagramCapacity = StreamLimits.maxDatagramBytes
        storage = .allocate(byteCount: capacity * datagramCapacity, alignment: 16)
        vectors = .allocate(capacity: capacity)
        messages = .allocate(capacity: capacity)
        destinations = .allocate(capacity: capacity)
        destinations.initialize(repeating: sockaddr_storage(), count: capacity)
        results = .allocate(capacity: capacity)
        results.initialize(repeating: false, count: capacity)
        for index in 0..<capacity {
            vectors[index] = iovec(iov_base: storage + index * datagramCapacity, iov_len: 0)
            messages[index] = CTuttiIO_mmsghdr()
            messages[index].msg_hdr.msg_iov = vectors + index
            messages[index].msg_hdr.msg_iovlen = 1
        }
    }

    deinit {
        storage.deallocate()
        vectors.deallocate()
        messages.deallocate()
        destinations.deallocate()
        results.deallocate()
    }

    /// Empties the batch (forgets the last outcome). Realtime-safe: yes.
    @inline(__always)
    public mutating func removeAll() { count = 0 }

    /// Copies `datagram` into the next slot, for `destination` (prepared with `UDPSocket.destination(_:)`),
    /// or for the socket's connected peer when `destination` is nil. Returns the slot's index, or nil when
    /// the batch is full or the datagram is larger than a slot (the caller counts it as a send failure).
    /// Realtime-safe: yes.
    @inline(__always)
    public mutating func append(_ datagram: UnsafeRawBufferPointer, to destination: UDPAddress?) -> Int? {
        guard count < capacity, datagram.count <= datagramCapacity else { return nil }
        let index = count
        let slot = storage + index * datagramCapacity
        if let base = datagram.baseAddress { slot.copyMemory(from: base, byteCount: datagram.count) }
        vectors[index].iov_len = datagram.count
        if let destination {
            destinations[index] = destination.storage
            messages[index].msg_hdr.msg_name = UnsafeMutableRawPointer(destinations + index)
            messages[index].msg_hdr.msg_namelen = destination.length
        } else {
            messages[index].msg_hdr.msg_name = nil
            messages[index].msg_hdr.msg_namelen = 0
        }
        results[index] = false
        count += 1
        return index
    }

    /// Sends every appended datagram from `socket` without blocking: one `sendmmsg`, plus one more after each
    /// message the kernel refuses (which is skipped and counted). Realtime-safe: yes.
    @discardableResult
    public mutating func send(from socket: UDPSocket) -> Outcome { send(descriptor: socket.descriptor) }

    mutating func send(descriptor: Int32) -> Outcome {
        var outcome = Outcome()
        var next = 0
        while next < count {
            let result = CTuttiIO_sendmmsg(descriptor, messages + next, UInt32(count - next), Int32(MSG_DONTWAIT))
            outcome.systemCalls += 1
            if result < 0, errno == EINTR { continue }
            guard result > 0 else {
                // The message at `next` was refused (errno says why); skip it and send the rest.
                results[next] = false
                outcome.failed += 1
                next += 1
                continue
            }
            for index in next..<(next + Int(result)) {
                let whole = Int(messages[index].msg_len) == vectors[index].iov_len
                results[index] = whole
                if whole { outcome.sent += 1 } else { outcome.failed += 1 }
            }
            next += Int(result)
        }
        return outcome
    }

    /// How many datagrams in `slots` (e.g. the slots one connection appended this period) went out whole in
    /// the last `send`; the rest of the range failed. Realtime-safe: yes.
    public func sentCount(in slots: Range<Int>) -> Int {
        precondition(slots.upperBound <= count, "slot range out of range")
        var sent = 0
        for index in slots where results[index] { sent += 1 }
        return sent
    }

    /// Whether the datagram in slot `index` went out whole in the last `send`. Realtime-safe: yes.
    @inline(__always)
    public func wasSent(at index: Int) -> Bool {
        precondition(index < count, "slot index out of range")
        return results[index]
    }
}
