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
  lablog.py jumps FILE [--start-ns NS] [--end-ns NS] [--field beat] [--max-dt-us 10]
      Continuity of a peer's own beat timeline from its sample lines: for each pair of consecutive
      samples, the beat advance minus the advance expected from the earlier sample's tempo
      ((t2 - t1) * bpm / 60e9), converted to us. Samples whose bracket dt exceeds --max-dt-us are
      left out (a sample's time is uncertain by dt/2: a 36 us scheduler hiccup alone looks like an
      18 us jump). Prints JSON: n, dropped, max_abs_jump_us (the largest discontinuity),
      max_gap_ms (longest time between samples kept), tempos seen.
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


def cmd_jumps(a):
    samples = []
    dropped = 0
    with open(a.file) as f:
        for o in json_events(f):
            if o.get("ev") not in ("sample", "state") or a.field not in o or "t" not in o:
                continue
            if (a.start_ns is not None and o["t"] < a.start_ns) or (a.end_ns is not None and o["t"] >= a.end_ns):
                continue
            if a.max_dt_us > 0 and o.get("dt") is not None and o["dt"] > a.max_dt_us * 1000:
                dropped += 1
                continue
            samples.append((o["t"], float(o[a.field]), float(o["tempo"])))
    samples.sort()
    worst = 0.0
    worst_t = None
    gap = 0
    for (t1, b1, m1), (t2, b2, _m2) in zip(samples, samples[1:]):
        jump_us = (b2 - b1 - (t2 - t1) * m1 / 60e9) * 60e6 / m1
        if abs(jump_us) > abs(worst):
            worst, worst_t = jump_us, t2
        gap = max(gap, t2 - t1)
    print(json.dumps({"n": len(samples), "dropped": dropped, "max_abs_jump_us": round(abs(worst), 3), "worst_jump_us": round(worst, 3),
                      "worst_t": worst_t, "max_gap_ms": round(gap / 1e6, 3),
                      "tempos": sorted({round(s[2], 6) for s in samples})}))
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
    j = sub.add_parser("jumps")
    j.add_argument("file")
    j.add_argument("--start-ns", type=int)
    j.add_argument("--end-ns", type=int)
    j.add_argument("--field", default="beat")
    j.add_argument("--max-dt-us", type=float, default=10.0)
    if len(sys.argv) > 1 and sys.argv[1] == "wait":
        a = w.parse_intermixed_args(sys.argv[2:])
        a.cmd = "wait"
    else:
        a = p.parse_args()
    if a.cmd == "now":
        print(time.clock_gettime_ns(time.CLOCK_MONOTONIC))
        return 0
    if a.cmd == "jumps":
        return cmd_jumps(a)
    return cmd_wait(a)


if __name__ == "__main__":
    sys.exit(main())
