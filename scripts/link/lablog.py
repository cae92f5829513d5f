#!/usr/bin/env python3
"""Small queries on the JSON-lines logs of aalink_peer.py (or a Tutti peer using the same format),
for shell drivers such as link-lab-test.

  lablog.py wait FILE [--timeout S] [--after NS] [--ev EV[,EV..]] [--settle-ms MS] [--print FIELD]
                KEY=VALUE...
      Wait until FILE holds a line with "t" > NS (if given), "ev" in EVs (if given) and every
      KEY=VALUE (VALUE parsed as JSON when possible; numbers compare with a relative tolerance of
      1e-5). Once one matches, keep reading for --settle-ms more (default 5) and return the match
      with the smallest "t" (the poll thread and Link's callbacks report the same change; take the
      earliest). Prints the line (or its FIELD). Exit 1 on timeout.
  lablog.py now
      CLOCK_MONOTONIC in ns.
(The logs' analysis, the beat continuity `jumps` measured here before, is tutti-link-agreement's.)
"""

import argparse
import json
import sys
import time


def json_events(lines):
    """The JSON objects among `lines` (a log's JSON lines; every other line is skipped)."""
    for line in lines:
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            yield json.loads(line)
        except json.JSONDecodeError:
            continue


def parse_value(v):
    try:
        return json.loads(v)
    except json.JSONDecodeError:
        return v


def same(a, b):
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return abs(a - b) <= 1e-5 * max(abs(a), abs(b), 1.0)
    return a == b


def cmd_wait(a):
    conds = []
    for kv in a.match:
        k, _, v = kv.partition("=")
        conds.append((k, parse_value(v)))
    evs = set(a.ev.split(",")) if a.ev else None
    deadline = time.monotonic() + a.timeout
    best = None
    settle_until = None
    pos = 0
    buf = ""
    while True:
        try:
            with open(a.file) as f:
                f.seek(pos)
                chunk = f.read()
                pos = f.tell()
        except FileNotFoundError:
            chunk = ""
        buf += chunk
        *lines, buf = buf.split("\n")
        for o in json_events(lines):
            if evs is not None and o.get("ev") not in evs:
                continue
            t = o.get("t")
            if a.after is not None and (t is None or t <= a.after):
                continue
            if all(k in o and same(o[k], v) for k, v in conds):
                if best is None or (t is not None and t < best.get("t", t + 1)):
                    best = o
                if settle_until is None:
                    settle_until = time.monotonic() + a.settle_ms / 1000.0
        now = time.monotonic()
        if best is not None and now >= settle_until:
            break
        if best is None and now >= deadline:
            print("lablog: timeout after %.1f s waiting in %s for %s" % (a.timeout, a.file, " ".join(a.match)),
                  file=sys.stderr)
            return 1
        time.sleep(0.002)
    if a.print:
        v = best.get(a.print)
        print(json.dumps(v) if isinstance(v, bool) or not isinstance(v, (int, float, str)) else v)
    else:
        print(json.dumps(best, separators=(",", ":")))
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("wait")
    w.add_argument("file")
    w.add_argument("match", nargs="*")
    w.add_argument("--timeout", type=float, default=5.0)
    w.add_argument("--after", type=int)
    w.add_argument("--ev")
    w.add_argument("--settle-ms", type=float, default=5.0)
    w.add_argument("--print")
    sub.add_parser("now")
    if len(sys.argv) > 1 and sys.argv[1] == "wait":
        a = w.parse_intermixed_args(sys.argv[2:])
        a.cmd = "wait"
    else:
        a = p.parse_args()
    if a.cmd == "now":
        print(time.clock_gettime_ns(time.CLOCK_MONOTONIC))
        return 0
    return cmd_wait(a)


if __name__ == "__main__":
    sys.exit(main())
