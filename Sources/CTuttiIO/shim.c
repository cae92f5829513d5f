#define _GNU_SOURCE
#include "CTuttiIO.h"

#include <netinet/in.h>
#include <pthread.h>
#include <netinet/udp.h>
#include <string.h>
#include <unistd.h>

#ifndef SOL_UDP
#define SOL_UDP 17
#endif
#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif

int CTuttiIO_recvmmsg(int fd, CTuttiIO_mmsghdr *messages, unsigned int count, int flags) {
    _Static_assert(sizeof(CTuttiIO_mmsghdr) == sizeof(struct mmsghdr), "mmsghdr layout");
    return recvmmsg(fd, (struct mmsghdr *)messages, count, flags, NULL);
}

int CTuttiIO_sendmmsg(int fd, CTuttiIO_mmsghdr *messages, unsigned int count, int flags) {
    return sendmmsg(fd, (struct mmsghdr *)messages, count, flags);
}

int CTuttiIO_receiveTimestamp(const struct msghdr *message, struct timespec *stamp) {
    for (struct cmsghdr *c = CMSG_FIRSTHDR((struct msghdr *)message); c != NULL;
         c = CMSG_NXTHDR((struct msghdr *)message, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS
            && c->cmsg_len >= CMSG_LEN(sizeof(struct timespec))) {
            memcpy(stamp, CMSG_DATA(c), sizeof(struct timespec));
            return 1;
        }
    }
    return 0;
}

size_t CTuttiIO_segmentControlSpace(void) { return CMSG_SPACE(sizeof(uint16_t)); }

void CTuttiIO_setSegmentSize(void *control, uint16_t segmentBytes) {
    memset(control, 0, CMSG_SPACE(sizeof(uint16_t)));
    struct cmsghdr *header = (struct cmsghdr *)control;
    header->cmsg_level = SOL_UDP;
    header->cmsg_type = UDP_SEGMENT;
    header->cmsg_len = CMSG_LEN(sizeof(uint16_t));
    memcpy(CMSG_DATA(header), &segmentBytes, sizeof(segmentBytes));
}

size_t CTuttiIO_timestampControlSpace(void) { return CMSG_SPACE(sizeof(struct timespec)); }

int CTuttiIO_receiveSegmentSize(const struct msghdr *message) {
    for (struct cmsghdr *c = CMSG_FIRSTHDR((struct msghdr *)message); c != NULL;
         c = CMSG_NXTHDR((struct msghdr *)message, c)) {
        if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO && c->cmsg_len >= CMSG_LEN(sizeof(int))) {
            int size;
            memcpy(&size, CMSG_DATA(c), sizeof(size));
            return size > 0 ? size : 0;
        }
    }
    return 0;
}

size_t CTuttiIO_receiveControlSpace(void) { return CMSG_SPACE(sizeof(struct timespec)) + CMSG_SPACE(sizeof(int)); }

int CTuttiIO_enableReceiveCoalescing(int fd) {
    int on = 1;
    return setsockopt(fd, SOL_UDP, UDP_GRO, &on, sizeof(on));
}

#ifdef __linux__
int CTuttiIO_epollCreate(void) { return epoll_create1(EPOLL_CLOEXEC); }

int CTuttiIO_epollControl(int epoll, int operation, int fd, uint64_t token) {
    struct epoll_event event;
    memset(&event, 0, sizeof(event));
    event.events = EPOLLIN;
    event.data.u64 = token;
    return epoll_ctl(epoll, operation, fd, &event);
}

int CTuttiIO_epollWait(int epoll, struct epoll_event *events, uint64_t *tokens, int capacity, int timeoutMilliseconds) {
    int ready = epoll_wait(epoll, events, capacity, timeoutMilliseconds);
    for (int index = 0; index < ready; index++) tokens[index] = events[index].data.u64;
    return ready;
}

size_t CTuttiIO_epollEventSize(void) { return sizeof(struct epoll_event); }

int CTuttiIO_eventCreate(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }

int CTuttiIO_eventSignal(int fd) {
    uint64_t one = 1;
    return write(fd, &one, sizeof(one)) == sizeof(one) ? 0 : -1;
}

int CTuttiIO_eventClear(int fd) {
    uint64_t value;
    return read(fd, &value, sizeof(value)) == sizeof(value) ? 0 : -1;
}
#endif

int CTuttiIO_setThreadName(const char *name) { return pthread_setname_np(pthread_self(), name); }
