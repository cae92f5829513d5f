import CTuttiIO
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import TuttiCore

/// A reusable batch for `recvmmsg`: `capacity` message slots of `StreamLimits.maxDatagramBytes` each (64 KiB
/// when coalescing), with their iovecs, `mmsghdr`s, source addresses and control buffers, all allocated once
/// in `init`.
///
/// One `receive(from:)` takes every message queued on a socket (up to `capacity`) in one system call,
/// without blocking. A **coalescing** batch reads sockets that have `UDPSocket.enableReceiveCoalescing()` on:
/// a message may then hold several datagrams of one flow back to back (`UDP_GRO`: a segment size, the last
/// datagram possibly shorter), which the batch cuts apart again, so that callers see datagrams either way
/// (`count`, `datagram(at:)`; `messages` is what the call returned). For each datagram it keeps:
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
    /// Message slots: the most messages one `receive` takes (the most datagrams, unless coalescing).
    package let capacity: Int
    /// The longest datagram taken whole: `StreamLimits.maxDatagramBytes` (a longer one is truncated).
    package let datagramCapacity: Int
    /// Whether a message may hold several datagrams (see the type's comment).
    package let coalescing: Bool
    /// Datagrams the last `receive` returned.
    package private(set) var count = 0
    /// Messages the last `receive` took (`count` without coalescing); `capacity` means more may be queued.
    package private(set) var messages = 0
    /// Messages so far that held more than one datagram, and datagrams beyond the most a batch can list
    /// (`capacity` × `maximumSegments`; the kernel merges fewer), which are dropped and counted here.
    package private(set) var coalescedMessages: UInt64 = 0
    package private(set) var droppedSegments: UInt64 = 0
    /// The most datagrams one coalesced message is cut into (the kernel's limit is 64 for GRO and 128 for a
    /// GSO send).
    package static let maximumSegments = 128
    /// Datagrams received so far with a kernel timestamp, and without one (timed by the clock read).
    package private(set) var kernelTimestamped: UInt64 = 0
    package private(set) var userTimestamped: UInt64 = 0
    /// `recvmmsg` calls that failed with an error other than "nothing queued" (e.g. a queued ICMP error).
    package private(set) var receiveErrors: UInt64 = 0

    private let storage: UnsafeMutableRawPointer
    /// Bytes per message slot.
    private let slotBytes: Int
    private let vectors: UnsafeMutablePointer<iovec>
    private let headers: UnsafeMutablePointer<CTuttiIO_mmsghdr>
    private let sources: UnsafeMutablePointer<sockaddr_storage>
    private let control: UnsafeMutableRawPointer
    private let controlSpace: Int
    /// Per datagram of the last `receive`: where it starts in `storage`, its full length, its message and
    /// when it arrived.
    private let starts: UnsafeMutablePointer<Int>
    private let lengths: UnsafeMutablePointer<Int>
    private let messageOf: UnsafeMutablePointer<Int>
    private let arrivals: UnsafeMutablePointer<Int64>
    private let datagramLimit: Int
    private var clockOffset = RealtimeClockOffset()

    /// Allocates `capacity` slots (default 32); `coalescing`: slots of 64 KiB that take merged datagrams (see
    /// the type's comment). Control plane.
    package init(capacity: Int = 32, coalescing: Bool = false) {
        precondition(capacity > 0, "a receive batch needs at least one slot")
        self.capacity = capacity
        self.coalescing = coalescing
        datagramCapacity = StreamLimits.maxDatagramBytes
        slotBytes = coalescing ? 65_536 : datagramCapacity
        datagramLimit = coalescing ? capacity * Self.maximumSegments : capacity
        controlSpace = CTuttiIO_receiveControlSpace()
        storage = .allocate(byteCount: capacity * slotBytes, alignment: 16)
        vectors = .allocate(capacity: capacity)
        headers = .allocate(capacity: capacity)
        sources = .allocate(capacity: capacity)
        sources.initialize(repeating: sockaddr_storage(), count: capacity)
        control = .allocate(byteCount: capacity * controlSpace, alignment: 16)
        control.initializeMemory(as: UInt8.self, repeating: 0, count: capacity * controlSpace)
        starts = .allocate(capacity: datagramLimit)
        starts.initialize(repeating: 0, count: datagramLimit)
        lengths = .allocate(capacity: datagramLimit)
        lengths.initialize(repeating: 0, count: datagramLimit)
        messageOf = .allocate(capacity: datagramLimit)
        messageOf.initialize(repeating: 0, count: datagramLimit)
        arrivals = .allocate(capacity: datagramLimit)
        arrivals.initialize(repeating: 0, count: datagramLimit)
        for index in 0..<capacity {
            vectors[index] = iovec(iov_base: storage + index * slotBytes, iov_len: slotBytes)
            headers[index] = CTuttiIO_mmsghdr()
            headers[index].msg_hdr.msg_iov = vectors + index
            headers[index].msg_hdr.msg_iovlen = 1
            headers[index].msg_hdr.msg_name = UnsafeMutableRawPointer(sources + index)
            headers[index].msg_hdr.msg_control = control + index * controlSpace
        }
        rearm(upTo: capacity)
    }

    deinit {
        storage.deallocate()
        vectors.deallocate()
        headers.deallocate()
        sources.deallocate()
        control.deallocate()
        starts.deallocate()
        lengths.deallocate()
        messageOf.deallocate()
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
        rearm(upTo: max(messages, 1))
        count = 0
        messages = 0
        var received: Int32
        repeat {
            received = system_recvmmsg(descriptor, headers, UInt32(capacity), Int32(MSG_DONTWAIT) | Int32(MSG_TRUNC))
        } while received < 0 && errno == EINTR
        let now = RealtimeClockOffset.nanoseconds(Self.monotonicNow())
        guard received > 0 else {
            if received < 0, errno != EAGAIN, errno != EWOULDBLOCK { receiveErrors &+= 1 }
            return 0
        }
        clockOffset.refreshIfDue(monotonicNow: now)
        var stamp = timespec()
        var kernel: UInt64 = 0
        var listed = 0
        for message in 0..<Int(received) {
            let arrival: Int64
            let stamped = CTuttiIO_receiveTimestamp(&headers[message].msg_hdr, &stamp) != 0
            if stamped {
                arrival = min(now, clockOffset.monotonic(fromRealtime: RealtimeClockOffset.nanoseconds(stamp)))
            } else {
                arrival = now
            }
            let firstListed = listed
            let length = Int(headers[message].msg_len)
            let segment = coalescing ? Int(CTuttiIO_receiveSegmentSize(&headers[message].msg_hdr)) : 0
            // A merged message is cut at every `segment` bytes; anything else (one datagram, or one longer than
            // the slot, reported with its full length) is listed whole.
            let cut = segment > 0 && length > segment && length <= slotBytes
            if cut { coalescedMessages &+= 1 }
            var offset = 0
            repeat {
                guard listed < datagramLimit else {
                    droppedSegments &+= UInt64(cut ? (length - offset + segment - 1) / segment : 1)
                    break
                }
                let piece = cut ? min(segment, length - offset) : length
                starts[listed] = message * slotBytes + offset
                lengths[listed] = piece
                messageOf[listed] = message
                arrivals[listed] = arrival
                listed += 1
                offset += piece
            } while cut && offset < length
            if stamped { kernel &+= UInt64(listed - firstListed) }
        }
        kernelTimestamped &+= kernel
        userTimestamped &+= UInt64(listed) &- kernel
        messages = Int(received)
        count = listed
        return count
    }

    /// The bytes of datagram `index` (< `count`): at most `datagramCapacity` of them.
    @inline(__always)
    package func datagram(at index: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: storage + starts[index], count: min(length(at: index), datagramCapacity))
    }

    /// The full length of datagram `index`, larger than `datagramCapacity` when it was truncated.
    @inline(__always)
    package func length(at index: Int) -> Int {
        precondition(index < count, "datagram index out of range")
        return lengths[index]
    }

    /// Whether datagram `index` was longer than `datagramCapacity` (the caller rejects it and counts it).
    @inline(__always)
    package func isTruncated(at index: Int) -> Bool {
        length(at: index) > datagramCapacity || headers[messageOf[index]].msg_hdr.msg_flags & Int32(MSG_TRUNC) != 0
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
        let message = messageOf[index]
        return UDPAddress(storage: sources[message], length: headers[message].msg_hdr.msg_namelen)
    }

    /// Restores the lengths the kernel overwrote in the first `used` slots.
    @inline(__always)
    private func rearm(upTo used: Int) {
        for index in 0..<used {
            headers[index].msg_hdr.msg_namelen = socklen_t(MemoryLayout<sockaddr_storage>.size)
            headers[index].msg_hdr.msg_controllen = controlSpace
            headers[index].msg_hdr.msg_flags = 0
            headers[index].msg_len = 0
        }
    }

    @inline(__always)
    static func monotonicNow() -> timespec {
        var spec = timespec()
        system_clock_gettime(CLOCK_MONOTONIC, &spec)
        return spec
    }
}
