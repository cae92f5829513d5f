import CTuttiIO
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import TuttiCore

/// A reusable batch for `recvmmsg`: `capacity` message slots of `StreamLimits.maxDatagramBytes` each, with
/// their iovecs, `mmsghdr`s, source addresses and control buffers, all allocated once in `init`.
///
/// One `receive(from:)` takes every datagram queued on a socket (up to `capacity`) in one system call,
/// without blocking. For each datagram it keeps:
/// - its **full length** (`length(at:)`), larger than `datagramCapacity` when the datagram did not fit
///   (`isTruncated(at:)`; only the first `datagramCapacity` bytes are in `datagram(at:)`), as
///   `UDPSocket.receive` reports truncation;
/// - its **arrival time** on the monotonic host clock (`arrival(at:)`): the kernel's receive timestamp
///   (`SO_TIMESTAMPNS`, `CLOCK_REALTIME`, taken when the packet entered the stack) mapped through a
///   `RealtimeClockOffset` re-sampled every 100 ms; when a datagram carries no timestamp, the monotonic
///   clock read right after the call (one read per batch, not per packet). A mapped time is never later
///   than that read.
///
/// The slots stay valid until the next `receive`. Realtime-safe: `receive` and the accessors (one system
/// call, no allocation, lock or log). Thread-safe: no; one thread owns a batch (a value: noncopyable).
package struct UDPReceiveBatch: ~Copyable {
    /// Message slots: the most datagrams one `receive` returns.
    package let capacity: Int
    /// Bytes per slot: `StreamLimits.maxDatagramBytes`.
    package let datagramCapacity: Int
    /// Datagrams the last `receive` returned.
    package private(set) var count = 0
    /// Datagrams received so far with a kernel timestamp, and without one (timed by the clock read).
    package private(set) var kernelTimestamped: UInt64 = 0
    package private(set) var userTimestamped: UInt64 = 0
    /// `recvmmsg` calls that failed with an error other than "nothing queued" (e.g. a queued ICMP error).
    package private(set) var receiveErrors: UInt64 = 0

    private let storage: UnsafeMutableRawPointer
    private let vectors: UnsafeMutablePointer<iovec>
    private let messages: UnsafeMutablePointer<CTuttiIO_mmsghdr>
    private let sources: UnsafeMutablePointer<sockaddr_storage>
    private let control: UnsafeMutableRawPointer
    private let controlSpace: Int
    private let arrivals: UnsafeMutablePointer<Int64>
    private var clockOffset = RealtimeClockOffset()

    /// Allocates `capacity` slots (default 32). Control plane.
    package init(capacity: Int = 32) {
        precondition(capacity > 0, "a receive batch needs at least one slot")
        self.capacity = capacity
        datagramCapacity = StreamLimits.maxDatagramBytes
        controlSpace = CTuttiIO_timestampControlSpace()
        storage = .allocate(byteCount: capacity * datagramCapacity, alignment: 16)
        vectors = .allocate(capacity: capacity)
        messages = .allocate(capacity: capacity)
        sources = .allocate(capacity: capacity)
        sources.initialize(repeating: sockaddr_storage(), count: capacity)
        control = .allocate(byteCount: capacity * controlSpace, alignment: 16)
        control.initializeMemory(as: UInt8.self, repeating: 0, count: capacity * controlSpace)
        arrivals = .allocate(capacity: capacity)
        arrivals.initialize(repeating: 0, count: capacity)
        for index in 0..<capacity {
            vectors[index] = iovec(iov_base: storage + index * datagramCapacity, iov_len: datagramCapacity)
            messages[index] = CTuttiIO_mmsghdr()
            messages[index].msg_hdr.msg_iov = vectors + index
            messages[index].msg_hdr.msg_iovlen = 1
            messages[index].msg_hdr.msg_name = UnsafeMutableRawPointer(sources + index)
            messages[index].msg_hdr.msg_control = control + index * controlSpace
        }
        rearm(upTo: capacity)
    }

    deinit {
        storage.deallocate()
        vectors.deallocate()
        messages.deallocate()
        sources.deallocate()
        control.deallocate()
        arrivals.deallocate()
    }

    /// Takes every datagram queued on `socket`, up to `capacity`, in one `recvmmsg`, without blocking.
    /// Returns how many (0 when none was queued; also 0 after an error, counted in `receiveErrors`).
    /// The socket's owner thread only (see `UDPSocket`). Realtime-safe: yes.
    @discardableResult
    package mutating func receive(from socket: UDPSocket) -> Int { receive(descriptor: socket.descriptor) }

    /// `receive(from:)` on a raw descriptor (the receive loop's path).
    @inline(__always)
    mutating func receive(descriptor: Int32) -> Int {
        rearm(upTo: max(count, 1))
        count = 0
        var received: Int32
        repeat {
            received = system_recvmmsg(descriptor, messages, UInt32(capacity), Int32(MSG_DONTWAIT) | Int32(MSG_TRUNC))
        } while received < 0 && errno == EINTR
        let now = RealtimeClockOffset.nanoseconds(Self.monotonicNow())
        guard received > 0 else {
            if received < 0, errno != EAGAIN, errno != EWOULDBLOCK { receiveErrors &+= 1 }
            return 0
        }
        clockOffset.refreshIfDue(monotonicNow: now)
        var stamp = timespec()
        var kernel: UInt64 = 0
        for index in 0..<Int(received) {
            if CTuttiIO_receiveTimestamp(&messages[index].msg_hdr, &stamp) != 0 {
                arrivals[index] = min(now, clockOffset.monotonic(fromRealtime: RealtimeClockOffset.nanoseconds(stamp)))
                kernel &+= 1
            } else {
                arrivals[index] = now
            }
        }
        kernelTimestamped &+= kernel
        userTimestamped &+= UInt64(received) &- kernel
        count = Int(received)
        return count
    }

    /// The bytes of datagram `index` (< `count`): at most `datagramCapacity` of them.
    @inline(__always)
    package func datagram(at index: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: storage + index * datagramCapacity, count: min(length(at: index), datagramCapacity))
    }

    /// The full length of datagram `index`, larger than `datagramCapacity` when it was truncated.
    @inline(__always)
    package func length(at index: Int) -> Int {
        precondition(index < count, "datagram index out of range")
        return Int(messages[index].msg_len)
    }

    /// Whether datagram `index` was longer than its slot (the caller rejects it and counts it).
    @inline(__always)
    package func isTruncated(at index: Int) -> Bool {
        length(at: index) > datagramCapacity || messages[index].msg_hdr.msg_flags & Int32(MSG_TRUNC) != 0
    }

    /// When datagram `index` arrived, on the monotonic host clock (see the type's comment).
    @inline(__always)
    package func arrival(at index: Int) -> HostTime {
        precondition(index < count, "datagram index out of range")
        return HostTime(nanoseconds: arrivals[index])
    }

    /// Who sent datagram `index` (a copy of its `sockaddr_storage`). Realtime-safe: yes.
    package func source(at index: Int) -> UDPAddress {
        precondition(index < count, "datagram index out of range")
        return UDPAddress(storage: sources[index], length: messages[index].msg_hdr.msg_namelen)
    }

    /// Restores the lengths the kernel overwrote in the first `used` slots.
    @inline(__always)
    private func rearm(upTo used: Int) {
        for index in 0..<used {
            messages[index].msg_hdr.msg_namelen = socklen_t(MemoryLayout<sockaddr_storage>.size)
            messages[index].msg_hdr.msg_controllen = controlSpace
            messages[index].msg_hdr.msg_flags = 0
            messages[index].msg_len = 0
        }
    }

    @inline(__always)
    static func monotonicNow() -> timespec {
        var spec = timespec()
        system_clock_gettime(CLOCK_MONOTONIC, &spec)
        return spec
    }
}
