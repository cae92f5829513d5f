// swift-format-ignore-file: AlwaysUseLowerCamelCase
// (The wrappers keep the C names, system_<name>, as swift-system's do.)
// TuttiIO's one choke point to the operating system (swift-system's Sources/System/Internals/Syscalls.swift):
// every C-library call for an OS service that the module makes (sockets, batched UDP, epoll and eventfd,
// clocks and sleeps, threads and scheduling, files, name and interface lookup) is wrapped here once, as
// `system_<name>`, and the rest of the module calls the wrapper. The platform's C module is chosen here,
// so no other file qualifies a call with `Glibc.` (which broke the Musl build).
//
// TuttiIO is the package's edge, so this is the package's choke point too: the wrappers the engine and the
// command-line tool need (their pipes, sleeps, signals, terminal, files) are `package`, and so are the
// ones the peer's name lock and identity file need (open, flock, ftruncate, pread/pwrite, mkdir).
//
// The wrappers are `@inline(__always)`, the package ones `@inlinable`: a call on the media path (`send`,
// `recvmmsg`, `sendmmsg`, `epoll_wait`, `clock_gettime`) compiles to the raw call, with no allocation, no
// existential and no extra frame. `scripts/check-syscalls` fails when a raw call appears outside this file.
import CTuttiIO

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// MARK: - errno

/// The calling thread's `errno`.
@inlinable
package var system_errno: Int32 { errno }

// MARK: - Descriptors and pipes

@inlinable @discardableResult
package func system_close(_ fd: Int32) -> Int32 { close(fd) }

/// `open(path, flags, mode)`.
@inlinable
package func system_open(_ path: UnsafePointer<CChar>, _ flags: Int32, _ mode: mode_t) -> Int32 { open(path, flags, mode) }

@inlinable
package func system_flock(_ fd: Int32, _ operation: Int32) -> Int32 { flock(fd, operation) }

@inlinable @discardableResult
package func system_ftruncate(_ fd: Int32, _ length: off_t) -> Int32 { ftruncate(fd, length) }

@inlinable @discardableResult
package func system_lseek(_ fd: Int32, _ offset: off_t, _ whence: Int32) -> off_t { lseek(fd, offset, whence) }

@inlinable
package func system_pread(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int, _ offset: off_t) -> Int {
    pread(fd, buffer, count, offset)
}

@inlinable @discardableResult
package func system_pwrite(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int, _ offset: off_t) -> Int {
    pwrite(fd, buffer, count, offset)
}

@inlinable
package func system_mkdir(_ path: UnsafePointer<CChar>, _ mode: mode_t) -> Int32 { mkdir(path, mode) }

@inlinable
package func system_read(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int { read(fd, buffer, count) }

@inlinable
package func system_write(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int { write(fd, buffer, count) }

@inlinable
package func system_pipe(_ fds: UnsafeMutablePointer<Int32>) -> Int32 { pipe(fds) }

@inline(__always)
internal func system_fcntl(_ fd: Int32, _ command: Int32) -> Int32 { fcntl(fd, command) }

@inline(__always) @discardableResult
internal func system_fcntl(_ fd: Int32, _ command: Int32, _ value: Int32) -> Int32 { fcntl(fd, command, value) }

@inline(__always)
internal func system_poll(_ descriptors: UnsafeMutablePointer<pollfd>, _ count: nfds_t, _ timeoutMilliseconds: Int32) -> Int32 {
    poll(descriptors, count, timeoutMilliseconds)
}

// MARK: - Sockets

@inline(__always)
internal func system_socket(_ domain: Int32, _ type: Int32, _ protocol: Int32) -> Int32 { socket(domain, type, `protocol`) }

@inline(__always)
internal func system_bind(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
    bind(fd, address, length)
}

@inline(__always)
internal func system_connect(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
    connect(fd, address, length)
}

@inline(__always) @discardableResult
internal func system_setsockopt(
    _ fd: Int32, _ level: Int32, _ name: Int32, _ value: UnsafeRawPointer, _ length: socklen_t
) -> Int32 {
    setsockopt(fd, level, name, value, length)
}

@inline(__always) @discardableResult
internal func system_getsockname(
    _ fd: Int32, _ address: UnsafeMutablePointer<sockaddr>, _ length: UnsafeMutablePointer<socklen_t>
) -> Int32 {
    getsockname(fd, address, length)
}

@inline(__always)
internal func system_send(_ fd: Int32, _ bytes: UnsafeRawPointer?, _ count: Int, _ flags: Int32) -> Int {
    send(fd, bytes, count, flags)
}

@inline(__always)
internal func system_sendto(
    _ fd: Int32, _ bytes: UnsafeRawPointer?, _ count: Int, _ flags: Int32, _ address: UnsafePointer<sockaddr>,
    _ length: socklen_t
) -> Int {
    sendto(fd, bytes, count, flags, address, length)
}

@inline(__always)
internal func system_recv(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int, _ flags: Int32) -> Int {
    recv(fd, buffer, count, flags)
}

@inline(__always)
internal func system_recvfrom(
    _ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int, _ flags: Int32, _ address: UnsafeMutablePointer<sockaddr>,
    _ length: UnsafeMutablePointer<socklen_t>
) -> Int {
    recvfrom(fd, buffer, count, flags, address, length)
}

// MARK: - Batched UDP, epoll, eventfd (through CTuttiIO: Swift's Glibc module does not show them)

@inline(__always)
internal func system_recvmmsg(_ fd: Int32, _ messages: UnsafeMutablePointer<CTuttiIO_mmsghdr>, _ count: UInt32, _ flags: Int32) -> Int32 {
    CTuttiIO_recvmmsg(fd, messages, count, flags)
}

@inline(__always)
internal func system_sendmmsg(_ fd: Int32, _ messages: UnsafeMutablePointer<CTuttiIO_mmsghdr>, _ count: UInt32, _ flags: Int32) -> Int32 {
    CTuttiIO_sendmmsg(fd, messages, count, flags)
}

/// `setsockopt(fd, SOL_UDP, UDP_GRO, 1)` (the shim names the constant Swift's Glibc module does not show).
@inline(__always)
internal func system_enable_udp_gro(_ fd: Int32) -> Int32 { CTuttiIO_enableReceiveCoalescing(fd) }

/// `epoll_create1(EPOLL_CLOEXEC)`.
@inline(__always)
internal func system_epoll_create() -> Int32 { CTuttiIO_epollCreate() }

/// `epoll_ctl` with `EPOLLIN` and `data.u64 = token`.
@inline(__always) @discardableResult
internal func system_epoll_ctl(_ epoll: Int32, _ operation: Int32, _ fd: Int32, _ token: UInt64) -> Int32 {
    CTuttiIO_epollControl(epoll, operation, fd, token)
}

/// `epoll_wait`, the ready descriptors' tokens into `tokens`.
@inline(__always)
internal func system_epoll_wait(
    _ epoll: Int32, _ events: UnsafeMutablePointer<epoll_event>, _ tokens: UnsafeMutablePointer<UInt64>, _ capacity: Int32,
    _ timeoutMilliseconds: Int32
) -> Int32 {
    CTuttiIO_epollWait(epoll, events, tokens, capacity, timeoutMilliseconds)
}

/// `eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)`.
@inline(__always)
internal func system_eventfd() -> Int32 { CTuttiIO_eventCreate() }

/// Adds 1 to an eventfd's counter.
@inline(__always) @discardableResult
internal func system_eventfd_signal(_ fd: Int32) -> Int32 { CTuttiIO_eventSignal(fd) }

/// Reads and clears an eventfd's counter.
@inline(__always) @discardableResult
internal func system_eventfd_clear(_ fd: Int32) -> Int32 { CTuttiIO_eventClear(fd) }

// MARK: - Clocks and sleeps

@inlinable @discardableResult
package func system_clock_gettime(_ clock: clockid_t, _ time: UnsafeMutablePointer<timespec>) -> Int32 {
    clock_gettime(clock, time)
}

@inline(__always)
internal func system_clock_nanosleep(
    _ clock: clockid_t, _ flags: Int32, _ request: UnsafePointer<timespec>, _ remaining: UnsafeMutablePointer<timespec>?
) -> Int32 {
    clock_nanosleep(clock, flags, request, remaining)
}

@inline(__always) @discardableResult
internal func system_nanosleep(_ request: UnsafePointer<timespec>, _ remaining: UnsafeMutablePointer<timespec>?) -> Int32 {
    nanosleep(request, remaining)
}

// MARK: - Threads and scheduling

@inline(__always)
internal func system_pthread_create(
    _ thread: UnsafeMutablePointer<pthread_t>, _ attributes: UnsafePointer<pthread_attr_t>?,
    _ body: @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer?, _ argument: UnsafeMutableRawPointer?
) -> Int32 {
    pthread_create(thread, attributes, body, argument)
}

/// Names the calling thread for `top -H`, `perf` and `/proc/PID/task/*/comm` (the kernel keeps 15 bytes).
@inline(__always) @discardableResult
internal func system_pthread_setname_self(_ name: UnsafePointer<CChar>) -> Int32 {
    CTuttiIO_setThreadName(name)
}

@inline(__always) @discardableResult
internal func system_pthread_join(_ thread: pthread_t, _ result: UnsafeMutablePointer<UnsafeMutableRawPointer?>?) -> Int32 {
    pthread_join(thread, result)
}

@inline(__always)
internal func system_pthread_setschedparam(_ thread: pthread_t, _ policy: Int32, _ parameters: UnsafePointer<sched_param>) -> Int32 {
    pthread_setschedparam(thread, policy, parameters)
}

@inline(__always)
internal func system_sched_get_priority_max(_ policy: Int32) -> Int32 { sched_get_priority_max(policy) }

// MARK: - Files (stdio)

@inlinable
package func system_fopen(_ path: UnsafePointer<CChar>, _ mode: UnsafePointer<CChar>) -> UnsafeMutablePointer<FILE>? {
    fopen(path, mode)
}

@inlinable @discardableResult
package func system_fclose(_ file: UnsafeMutablePointer<FILE>) -> Int32 { fclose(file) }

@inline(__always)
internal func system_fread(_ buffer: UnsafeMutableRawPointer?, _ size: Int, _ count: Int, _ file: UnsafeMutablePointer<FILE>) -> Int {
    fread(buffer, size, count, file)
}

@inline(__always)
internal func system_fwrite(_ buffer: UnsafeRawPointer?, _ size: Int, _ count: Int, _ file: UnsafeMutablePointer<FILE>) -> Int {
    fwrite(buffer, size, count, file)
}

@inlinable @discardableResult
package func system_fflush(_ file: UnsafeMutablePointer<FILE>?) -> Int32 { fflush(file) }

@inline(__always)
internal func system_ftell(_ file: UnsafeMutablePointer<FILE>) -> Int { ftell(file) }

@inline(__always) @discardableResult
internal func system_fseek(_ file: UnsafeMutablePointer<FILE>, _ offset: Int, _ origin: Int32) -> Int32 { fseek(file, offset, origin) }

@inlinable @discardableResult
package func system_fputs(_ text: UnsafePointer<CChar>, _ file: UnsafeMutablePointer<FILE>) -> Int32 { fputs(text, file) }

@inlinable
package func system_stat(_ path: UnsafePointer<CChar>, _ status: UnsafeMutablePointer<stat>) -> Int32 { stat(path, status) }

@inlinable
package func system_access(_ path: UnsafePointer<CChar>, _ mode: Int32) -> Int32 { access(path, mode) }

@inlinable
internal func system_unlink(_ path: UnsafePointer<CChar>) -> Int32 { unlink(path) }

// MARK: - Processes, signals and the terminal

@inlinable @discardableResult
package func system_usleep(_ microseconds: UInt32) -> Int32 { usleep(microseconds) }

/// Installs `handler` for `signalNumber`. Async-signal-safe handlers only (`system_write` is one).
@inlinable
package func system_signal(_ signalNumber: Int32, _ handler: @convention(c) (Int32) -> Void) { _ = signal(signalNumber, handler) }

/// `signal(signalNumber, SIG_IGN)`: the process ignores `signalNumber` from now on.
@inlinable
package func system_ignoreSignal(_ signalNumber: Int32) { _ = signal(signalNumber, SIG_IGN) }

@inlinable @discardableResult
package func system_kill(_ process: pid_t, _ signalNumber: Int32) -> Int32 { kill(process, signalNumber) }

@inlinable
package func system_getpid() -> pid_t { getpid() }

@inlinable @discardableResult
package func system_gethostname(_ name: UnsafeMutablePointer<CChar>, _ length: Int) -> Int32 { gethostname(name, length) }

@inlinable
package func system_isatty(_ fd: Int32) -> Int32 { isatty(fd) }

/// `ioctl(fd, request, argument)`, the pointer form.
@inlinable
package func system_ioctl(_ fd: Int32, _ request: UInt, _ argument: UnsafeMutableRawPointer) -> Int32 { ioctl(fd, request, argument) }

// MARK: - Names and interfaces

@inline(__always)
internal func system_getaddrinfo(
    _ host: UnsafePointer<CChar>?, _ service: UnsafePointer<CChar>?, _ hints: UnsafePointer<addrinfo>?,
    _ result: UnsafeMutablePointer<UnsafeMutablePointer<addrinfo>?>
) -> Int32 {
    getaddrinfo(host, service, hints, result)
}

@inline(__always)
internal func system_freeaddrinfo(_ list: UnsafeMutablePointer<addrinfo>?) { freeaddrinfo(list) }

@inline(__always)
internal func system_getifaddrs(_ list: UnsafeMutablePointer<UnsafeMutablePointer<ifaddrs>?>) -> Int32 { getifaddrs(list) }

@inline(__always)
internal func system_freeifaddrs(_ list: UnsafeMutablePointer<ifaddrs>?) { freeifaddrs(list) }

// Secret files (session keys, a peer's private key).
internal func system_fstat(_ fd: Int32, _ status: UnsafeMutablePointer<stat>) -> Int32 { fstat(fd, status) }
internal func system_rename(_ from: UnsafePointer<CChar>, _ to: UnsafePointer<CChar>) -> Int32 { rename(from, to) }
internal func system_fsync(_ fd: Int32) -> Int32 { fsync(fd) }
internal func system_fchmod(_ fd: Int32, _ mode: mode_t) -> Int32 { fchmod(fd, mode) }
