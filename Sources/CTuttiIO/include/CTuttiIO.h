// Linux socket calls that Swift's Glibc module does not show: the batch calls (`recvmmsg`, `sendmmsg`),
// `epoll`, `eventfd` and the control-message (cmsg) macros. Swift cannot see `struct mmsghdr` or the
// `_GNU_SOURCE` functions (the same reason swift-nio has CNIOLinux), so they are wrapped in thin C
// functions here. Every function is one system call or pure pointer arithmetic: realtime-safe.
#ifndef CTUTTIIO_H
#define CTUTTIIO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>

#ifdef __linux__
#include <sys/epoll.h>
#include <sys/eventfd.h>
#endif

/// `struct mmsghdr`: one message of a `recvmmsg`/`sendmmsg` batch.
typedef struct {
    struct msghdr msg_hdr;
    unsigned int msg_len;
} CTuttiIO_mmsghdr;

/// `recvmmsg(2)` without a timeout (the timeout argument is broken by design; use poll/epoll).
int CTuttiIO_recvmmsg(int fd, CTuttiIO_mmsghdr *messages, unsigned int count, int flags);

/// `sendmmsg(2)`.
int CTuttiIO_sendmmsg(int fd, CTuttiIO_mmsghdr *messages, unsigned int count, int flags);

/// `CMSG_SPACE(sizeof(uint16_t))`: control bytes of one `UDP_SEGMENT` message (a GSO send).
size_t CTuttiIO_segmentControlSpace(void);

/// Writes into `control` (`CTuttiIO_segmentControlSpace()` bytes) the control message that makes one send a
/// UDP GSO send (`SOL_UDP`/`UDP_SEGMENT`): the kernel cuts its payload into datagrams of `segmentBytes`.
void CTuttiIO_setSegmentSize(void *control, uint16_t segmentBytes);

/// The kernel receive timestamp (`SCM_TIMESTAMPNS`, CLOCK_REALTIME) among `message`'s control messages.
/// Returns 1 and fills `stamp` when present, 0 otherwise.
int CTuttiIO_receiveTimestamp(const struct msghdr *message, struct timespec *stamp);

/// `CMSG_SPACE(sizeof(struct timespec))`: control bytes a receive needs for one timestamp.
size_t CTuttiIO_timestampControlSpace(void);

/// The segment size of a coalesced receive (`SOL_UDP`/`UDP_GRO`: the message holds datagrams of that many bytes
/// back to back, the last one possibly shorter) among `message`'s control messages; 0 when absent (one datagram).
int CTuttiIO_receiveSegmentSize(const struct msghdr *message);

/// Control bytes a receive needs for a timestamp and a segment size.
size_t CTuttiIO_receiveControlSpace(void);

/// `setsockopt(fd, SOL_UDP, UDP_GRO, 1)`: the kernel may hand datagrams of one flow that arrive together as one
/// coalesced message (Linux 5.0 and later). Returns 0 or -1 (errno).
int CTuttiIO_enableReceiveCoalescing(int fd);

#ifdef __linux__
/// `epoll_create1(EPOLL_CLOEXEC)`.
int CTuttiIO_epollCreate(void);
/// `epoll_ctl` with `EPOLLIN` (level-triggered) and `data.u64 = token`; `operation` is EPOLL_CTL_ADD or _DEL.
int CTuttiIO_epollControl(int epoll, int operation, int fd, uint64_t token);
/// `epoll_wait` into `tokens` (the `data.u64` of each ready descriptor); returns the count, or -1 (errno).
int CTuttiIO_epollWait(int epoll, struct epoll_event *events, uint64_t *tokens, int capacity, int timeoutMilliseconds);
/// `sizeof(struct epoll_event)` (packed on x86-64).
size_t CTuttiIO_epollEventSize(void);
/// `eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)`.
int CTuttiIO_eventCreate(void);
/// Adds 1 to an eventfd's counter (`write`); returns 0 or -1 (errno).
int CTuttiIO_eventSignal(int fd);
/// Reads and clears an eventfd's counter; returns 0 or -1 (errno, EAGAIN when it was clear).
int CTuttiIO_eventClear(int fd);
#endif

/// Names the calling thread (pthread_setname_np, a GNU extension Swift's Glibc module leaves out); the kernel
/// keeps 15 bytes and refuses a longer name. Returns 0 or an errno value.
int CTuttiIO_setThreadName(const char *name);

#endif
