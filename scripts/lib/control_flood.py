#!/usr/bin/env python3
"""A stranger flooding a peer's control channel, for the lab's "flood" scenario (issue 14).

Opens COUNT TCP connections to HOST:PORT, RATE a second (bursts of RATE/10 every 0.1 s, so that what the peer
meets is the flood, not the kernel's full accept queue); on every FRAMES-th one (default 10) it starts a large
control frame (a length prefix of 60000 bytes, then half of them) and stops there; the others stay idle. It
holds every connection until HOLD seconds after the first, noting when the peer closed each (end of file or a
reset) counted from its connect, then prints one JSON object: how many it opened, how many the peer closed
at once (within 1 s), how many later (at its request timeout), the earliest and latest of the later closes,
and how many were still open at the end.

Usage: control_flood.py HOST PORT COUNT HOLD RATE [FRAMES]
"""

import json
import resource
import select
import socket
import sys
import time

WATCH = select.POLLIN | select.POLLERR | select.POLLHUP
HALF_FRAME = (60000).to_bytes(4, "big") + b"{" * 30000


class Flood:
    def __init__(self):
        self.sockets = {}  # fd -> (socket, connect time, whether it gets a half frame)
        self.closed_after = {}  # fd -> seconds from connect to the peer's close
        self.half_frames = 0
        self.failed = 0
        self.poller = select.poll()

    def open(self, host, port, with_frame):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        try:
            s.connect((host, port))
        except BlockingIOError:
            pass
        except OSError:
            self.failed += 1
            s.close()
            return
        self.sockets[s.fileno()] = (s, time.monotonic(), with_frame)
        self.poller.register(s.fileno(), WATCH | (select.POLLOUT if with_frame else 0))

    def watch(self, until):
        """Handles events until the monotonic time `until`."""
        while True:
            left = until - time.monotonic()
            if left <= 0:
                return
            for fd, events in self.poller.poll(max(1, int(left * 1000))):
                s, at, with_frame = self.sockets[fd]
                if events & select.POLLOUT and with_frame:
                    self.sockets[fd] = (s, at, False)
                    try:
                        s.send(HALF_FRAME)
                        self.half_frames += 1
                    except OSError:
                        pass
                    self.poller.modify(fd, WATCH)
                    continue
                if events & WATCH:
                    try:
                        data = s.recv(4096)
                    except OSError:
                        data = b""
                    if data:
                        continue  # an answer (an error frame); the close comes next
                    self.closed_after[fd] = time.monotonic() - at
                    self.poller.unregister(fd)


def main():
    host, port, count, hold, rate = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
    every = int(sys.argv[6]) if len(sys.argv) > 6 else 10
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, count + 64)), hard))
    flood = Flood()
    started = time.monotonic()
    burst = max(1, rate // 10)
    for index in range(count):
        if index and index % burst == 0:
            flood.watch(started + index / rate)
        flood.open(host, port, index % every == 0)
    flood.watch(started + hold)
    later = sorted(t for t in flood.closed_after.values() if t > 1.0)
    print(json.dumps({
        "opened": len(flood.sockets), "failed": flood.failed, "halfFrames": flood.half_frames,
        "closedAtOnce": sum(1 for t in flood.closed_after.values() if t <= 1.0), "closedLater": len(later),
        "closedLaterMin": round(later[0], 2) if later else None, "closedLaterMax": round(later[-1], 2) if later else None,
        "stillOpen": len(flood.sockets) - len(flood.closed_after), "seconds": round(time.monotonic() - started, 2)}))
    for s, _, _ in flood.sockets.values():
        s.close()


if __name__ == "__main__":
    main()
