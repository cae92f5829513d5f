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
/// **Segmentation (UDP GSO).** Datagrams of the same size for the same destination (the streams of a period
/// to one peer's media socket, which tells them apart by SSRC) go out as one message with `UDP_SEGMENT`:
/// the kernel runs its send path (route, netfilter, bridge, device) once for all of them and cuts them into
/// the same datagrams at the end, so the wire carries ordinary RTP. On loopback that costs a quarter of
/// sending them one by one (`Benchmarks/UDPBatching.md`). If the kernel refuses a segmented send (a device
/// without checksum offload, a kernel before 4.18), segmentation is off for the batch from then on and the
/// datagrams go out one by one, that time and after.
///
/// Realtime-safe: yes, all of it (copies and one system call per batch, more only after a refusal).
/// Thread-safe: no; one thread owns a batch (a value: noncopyable).
package struct UDPSendBatch: ~Copyable {
    /// The most datagrams one batch holds.
    package let capacity: Int
    /// The largest datagram a slot holds: `StreamLimits.maxDatagramBytes`.
    package let datagramCapacity: Int
    /// Datagrams appended since the last `removeAll()`.
    package private(set) var count = 0

    /// What one `send(from:)` did.
    package struct Outcome: Sendable, Equatable {
        /// Datagrams the kernel took whole.
        package var sent = 0
        /// Datagrams refused (or taken only in part): see `wasSent(at:)`.
        package var failed = 0
        /// `sendmmsg` calls made: 1 unless the kernel refused a message.
        package var systemCalls = 0

        package init(sent: Int = 0, failed: Int = 0, systemCalls: Int = 0) {
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
    /// Whether `send` segments (true until the kernel refuses a segmented send).
    package private(set) var segments: Bool
    /// Segmented sends the kernel refused (0 or 1: segmentation stops at the first). Device thread.
    package private(set) var segmentationRefusals = 0
    /// Messages of the last `send` that carried two or more datagrams (segmented). Device thread.
    package private(set) var lastSegmentedMessages = 0
    /// The segmented form of a batch: messages of datagrams grouped by destination and size
    /// (`groupVectors` in group order, `groupSlots` the slot of each, `groupStarts` where each group's
    /// datagrams begin in both, one `UDP_SEGMENT` control message per group of two or more).
    private let groupMessages: UnsafeMutablePointer<CTuttiIO_mmsghdr>
    private let groupVectors: UnsafeMutablePointer<iovec>
    private let groupSlots: UnsafeMutablePointer<Int>
    private let groupStarts: UnsafeMutablePointer<Int>
    private let groupControls: UnsafeMutableRawPointer
    private let controlSpace: Int
    private let grouped: UnsafeMutablePointer<Bool>
    /// The most datagrams one segmented send carries (the kernel's `UDP_MAX_SEGMENTS` is 64 or more).
    static let maximumSegments = 64
    /// The largest datagram that is segmented: segments must fit the path's MTU unfragmented.
    static let maximumSegmentBytes = 1_200
    /// The most bytes one segmented send carries (a UDP datagram's payload limit).
    static let maximumSegmentedBytes = 65_000

    /// Allocates `capacity` slots (default 64); `segments`: whether to try UDP GSO (see the type's note).
    /// Control plane.
    package init(capacity: Int = 64, segments: Bool = true) {
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
        self.segments = segments
        groupMessages = .allocate(capacity: capacity)
        groupMessages.initialize(repeating: CTuttiIO_mmsghdr(), count: capacity)
        groupVectors = .allocate(capacity: capacity)
        groupVectors.initialize(repeating: iovec(), count: capacity)
        groupSlots = .allocate(capacity: capacity)
        groupSlots.initialize(repeating: 0, count: capacity)
        groupStarts = .allocate(capacity: capacity + 1)
        groupStarts.initialize(repeating: 0, count: capacity + 1)
        controlSpace = CTuttiIO_segmentControlSpace()
        groupControls = .allocate(byteCount: capacity * controlSpace, alignment: 16)
        grouped = .allocate(capacity: capacity)
        grouped.initialize(repeating: false, count: capacity)
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
        groupMessages.deallocate()
        groupVectors.deallocate()
        groupSlots.deallocate()
        groupStarts.deallocate()
        groupControls.deallocate()
        grouped.deallocate()
    }

    /// Empties the batch (forgets the last outcome). Realtime-safe: yes.
    @inline(__always)
    package mutating func removeAll() { count = 0 }

    /// Copies `datagram` into the next slot, for `destination` (prepared with `UDPSocket.destination(_:)`),
    /// or for the socket's connected peer when `destination` is nil. Returns the slot's index, or nil when
    /// the batch is full or the datagram is larger than a slot (the caller counts it as a send failure).
    /// Realtime-safe: yes.
    @inline(__always)
    package mutating func append(_ datagram: UnsafeRawBufferPointer, to destination: UDPAddress?) -> Int? {
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
    package mutating func send(from socket: UDPSocket) -> Outcome { send(descriptor: socket.descriptor) }

    mutating func send(descriptor: Int32) -> Outcome {
        lastSegmentedMessages = 0
        let groups = group(segmenting: segments && count > 1)
        return sendGroups(descriptor: descriptor, groups: groups)
    }

    /// Groups the slots into messages: `segmenting`, each slot joins the first earlier group with its
    /// destination and size that has room, else starts one; otherwise each slot is a message of its own.
    /// Returns the number of groups (messages). Realtime-safe: yes (at most `count`² comparisons: 4096 for a
    /// full batch, a few for a typical one).
    private mutating func group(segmenting: Bool) -> Int {
        for slot in 0..<count { grouped[slot] = false }
        var groups = 0
        var placed = 0
        for first in 0..<count where !grouped[first] {
            groupStarts[groups] = placed
            groupSlots[placed] = first
            groupVectors[placed] = vectors[first]
            placed += 1
            grouped[first] = true
            let size = vectors[first].iov_len
            var members = 1
            if segmenting, size > 0, size <= Self.maximumSegmentBytes {
                var other = first + 1
                while other < count, members < Self.maximumSegments, (members + 1) * size <= Self.maximumSegmentedBytes {
                    if !grouped[other], vectors[other].iov_len == size, sameDestination(first, other) {
                        groupSlots[placed] = other
                        groupVectors[placed] = vectors[other]
                        placed += 1
                        grouped[other] = true
                        members += 1
                    }
                    other += 1
                }
            }
            var header = messages[first].msg_hdr
            header.msg_iov = groupVectors + groupStarts[groups]
            header.msg_iovlen = members
            if members > 1 {
                let control = groupControls + groups * controlSpace
                CTuttiIO_setSegmentSize(control, UInt16(size))
                header.msg_control = control
                header.msg_controllen = controlSpace
                lastSegmentedMessages += 1
            } else {
                header.msg_control = nil
                header.msg_controllen = 0
            }
            groupMessages[groups].msg_hdr = header
            groups += 1
        }
        groupStarts[groups] = placed
        return groups
    }

    /// Whether slots `a` and `b` go to the same address (or both to the connected peer).
    @inline(__always)
    private func sameDestination(_ a: Int, _ b: Int) -> Bool {
        let length = messages[a].msg_hdr.msg_namelen
        guard length == messages[b].msg_hdr.msg_namelen else { return false }
        guard length > 0 else { return true }
        return memcmp(destinations + a, destinations + b, Int(length)) == 0
    }

    /// Sends the grouped messages: one `sendmmsg`, plus one more after each message the kernel refuses. A
    /// refused message of one datagram counts as its failure and the rest still go; a refused segmented
    /// message turns segmentation off, and its datagrams and those of every later group go out one by one.
    private mutating func sendGroups(descriptor: Int32, groups: Int) -> Outcome {
        var outcome = Outcome()
        var next = 0
        while next < groups {
            let result = system_sendmmsg(descriptor, groupMessages + next, UInt32(groups - next), Int32(MSG_DONTWAIT))
            outcome.systemCalls += 1
            if result < 0, errno == EINTR { continue }
            guard result > 0 else {
                let members = groupStarts[next + 1] - groupStarts[next]
                if members > 1 {
                    // The kernel will not segment here: from now on, one message per datagram.
                    segments = false
                    segmentationRefusals += 1
                    lastSegmentedMessages = 0
                    sendEachSlot(descriptor: descriptor, fromGroup: next, groups: groups, into: &outcome)
                    return outcome
                }
                results[groupSlots[groupStarts[next]]] = false
                outcome.failed += 1
                next += 1
                continue
            }
            for index in next..<(next + Int(result)) {
                let start = groupStarts[index]
                let end = groupStarts[index + 1]
                var bytes = 0
                for member in start..<end { bytes += groupVectors[member].iov_len }
                let whole = Int(groupMessages[index].msg_len) == bytes
                for member in start..<end {
                    results[groupSlots[member]] = whole
                    if whole { outcome.sent += 1 } else { outcome.failed += 1 }
                }
            }
            next += Int(result)
        }
        return outcome
    }

    /// After a refused segmented send: the datagrams of group `first` and every later group, one `sendmmsg`
    /// of one message each (this happens once per batch's life).
    private mutating func sendEachSlot(descriptor: Int32, fromGroup first: Int, groups: Int, into outcome: inout Outcome) {
        for member in groupStarts[first]..<groupStarts[groups] {
            let slot = groupSlots[member]
            var result: Int32
            repeat {
                result = system_sendmmsg(descriptor, messages + slot, 1, Int32(MSG_DONTWAIT))
                outcome.systemCalls += 1
            } while result < 0 && errno == EINTR
            let whole = result == 1 && Int(messages[slot].msg_len) == vectors[slot].iov_len
            results[slot] = whole
            if whole { outcome.sent += 1 } else { outcome.failed += 1 }
        }
    }

    /// How many datagrams in `slots` (e.g. the slots one connection appended this period) went out whole in
    /// the last `send`; the rest of the range failed. Realtime-safe: yes.
    package func sentCount(in slots: Range<Int>) -> Int {
        precondition(slots.upperBound <= count, "slot range out of range")
        var sent = 0
        for index in slots where results[index] { sent += 1 }
        return sent
    }

    /// Whether the datagram in slot `index` went out whole in the last `send`. Realtime-safe: yes.
    @inline(__always)
    package func wasSent(at index: Int) -> Bool {
        precondition(index < count, "slot index out of range")
        return results[index]
    }
}
