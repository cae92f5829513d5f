#!/usr/bin/env python3
"""Phase agreement between two or more Link-style peers from their sample streams.

Input: files of JSON lines (aalink_peer.py --sample-every output, a Tutti sampler, ...). A line is a
sample when it has "t" (CLOCK_MONOTONIC ns), "tempo" (bpm) and "phase" or "beat"; other lines are
ignored. Optional fields: "src" (stream name; one file may hold several), "quantum", "dt" (ns width
of the bracket the sample was taken in; samples with dt > --max-dt-us are dropped as scheduler
hiccups), "ev" (only "sample"/"state" lines or lines without "ev" are read).

Method: a common grid of instants (every --step-ms) over the time all streams overlap. At each
instant every stream is evaluated from its nearest sample, extrapolated along its own tempo
(phase(g) = phase(s) + (g - t_s) * bpm / 60e9, mod q). An instant is skipped for a stream when its
two neighbouring samples are more than --max-gap-ms apart or carry different tempos (the stream's
timeline changed between them). For every pair (a, b): dphase = phase_a - phase_b wrapped into
[-q/2, q/2) beats (beat magnitudes of Link apps differ by multiples of q by design; only phase is
shared), and dus = dphase * 60e6 / bpm_a microseconds. Reported per pair and pooled over all pairs:
n, median of the signed error (the constant offset), median / p95 / p99 / max of |error|, in beats
and in microseconds.

With --segments-us T, each pair's signed error is also split where it steps by more than T us and
stays there (a re-measured ghost offset: Link replaces it as a step every 30 s), and every segment is
reported on its own: its span, n, signed median, and the spread around that median (p99 and max of
|error - median|). Instants within --guard-ms of a step are left out of both segments.

Usage: agreement.py [options] FILE [FILE...]      (`-` reads stdin)
Output: a one-line summary per pair and a pooled line on stdout; --json FILE writes the figures as
JSON (`--json -`: JSON on stdout, summaries on stderr).
"""

import argparse
import bisect
import json
import math
import sys

from lablog import json_events


def load(paths, max_dt_ns):
    streams = {}
    dropped = {}
    for path in paths:
        fh = sys.stdin if path == "-" else open(path)
        with fh:
            for o in json_events(fh):
                if o.get("ev", "sample") not in ("sample", "state"):
                    continue
                if "t" not in o or "tempo" not in o or ("phase" not in o and "beat" not in o):
                    continue
                key = (path, str(o.get("src", path)))
                if max_dt_ns is not None and o.get("dt") is not None and o["dt"] > max_dt_ns:
                    dropped[key] = dropped.get(key, 0) + 1
                    continue
                ph = o["phase"] if "phase" in o else o["beat"]
                streams.setdefault(key, []).append(
                    (int(o["t"]), float(ph), float(o["tempo"]), o.get("quantum")))
    # names: the src alone when unique, else file:src
    srcs = [k[1] for k in streams]
    named = {}
    for key, samples in streams.items():
        name = key[1] if srcs.count(key[1]) == 1 else "%s:%s" % key
        samples.sort(key=lambda s: s[0])
        named[name] = {"samples": samples, "dropped": dropped.get(key, 0)}
    return named


class Stream:
    def __init__(self, name, samples, q, max_gap_ns):
        self.name = name
        self.t = [s[0] for s in samples]
        self.ph = [s[1] % q for s in samples]
        self.bpm = [s[2] for s in samples]
        self.q = q
        self.max_gap_ns = max_gap_ns

    def at(self, g):
        """(phase, bpm) at CLOCK_MONOTONIC ns g, or None."""
        i = bisect.bisect_right(self.t, g) - 1
        if i < 0 or i + 1 >= len(self.t):
            return None
        t0, t1 = self.t[i], self.t[i + 1]
        if t1 - t0 > self.max_gap_ns:
            return None
        b0, b1 = self.bpm[i], self.bpm[i + 1]
        if abs(b0 - b1) > 1e-9 * max(b0, 1.0):
            return None
        j = i if g - t0 <= t1 - g else i + 1
        return ((self.ph[j] + (g - self.t[j]) * self.bpm[j] / 60e9) % self.q, self.bpm[j])


def wrap(d, q):
    return (d + q / 2) % q - q / 2


def pct(sorted_vals, p):
    if not sorted_vals:
        return None
    k = max(0, min(len(sorted_vals) - 1, math.ceil(p / 100.0 * len(sorted_vals)) - 1))
    return sorted_vals[k]


def stats(dbeats, dus):
    n = len(dus)
    if n == 0:
        return {"n": 0}
    s_us = sorted(dus)
    a_us = sorted(abs(x) for x in dus)
    a_b = sorted(abs(x) for x in dbeats)
    r = lambda x, k=3: None if x is None else round(x, k)
    return {
        "n": n,
        "signed_median_us": r(pct(s_us, 50)),
        "median_us": r(pct(a_us, 50)),
        "p95_us": r(pct(a_us, 95)),
        "p99_us": r(pct(a_us, 99)),
        "max_us": r(a_us[-1]),
        "mean_us": r(sum(dus) / n),
        "median_beats": r(pct(a_b, 50), 9),
        "p99_beats": r(pct(a_b, 99), 9),
        "max_beats": r(a_b[-1], 9),
    }


def split_steps(ts, dus, jump_us, confirm=5, history=50):
    """Indices where the signed error series steps by more than jump_us from the current segment's
    running median (of its last `history` values) and stays beyond it for `confirm` instants."""
    cuts = []
    recent = []
    i = 0
    n = len(dus)
    while i < n:
        if recent:
            ref = sorted(recent)[len(recent) // 2]
            if abs(dus[i] - ref) > jump_us and i + confirm <= n and \
                    all(abs(dus[j] - ref) > jump_us for j in range(i, i + confirm)):
                cuts.append(i)
                recent = []
        recent.append(dus[i])
        if len(recent) > history:
            recent.pop(0)
        i += 1
    return cuts


def segments(ts, dus, jump_us, guard_ns):
    """The series cut at its steps; per segment: span, n, signed median, spread around the median."""
    cuts = split_steps(ts, dus, jump_us)
    bounds = [0] + cuts + [len(dus)]
    out = []
    for k in range(len(bounds) - 1):
        lo_t = ts[bounds[k]] + (guard_ns if k > 0 else 0)
        hi_t = ts[bounds[k + 1] - 1] - (guard_ns if k + 1 < len(bounds) - 1 else 0)
        vals = [d for t, d in zip(ts[bounds[k]:bounds[k + 1]], dus[bounds[k]:bounds[k + 1]]) if lo_t <= t <= hi_t]
        seg = {"start_ns": ts[bounds[k]], "end_ns": ts[bounds[k + 1] - 1], "n": len(vals)}
        if vals:
            med = pct(sorted(vals), 50)
            dev = sorted(abs(d - med) for d in vals)
            seg.update({"signed_median_us": round(med, 3), "p99_us": round(pct(sorted(abs(d) for d in vals), 99), 3),
                        "spread_p99_us": round(pct(dev, 99), 3), "spread_max_us": round(dev[-1], 3)})
        out.append(seg)
    return out


def summary_line(label, s):
    if not s.get("n"):
        return "%s: no common instants" % label
    return ("%s: |dphase| median %.1f us, p99 %.1f us, max %.1f us (signed median %+.1f us; "
            "median %.2e beats, p99 %.2e, max %.2e; n=%d)" % (
                label, s["median_us"], s["p99_us"], s["max_us"], s["signed_median_us"],
                s["median_beats"], s["p99_beats"], s["max_beats"], s["n"]))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("files", nargs="+")
    p.add_argument("--quantum", type=float, help="quantum in beats (default: from the samples, else 4)")
    p.add_argument("--step-ms", type=float, default=1.0, help="grid step (default 1 ms)")
    p.add_argument("--max-gap-ms", type=float, default=5.0,
                   help="skip instants whose neighbouring samples are further apart (default 5)")
    p.add_argument("--max-dt-us", type=float, default=50.0,
                   help="drop samples whose bracket dt is wider (default 50 us; 0 = keep all)")
    p.add_argument("--start-ns", type=int, help="only instants at or after this CLOCK_MONOTONIC ns")
    p.add_argument("--end-ns", type=int, help="only instants before this CLOCK_MONOTONIC ns")
    p.add_argument("--skip-s", type=float, default=0.0, help="skip the first S seconds of the overlap")
    p.add_argument("--settled-only", action="store_true",
                   help="skip instants where the streams' tempos differ (transients of a change)")
    p.add_argument("--ref", help="compare every stream with this one only (default: all pairs)")
    p.add_argument("--segments-us", type=float, metavar="T",
                   help="also split each pair's error where it steps by more than T us (re-measurements)")
    p.add_argument("--guard-ms", type=float, default=5.0,
                   help="with --segments-us: leave out instants this close to a step (default 5)")
    p.add_argument("--json", metavar="FILE", help="write the figures as JSON to FILE ('-' = stdout)")
    a = p.parse_args()

    named = load(a.files, a.max_dt_us * 1000 if a.max_dt_us > 0 else None)
    if len(named) < 2:
        sys.exit("agreement: need at least two sample streams, found %d (%s)" % (len(named), ", ".join(named)))
    q = a.quantum
    if q is None:
        qs = {s[3] for st in named.values() for s in st["samples"] if s[3] is not None}
        if len(qs) > 1:
            sys.exit("agreement: streams use different quanta %s; pass --quantum" % sorted(qs))
        q = float(qs.pop()) if qs else 4.0
    streams = [Stream(n, st["samples"], q, a.max_gap_ms * 1e6) for n, st in named.items() if st["samples"]]
    if len(streams) < 2:
        sys.exit("agreement: need at least two non-empty streams")
    lo = max(s.t[0] for s in streams)
    hi = min(s.t[-1] for s in streams)
    lo += int(a.skip_s * 1e9)
    if a.start_ns is not None:
        lo = max(lo, a.start_ns)
    if a.end_ns is not None:
        hi = min(hi, a.end_ns)
    if a.ref:
        names = [s.name for s in streams]
        if a.ref not in names:
            sys.exit("agreement: no stream %r (have %s)" % (a.ref, ", ".join(names)))
        ref = [s for s in streams if s.name == a.ref][0]
        pairs = [(ref, s) for s in streams if s is not ref]
    else:
        pairs = [(streams[i], streams[j]) for i in range(len(streams)) for j in range(i + 1, len(streams))]

    step = int(a.step_ms * 1e6)
    acc = {(x.name, y.name): ([], [], []) for x, y in pairs}
    skipped = 0
    grid = 0
    g = lo
    while g < hi:
        grid += 1
        vals = {s.name: s.at(g) for s in streams}
        if a.settled_only:
            bpms = [v[1] for v in vals.values() if v is not None]
            if bpms and max(bpms) - min(bpms) > 1e-6:
                skipped += 1
                g += step
                continue
        for x, y in pairs:
            vx, vy = vals[x.name], vals[y.name]
            if vx is None or vy is None:
                continue
            d = wrap(vx[0] - vy[0], q)
            acc[(x.name, y.name)][0].append(d)
            acc[(x.name, y.name)][1].append(d * 60e6 / vx[1])
            acc[(x.name, y.name)][2].append(g)
        g += step

    result = {
        "quantum": q,
        "window_ns": [lo, hi],
        "window_s": round(max(0, hi - lo) / 1e9, 3),
        "grid_instants": grid,
        "skipped_unsettled": skipped,
        "streams": {n: {"samples_in_window": sum(1 for x in st["samples"] if lo <= x[0] < hi),
                        "samples_in_input": len(st["samples"]),
                        "dropped_wide_dt_in_input": st["dropped"]} for n, st in named.items()},
        "pairs": {},
    }
    all_b, all_us = [], []
    lines = []
    for (xn, yn), (db, du, ts) in acc.items():
        s = stats(db, du)
        if a.segments_us is not None and du:
            s["segments"] = segments(ts, du, a.segments_us, a.guard_ms * 1e6)
        result["pairs"]["%s-%s" % (xn, yn)] = s
        all_b += db
        all_us += du
        lines.append(summary_line("%s vs %s" % (xn, yn), s))
        for k, seg in enumerate(s.get("segments", []) if len(s.get("segments", [])) > 1 else []):
            lines.append("  segment %d: %.3f s from %d, n=%d, signed median %s us, spread p99 %s us" % (
                k + 1, (seg["end_ns"] - seg["start_ns"]) / 1e9, seg["start_ns"], seg["n"],
                seg.get("signed_median_us"), seg.get("spread_p99_us")))
    result["all"] = stats(all_b, all_us)
    if len(acc) > 1:
        lines.append(summary_line("all pairs", result["all"]))

    text = "\n".join(lines)
    if a.json == "-":
        print(json.dumps(result))
        print(text, file=sys.stderr)
    else:
        if a.json:
            with open(a.json, "w") as f:
                json.dump(result, f, indent=1)
        print(text)
    return 0 if result["all"].get("n") else 1


if __name__ == "__main__":
    sys.exit(main())
