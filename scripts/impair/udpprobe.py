#!/usr/bin/env python3
"""udpprobe — measure what a lab link does to a UDP packet stream.

Run the receiver on one lab host and the sender on another:

    scripts/lab exec h2 scripts/impair/udpprobe.py recv --port 9000 &
    scripts/lab exec h1 scripts/impair/udpprobe.py send --to 198.18.0.2 \
        --port 9000 --rate 1000 --count 5000

Each datagram carries a sequence number and the sender's CLOCK_MONOTONIC
send time. Lab hosts share the machine's monotonic clock (network
namespaces do not change clocks), so one-way latency is measured exactly.
The receiver reports loss, duplicates, reordering (a packet arriving after
a higher sequence number, so one packet that skips a 10 ms queue at
1000 packets/s makes ~10 others "reordered"), the latency's minimum, mean
and maximum and the share of packets faster than 1 ms (what --reorder
sends undelayed), as one line of key=value pairs. `--delays FILE` also
writes each packet's one-way latency (ms, one a line) for percentiles:
`tutti-link-agreement series FILE` (TuttiAnalysis, the one percentile
definition of every lab figure). It stops after the sender's end marker or --timeout
seconds without traffic. Standard library only, bounded in time and count.
"""
import argparse
import socket
import struct
import sys
import time

MAGIC = 0x54555454  # "TUTT"
HDR = struct.Struct("!IIQd")  # magic, flags, seq, send time (monotonic s)
FLAG_END = 1


def family_of(host):
    return socket.AF_INET6 if ":" in host else socket.AF_INET


def send(args):
    fam = family_of(args.to)
    s = socket.socket(fam, socket.SOCK_DGRAM)
    dest = (args.to, args.port)
    pad = b"\0" * max(0, args.size - HDR.size)
    interval = 1.0 / args.rate
    start = time.monotonic()
    for seq in range(args.count):
        # Pace against the start time so scheduling hiccups do not lower
        # the average rate.
        due = start + seq * interval
        now = time.monotonic()
        if due > now:
            time.sleep(due - now)
        s.sendto(HDR.pack(MAGIC, 0, seq, time.monotonic()) + pad, dest)
    elapsed = time.monotonic() - start
    # The end marker may itself be lost or delayed on an impaired link:
    # send a few, spaced out.
    for _ in range(5):
        time.sleep(0.05)
        s.sendto(HDR.pack(MAGIC, FLAG_END, args.count, time.monotonic()), dest)
    print(f"sent={args.count} seconds={elapsed:.3f} rate={args.count / elapsed:.0f}/s", flush=True)


def recv(args):
    fam = socket.AF_INET6 if args.ipv6 else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    if fam == socket.AF_INET6:
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    s.bind(("::" if fam == socket.AF_INET6 else "0.0.0.0", args.port))
    s.settimeout(args.timeout)
    print(f"listening port={args.port}", file=sys.stderr, flush=True)

    seen = {}
    lat = []
    received = dups = reordered = 0
    highest = -1
    expected = None
    deadline = time.monotonic() + args.max_seconds
    while time.monotonic() < deadline:
        try:
            data, _ = s.recvfrom(65535)
        except socket.timeout:
            break
        now = time.monotonic()
        if len(data) < HDR.size:
            continue
        magic, flags, seq, sent = HDR.unpack_from(data)
        if magic != MAGIC:
            continue
        if flags & FLAG_END:
            expected = seq
            # Give straggling delayed packets a moment, then stop.
            s.settimeout(min(args.timeout, 0.5))
            continue
        received += 1
        if seq in seen:
            dups += 1
            continue
        seen[seq] = True
        if seq < highest:
            reordered += 1
        highest = max(highest, seq)
        lat.append((now - sent) * 1000.0)

    total = expected if expected is not None else (highest + 1)
    unique = len(seen)
    lost = max(0, total - unique)
    if args.delays:
        with open(args.delays, "w") as out:
            out.writelines(f"{v:.6f}\n" for v in lat)
    avg = sum(lat) / len(lat) if lat else float("nan")
    low = min(lat) if lat else float("nan")
    high = max(lat) if lat else float("nan")
    print(
        f"expected={total} unique={unique} lost={lost} "
        f"loss_pct={100.0 * lost / total if total else 0:.2f} "
        f"dups={dups} dup_pct={100.0 * dups / total if total else 0:.2f} "
        f"reordered={reordered} reorder_pct={100.0 * reordered / total if total else 0:.2f} "
        f"lat_ms_min={low:.3f} lat_ms_avg={avg:.3f} lat_ms_max={high:.3f} "
        f"under_1ms_pct={100.0 * sum(1 for v in lat if v < 1.0) / len(lat) if lat else 0:.2f}"
        + ("" if expected is not None else " end_marker=missing"),
        flush=True,
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sp = sub.add_parser("send", help="send a numbered, timestamped UDP stream")
    sp.add_argument("--to", required=True, help="receiver address (IPv4 or IPv6)")
    sp.add_argument("--port", type=int, default=9000)
    sp.add_argument("--rate", type=float, default=1000.0, help="packets per second")
    sp.add_argument("--count", type=int, default=1000)
    sp.add_argument("--size", type=int, default=200, help="datagram size in bytes")
    rp = sub.add_parser("recv", help="receive and report")
    rp.add_argument("--port", type=int, default=9000)
    rp.add_argument("--ipv6", action="store_true", help="dual-stack socket (needed for IPv6)")
    rp.add_argument("--timeout", type=float, default=5.0, help="stop after this many idle seconds")
    rp.add_argument("--max-seconds", type=float, default=120.0, help="hard time limit")
    rp.add_argument("--delays", metavar="FILE", help="also write each packet's one-way latency (ms), one a line")
    args = ap.parse_args()
    send(args) if args.cmd == "send" else recv(args)


if __name__ == "__main__":
    main()
