import CTuttiIO
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization
import TuttiCore

/// What a `PacketReceiveLoop` calls for each datagram: `context` as registered; `bytes` the datagram (valid
/// only during the call, at most `StreamLimits.maxDatagramBytes` of it); `length` its full length, larger
/// than `StreamLimits.maxDatagramBytes` when it was truncated (reject and count it, as with
/// `UDPSocket.receive`); `arrivalNanoseconds` its arrival on the monotonic host clock (`HostTime`).
///
/// Runs on the serving thread (the loop thread, or the `receiveReady()` caller): it must not block, allocate,
/// lock or log (push into a ring, count). Declare it as a static member of a nonisolated type: a closure
/// written in main-actor code (e.g. `main.swift`'s top level) is main-actor isolated and traps on an isolation
/// check when the loop calls it. To reach a class instance without ARC traffic use
/// `Unmanaged<T>.fromOpaque(context!)._withUnsafeGuaranteedRef { … }`.
package typealias DatagramHandler =
    @convention(c) (
        _ context: UnsafeMutableRawPointer?, _ bytes: UnsafeRawPointer?, _ length: Int, _ arrivalNanoseconds: Int64
    ) -> Void

/// One network I/O thread for many UDP sockets: it waits in `epoll_wait`, takes every ready socket's queued
/// datagrams with one `recvmmsg` each (a `UDPReceiveBatch`, so kernel arrival times), and hands each
/// datagram to the handler registered for its socket. It turns on `UDPSocket.enableReceiveCoalescing()` for the
/// sockets it serves: a peer's period of streams, sent as one GSO message, arrives as one merged message that
/// the batch cuts back into datagrams (one socket enqueue and one copy, not one per stream).
///
/// **Threads.** The control plane calls `register`, `unregister`, `start`, `stop` and reads `statistics`
/// (these four are serialised by a mutex the serving thread never takes). Handlers run on the serving thread:
/// the loop thread, or the caller of `receiveReady()`.
///
/// **Slots.** `capacity` registration slots are allocated in `init`. A slot is written by the control plane
/// while empty and published by an atomic state store; the loop reads the state (sequentially consistent)
/// before it touches a slot's descriptor, handler or context, once per ready event.
///
/// **Unregistering.** An `epoch` counter is odd while an iteration serves sockets (from the return of
/// `epoll_wait` to the last handler's return). `unregister` marks the slot retiring, removes the descriptor from
/// epoll and reads the epoch (all sequentially consistent); if it is odd, it waits (20 µs sleeps) until it
/// changes. An iteration that saw the slot active made the epoch odd before the mark, so it is either over or
/// the one waited for: when `unregister` returns, no handler call for that socket is running or will run, and
/// the caller may free the context. A loop blocked in `epoll_wait` costs `unregister` no wait at all. Event
/// tokens carry the slot's generation, so a stale event for a reused slot is ignored.
///
/// **Without the thread.** A caller with its own periodic thread (the engine's device clock) may skip `start`
/// and call `receiveReady()` once per period: the same work with a zero timeout, no network thread and no
/// wake-up per packet (see `Benchmarks/UDPBatching.md`).
///
/// `receiveReady()` makes no `epoll_wait` when it cannot save one: with no socket registered (a peer that only
/// sends) it makes no system call at all; with exactly one it reads that socket directly (one `recvmmsg`,
/// which returns at once when nothing is queued).
///
/// **Hot path.** Per wake-up: one `epoll_wait`, one `recvmmsg` per ready socket (a second only when a
/// batch came back full), a handler call per datagram through a C function pointer; no allocation, lock,
/// log or existential. The thread is an audio thread (`OSThread(realtime: true)`, `SCHED_FIFO` when
/// `RealtimeScheduling` is enabled).
package final class PacketReceiveLoop: @unchecked Sendable {
    /// A registered socket, for `unregister`.
    package struct Registration: Hashable, Sendable {
        let slot: Int
        let generation: UInt32
    }

    /// Cumulative counters (published by the serving thread after every iteration, relaxed).
    package struct Statistics: Sendable, Equatable {
        /// Iterations: `epoll_wait` returns (wake-ups of the loop thread, or `receiveReady` calls).
        package var wakeUps: UInt64 = 0
        /// `recvmmsg` calls.
        package var receiveCalls: UInt64 = 0
        /// Datagrams handed to handlers (truncated ones included).
        package var datagrams: UInt64 = 0
        /// Of those, datagrams longer than a slot.
        package var truncated: UInt64 = 0
        /// Of those, datagrams timed by the kernel (the rest by a clock read).
        package var kernelTimestamped: UInt64 = 0
    }

    private struct Slot {
        var descriptor: Int32 = -1
        var generation: UInt32 = 0
        /// Retained while registered, so the socket stays open as long as the loop may read it.
        var socket: Unmanaged<UDPSocket>?
        var handler: DatagramHandler?
        var context: UnsafeMutableRawPointer?
    }

    private enum SlotState: Int {
        case empty = 0
        case active = 1
        case retiring = 2
    }

    /// The most sockets registered at once.
    package let capacity: Int
    private let batchCapacity: Int
    private let name: String
    /// Batches taken from one socket per wake-up before the loop serves the others (fairness).
    private let batchesPerWake: Int
    /// Events one `epoll_wait` returns: every registered socket and the wake-up eventfd, so one call (and one
    /// `receiveReady`) serves every ready socket.
    private var eventsPerWait: Int { capacity + 1 }
    private static let wakeToken = UInt64.max

    private let epoll: Int32
    private let wake: Int32
    private let slots: UnsafeMutablePointer<Slot>
    private let states: UnsafeMutablePointer<Atomic<Int>>
    private let running = Atomic<Bool>(false)
    /// Odd while an iteration serves sockets (written by the serving thread, read by `unregister`).
    private let epoch = Atomic<UInt64>(0)
    /// The slot of the only active registration, `noSlot` when there is none, `severalSlots` when there are
    /// more (written by the control plane under `control` after each change; read by `receiveReady`).
    private let soleSlot = Atomic<Int>(PacketReceiveLoop.noSlot)
    private static let noSlot = -1
    private static let severalSlots = -2
    private let counters: UnsafeMutablePointer<Atomic<UInt64>>
    /// The serving thread's own state (the loop thread, or the `receiveReady` caller; never both at once).
    private let batch: UnsafeMutablePointer<UDPReceiveBatch>
    private let events: UnsafeMutablePointer<epoll_event>
    private let tokens: UnsafeMutablePointer<UInt64>
    private let tally: UnsafeMutablePointer<Statistics>
    /// When the previous iteration looked at its sockets (host clock, ns): serving thread only.
    private let previousLook: UnsafeMutablePointer<Int64>
    /// Control plane: guards `thread` and slot allocation.
    private let control = Mutex<ControlState>(ControlState())
    private struct ControlState: ~Copyable {
        var thread: OSThread?
        var nextGeneration: UInt32 = 1
    }

    /// Creates the loop (not started). `batchesPerSocket`: batches taken from one ready socket per iteration
    /// before the others are served (default 4; a caller of `receiveReady()` that must drain a shared socket
    /// each period gives more). `capacity`: most sockets at once (default 1024); `batchCapacity`:
    /// datagrams per `recvmmsg` (default 32). Control plane.
    ///
    /// - Throws: `SystemError` when epoll or the wake-up eventfd cannot be created.
    package init(
        capacity: Int = 1024, batchCapacity: Int = 32, batchesPerSocket: Int = 4, name: String = "tutti-net"
    ) throws(SystemError) {
        precondition(batchesPerSocket > 0, "a loop takes at least one batch per ready socket")
        batchesPerWake = batchesPerSocket
        precondition(capacity > 0 && capacity < Int(UInt32.max), "capacity out of range")
        self.capacity = capacity
        self.batchCapacity = batchCapacity
        self.name = name
        let epoll = system_epoll_create()
        guard epoll >= 0 else { throw .current("create epoll instance") }
        let wake = system_eventfd()
        guard wake >= 0 else {
            let error = SystemError.current("create eventfd")
            system_close(epoll)
            throw error
        }
        guard system_epoll_ctl(epoll, EPOLL_CTL_ADD, wake, Self.wakeToken) == 0 else {
            let error = SystemError.current("add eventfd to epoll")
            system_close(epoll)
            system_close(wake)
            throw error
        }
        self.epoll = epoll
        self.wake = wake
        slots = .allocate(capacity: capacity)
        slots.initialize(repeating: Slot(), count: capacity)
        states = .allocate(capacity: capacity)
        for index in 0..<capacity { (states + index).initialize(to: Atomic(SlotState.empty.rawValue)) }
        counters = .allocate(capacity: 5)
        for index in 0..<5 { (counters + index).initialize(to: Atomic(0)) }
        batch = .allocate(capacity: 1)
        batch.initialize(to: UDPReceiveBatch(capacity: batchCapacity, coalescing: true))
        events = .allocate(capacity: capacity + 1)
        tokens = .allocate(capacity: capacity + 1)
        tally = .allocate(capacity: 1)
        tally.initialize(to: Statistics())
        previousLook = .allocate(capacity: 1)
        previousLook.initialize(to: .min)
    }

    deinit {
        stop()
        for index in 0..<capacity { slots[index].socket?.release() }
        system_close(epoll)
        system_close(wake)
        slots.deinitialize(count: capacity)
        slots.deallocate()
        states.deinitialize(count: capacity)
        states.deallocate()
        counters.deinitialize(count: 5)
        counters.deallocate()
        batch.deinitialize(count: 1)
        batch.deallocate()
        events.deallocate()
        tokens.deallocate()
        tally.deallocate()
        previousLook.deallocate()
    }

    /// Starts serving `socket`: from now on the loop calls `handler(context, …)` on its thread for every
    /// datagram the socket receives. The loop keeps `socket` alive until `unregister` (do not `close` it before);
    /// `context` stays the caller's: keep it alive until `unregister` returns.
    /// Control plane. Works whether or not the loop is running.
    ///
    /// - Throws: `SystemError` with `ENOSPC` when `capacity` sockets are registered, or `epoll_ctl`'s errno.
    package func register(
        _ socket: UDPSocket, handler: DatagramHandler, context: UnsafeMutableRawPointer?
    ) throws(SystemError) -> Registration {
        let result: Result<Registration, SystemError> = control.withLock { control in
            guard let index = (0..<capacity).first(where: { states[$0].load(ordering: .acquiring) == SlotState.empty.rawValue })
            else { return .failure(SystemError("register socket: the receive loop serves \(capacity) already", errno: ENOSPC)) }
            // Its datagrams may come merged (a peer's GSO send of a period's streams): the loop's batch cuts
            // them apart, one socket enqueue and one copy per merged message instead of per datagram.
            socket.enableReceiveCoalescing()
            let generation = control.nextGeneration
            control.nextGeneration = generation == UInt32.max ? 1 : generation + 1
            slots[index] = Slot(
                descriptor: socket.descriptor, generation: generation, socket: .passRetained(socket), handler: handler,
                context: context)
            states[index].store(SlotState.active.rawValue, ordering: .sequentiallyConsistent)
            let token = UInt64(generation) << 32 | UInt64(index)
            guard system_epoll_ctl(epoll, EPOLL_CTL_ADD, socket.descriptor, token) == 0 else {
                let error = SystemError.current("add socket to epoll")
                slots[index].socket?.release()
                slots[index] = Slot()
                states[index].store(SlotState.empty.rawValue, ordering: .sequentiallyConsistent)
                return .failure(error)
            }
            updateSoleSlot()
            return .success(Registration(slot: index, generation: generation))
        }
        return try result.get()
    }

    /// Stops serving a socket. When it returns, the loop thread will never again call its handler or touch its
    /// context (see the type's comment), so the caller may free the context; the loop releases the socket. Waits
    /// at most for the iteration in progress. Returns `false` if `registration` is not registered.
    /// Control plane; must not be called from a handler.
    @discardableResult
    package func unregister(_ registration: Registration) -> Bool {
        control.withLock { _ in
            let index = registration.slot
            guard index < capacity, states[index].load(ordering: .acquiring) == SlotState.active.rawValue,
                slots[index].generation == registration.generation
            else { return false }
            states[index].store(SlotState.retiring.rawValue, ordering: .sequentiallyConsistent)
            _ = system_epoll_ctl(epoll, EPOLL_CTL_DEL, slots[index].descriptor, 0)
            waitForHandlers()
            slots[index].socket?.release()
            slots[index] = Slot()
            states[index].store(SlotState.empty.rawValue, ordering: .sequentiallyConsistent)
            updateSoleSlot()
            return true
        }
    }

    /// Publishes which slot is the only active one (`soleSlot`). Control plane, under `control`.
    private func updateSoleSlot() {
        var sole = Self.noSlot
        for index in 0..<capacity where states[index].load(ordering: .acquiring) == SlotState.active.rawValue {
            guard sole == Self.noSlot else {
                sole = Self.severalSlots
                break
            }
            sole = index
        }
        soleSlot.store(sole, ordering: .sequentiallyConsistent)
    }

    /// Returns once no handler call that may have begun before this call is still running: what a handler
    /// could reach through state the caller has just withdrawn (e.g. a stream removed from a demultiplexing
    /// table the handler reads) is no longer in use afterwards. Waits (20 µs sleeps) only while an iteration
    /// serves sockets. Control plane; must not be called from a handler.
    package func waitForHandlers() {
        let seen = epoch.load(ordering: .sequentiallyConsistent)
        guard seen & 1 == 1 else { return }
        var pause = timespec(tv_sec: 0, tv_nsec: 20_000)
        while epoch.load(ordering: .sequentiallyConsistent) == seen { system_nanosleep(&pause, nil) }
    }

    /// Starts the loop thread. Idempotent. Control plane.
    package func start() {
        control.withLock { control in
            guard control.thread == nil else { return }
            running.store(true, ordering: .sequentiallyConsistent)
            control.thread = OSThread(name: name, realtime: true) { [self] in run() }
        }
    }

    /// Stops the loop thread and waits for it to end (handlers are not called after it returns; registrations
    /// stay, and serve again after `start`). Idempotent. Control plane; must not be called from a handler.
    package func stop() {
        control.withLock { control in
            guard let thread = control.thread else { return }
            running.store(false, ordering: .sequentiallyConsistent)
            _ = system_eventfd_signal(wake)
            thread.join()
            control.thread = nil
        }
    }

    /// Whether the loop thread runs. Control plane.
    package var isRunning: Bool { control.withLock { $0.thread != nil } }

    /// The loop's counters so far. Any thread.
    package var statistics: Statistics {
        Statistics(
            wakeUps: counters[0].load(ordering: .relaxed), receiveCalls: counters[1].load(ordering: .relaxed),
            datagrams: counters[2].load(ordering: .relaxed), truncated: counters[3].load(ordering: .relaxed),
            kernelTimestamped: counters[4].load(ordering: .relaxed))
    }

    /// Calls the handlers for every datagram queued now on any registered socket, without blocking: one
    /// `epoll_wait` (timeout 0) and one `recvmmsg` per ready socket; with one socket registered, only its
    /// `recvmmsg`; with none, no system call. For a caller with its own periodic thread
    /// (the engine's device clock) instead of the loop thread: no network thread and no wake-up per packet,
    /// while arrival times stay the kernel's. Returns the datagrams handed to handlers.
    ///
    /// `latest`: arrival times after it are reported as `latest`. For a caller whose periods are on fake time
    /// (a clock run by hand in tests passes its period's time, so that the kernel's real times land on its
    /// timeline); a period thread on the real clock passes nothing and gets the kernel's times, even for
    /// packets that came after its period's time: those clamped would look faster than they were.
    ///
    /// Call from one thread at a time, and only while the loop thread is not running (`start` not called,
    /// or `stop` returned). Realtime-safe: yes (system calls, no allocation, lock or log).
    @discardableResult
    package func receiveReady(notAfter latest: HostTime = HostTime(nanoseconds: .max)) -> Int {
        precondition(!running.load(ordering: .relaxed), "receiveReady while the loop thread runs")
        let sole = soleSlot.load(ordering: .sequentiallyConsistent)
        if sole == Self.noSlot {
            tally.pointee.wakeUps &+= 1
            publish(tally.pointee)
            return 0
        }
        return service(timeoutMilliseconds: 0, latest: latest.nanoseconds, only: sole == Self.severalSlots ? nil : sole)
    }

    /// The loop thread's body.
    private func run() {
        while running.load(ordering: .relaxed) { service(timeoutMilliseconds: -1, latest: .max) }
    }

    /// One iteration: waits up to `timeoutMilliseconds` (-1: until an event) and serves every ready socket;
    /// or, given `only`, serves that slot's socket without waiting (whatever is queued on it). `epoch` is odd
    /// from the moment the wait returns until the last handler returned (see `unregister`).
    @discardableResult
    private func service(timeoutMilliseconds: Int32, latest: Int64, only: Int? = nil) -> Int {
        let ready: Int32
        if let only {
            // No event names it: its generation is not checked (the slot is read only once seen active).
            tokens[0] = UInt64(only)
            ready = 1
        } else {
            ready = system_epoll_wait(epoll, events, tokens, Int32(eventsPerWait), timeoutMilliseconds)
        }
        epoch.add(1, ordering: .sequentiallyConsistent)
        // A datagram read now reached its socket after the previous iteration looked (else that one would
        // have read it): a kernel arrival time before then is the time the packet entered the host, before
        // something held it on the way to the socket (ingress shaping, a netfilter queue). Clamped to the
        // previous look, its error is at most one iteration instead of the hold.
        let looked = MonotonicClock().now().nanoseconds
        let earliest = previousLook.pointee
        previousLook.pointee = looked
        var handled = 0
        for event in 0..<Int(max(ready, 0)) {
            let token = tokens[event]
            if token == Self.wakeToken {
                _ = system_eventfd_clear(wake)
                continue
            }
            let index = Int(token & 0xFFFF_FFFF)
            guard states[index].load(ordering: .sequentiallyConsistent) == SlotState.active.rawValue else { continue }
            let slot = slots[index]
            guard only != nil || slot.generation == UInt32(token >> 32), let handler = slot.handler else { continue }
            for _ in 0..<batchesPerWake {
                let received = batch.pointee.receive(descriptor: slot.descriptor)
                tally.pointee.receiveCalls &+= 1
                for message in 0..<received {
                    let length = batch.pointee.length(at: message)
                    if length > batch.pointee.datagramCapacity { tally.pointee.truncated &+= 1 }
                    handler(
                        slot.context, batch.pointee.datagram(at: message).baseAddress, length,
                        min(max(batch.pointee.arrival(at: message).nanoseconds, earliest), latest))
                }
                handled += received
                if batch.pointee.messages < batch.pointee.capacity { break }
            }
        }
        tally.pointee.wakeUps &+= 1
        tally.pointee.datagrams &+= UInt64(handled)
        tally.pointee.kernelTimestamped = batch.pointee.kernelTimestamped
        publish(tally.pointee)
        epoch.add(1, ordering: .sequentiallyConsistent)
        return handled
    }

    @inline(__always)
    private func publish(_ local: Statistics) {
        counters[0].store(local.wakeUps, ordering: .relaxed)
        counters[1].store(local.receiveCalls, ordering: .relaxed)
        counters[2].store(local.datagrams, ordering: .relaxed)
        counters[3].store(local.truncated, ordering: .relaxed)
        counters[4].store(local.kernelTimestamped, ordering: .relaxed)
    }
}
