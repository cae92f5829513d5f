#!/usr/bin/env python3
"""Analysis steps of the lab benchmark (scripts/bench/run). Standard library only.

Subcommands (each prints one JSON object on stdout):

  impulse RAW META        the round-trip probe's recording (jack_impulse): per impulse, the frames it took
                          around the loop; and how much of the returned tone is damaged
  stats JSONL             `tutti stats --json` samples (every 0.1 s): per receiving connection the latency
                          and buffer-level series, and the counters' increase over the window
  iostat LOG              JackTrip's `-I 1` lines: its counters' increase over the window
  wav WAV SKIP SECONDS HZ a WAV recording of a tone: damaged blocks over SECONDS, SKIP s after its first sound
  snapshot NAME=PID[,PID...]...
                          one /proc snapshot of each named group of processes: CPU ticks (utime + stime of
                          /proc/PID/stat, all threads) and context switches (voluntary and nonvoluntary,
                          per thread from /proc/PID/task/*/status: /proc/PID/status alone is the main thread's)
  cpu BEFORE AFTER [NAME=SECONDS:PERFCSV...]
                          two snapshots -> per group: CPU seconds, context switches, and system calls (the
                          count of `perf stat -x, -e raw_syscalls:sys_enter` over its SECONDS, when given)
  glitches RESULT         a run's glitch count for the floor sweep (Tutti: lost + late + underruns of
                          every receiving leg; JackTrip: receive underruns of both hosts); "refused" or
                          "unmeasured" when there is no count

Definitions (also stated in the report):
- Impulse delay: the probe plays a single-sample impulse (0.9) on channel 2 every `intervalFrames`; an
  impulse played at frame p is found at the first recorded frame r >= p whose |sample| exceeds 0.3 (then
  the largest sample within the next 16 frames, as resampling spreads it), within one interval. The delay
  is r - p frames. An impulse not found is counted missing.
- Damaged tone: channel 1 carries a 1 kHz sine at half scale. Each 64-frame block of the returned
  channel 1 is fitted with the best sine of that frequency (least squares, any phase); a block is damaged
  when its amplitude is off the median block's by more than 1 dB or the residual is above -40 dB of the fitted sine. That
  catches gaps, clicks and concealment that does not continue the tone; concealment that does continue
  it (a repeated whole period) is not damage and is not counted. Blocks before the first returned impulse
  are start-up and are left out.
"""

import array
import json
import math
import os
import sys


def percentile(values, p):
    """Nearest-rank percentile (p in 0..100) of a non-empty list; None for an empty one."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def summary(values):
    if not values:
        return {"n": 0, "min": None, "median": None, "p95": None, "p99": None, "max": None, "mean": None}
    return {"n": len(values), "min": min(values), "median": percentile(values, 50), "p95": percentile(values, 95),
            "p99": percentile(values, 99), "max": max(values), "mean": sum(values) / len(values)}


def load_raw(path):
    data = array.array("f")
    with open(path, "rb") as file:
        data.frombytes(file.read())
    if sys.byteorder != "little":
        data.byteswap()
    return data


def impulse(raw_path, meta_path):
    meta = json.load(open(meta_path))
    data = load_raw(raw_path)
    frames = len(data) // 2
    tone, clicks = data[0::2], data[1::2]
    rate, interval, first = meta["rate"], meta["intervalFrames"], meta["firstImpulseFrame"]
    delays, missing = [], 0
    for played in range(first, frames, interval):
        end = min(frames, played + interval)
        found = None
        for index in range(played, end):
            if abs(clicks[index]) > 0.3:
                window = range(index, min(end, index + 16))
                found = max(window, key=lambda i: abs(clicks[i]))
                break
        if found is None:
            if played + interval <= frames:
                missing += 1
            continue
        delays.append(found - played)
    delays_ms = [d * 1000 / rate for d in delays]
    # Damaged tone blocks, from the first returned impulse on.
    start = first + (delays[0] if delays else frames)
    result = {"rate": rate, "period": meta["period"], "recordedFrames": frames, "probeXruns": meta["xruns"],
              "impulses": len(delays), "missing": missing, "delayFrames": delays, "roundTripMs": summary(delays_ms),
              "serverCycles": meta.get("serverCycles")}
    result.update(damage(tone, rate, meta["toneHz"], start, frames))
    return result


def damage(tone, rate, hz, start, end, block=64):
    """Damaged 64-frame blocks of a sine of `hz` between frames start and end (see the module doc).

    The reference amplitude is the median fitted amplitude (the sender's level, whatever it is)."""
    omega = 2 * math.pi * hz / rate
    sin_table = [math.sin(omega * i) for i in range(block)]
    cos_table = [math.cos(omega * i) for i in range(block)]
    ss = sum(s * s for s in sin_table)
    cc = sum(c * c for c in cos_table)
    sc = sum(s * c for s, c in zip(sin_table, cos_table))
    det = ss * cc - sc * sc
    fits = []
    for offset in range(start, end - block + 1, block):
        segment = tone[offset:offset + block]
        ys = sum(y * s for y, s in zip(segment, sin_table))
        yc = sum(y * c for y, c in zip(segment, cos_table))
        a = (ys * cc - yc * sc) / det
        b = (yc * ss - ys * sc) / det
        residual = sum((y - a * s - b * c) ** 2 for y, s, c in zip(segment, sin_table, cos_table)) / block
        fits.append((math.hypot(a, b), residual))
    if not fits:
        return {"toneBlocks": 0, "damagedBlocks": None, "damagedMs": None, "toneAmplitude": None}
    reference = percentile([amplitude for amplitude, _ in fits], 50)
    low, high = reference * 10 ** (-1 / 20), reference * 10 ** (1 / 20)
    damaged = sum(1 for amplitude, residual in fits
                  if amplitude < low or amplitude > high or residual > amplitude * amplitude / 2 * 1e-4)
    return {"toneBlocks": len(fits), "damagedBlocks": damaged, "damagedMs": damaged * block * 1000 / rate,
            "toneAmplitude": reference}


def wav_tone(path, skip_seconds, seconds, hz):
    """Channel 1 of a WAV recording of a tone: damaged blocks over `seconds` starting `skip_seconds` after
    the first non-silent sample. Reads 16/24/32-bit PCM; a header whose sizes were never finalised is
    read to the end of the file."""
    with open(path, "rb") as file:
        data = file.read()
    fmt = data.index(b"fmt ") + 8   # PCM or WAVE_FORMAT_EXTENSIBLE: the same leading fields
    channels = int.from_bytes(data[fmt + 2:fmt + 4], "little")
    rate = int.from_bytes(data[fmt + 4:fmt + 8], "little")
    width = int.from_bytes(data[fmt + 14:fmt + 16], "little") // 8
    body = data[data.index(b"data", fmt) + 8:]
    frame_bytes = channels * width
    frames = len(body) // frame_bytes
    scale = float(1 << (8 * width - 1))
    tone = array.array("f", bytes(4 * frames))
    for i in range(frames):
        offset = i * frame_bytes
        tone[i] = int.from_bytes(body[offset:offset + width], "little", signed=True) / scale
    first = next((i for i in range(frames) if abs(tone[i]) > 1e-3), frames)
    start = first + int(skip_seconds * rate)
    end = min(frames, start + int(seconds * rate))
    result = {"rate": rate, "recordedFrames": frames, "firstSoundFrame": first, "analysedFrames": max(0, end - start)}
    result.update(damage(tone, rate, hz, start, end))
    return result


COUNTERS = ("packetsReceived", "packetsLost", "packetsLate", "packetsDuplicated", "packetsReordered",
            "packetsInvalid", "underruns", "concealedFrames", "latencyChanges", "packetsPending")


def stats(path):
    """Receiving connections in a JSONL of `tutti stats --json` snapshots."""
    series = {}
    for line in open(path):
        line = line.strip()
        if line.startswith("{"):  # one object per refresh: {"time": T, "peers": [{"peer": …, "statistics": […]}]}
            report = json.loads(line)
            peers = [dict(peer, time=report["time"]) for peer in report["peers"]]
        elif line.startswith("["):  # before the meter commit: an array of {"peer", "time", "statistics"}
            peers = json.loads(line)
        else:
            continue
        for peer in peers:
            for s in peer["statistics"]:
                if s["role"] != "receiving":
                    continue
                entry = series.setdefault(s["id"], {"source": f"{s['source']['peer']}:{s['source']['port']}",
                                                    "destination": f"{s['destination']['peer']}:{s['destination']['port']}",
                                                    "format": s["format"], "samples": []})
                entry["samples"].append((peer["time"], s))
    connections = []
    for cid, entry in series.items():
        samples = entry["samples"]
        t0 = samples[0][0]
        first, last = samples[0][1], samples[-1][1]
        rate = entry["format"]["sampleRate"]
        increase = {k: last.get(k, 0) - first.get(k, 0) for k in COUNTERS}
        latency = [s["latencyMilliseconds"] for _, s in samples if s.get("latencyMilliseconds") is not None]
        connections.append({
            "id": cid, "source": entry["source"], "destination": entry["destination"], "format": entry["format"],
            "windowSeconds": samples[-1][0] - t0, "samples": len(samples), "states": sorted({s["state"] for _, s in samples}),
            "increase": increase, "concealedMs": increase["concealedFrames"] * 1000 / rate,
            "latencyMs": summary(latency),
            "targetMs": summary([s["targetMilliseconds"] for _, s in samples]),
            "bufferMs": summary([s["bufferMilliseconds"] for _, s in samples]),
            "jitterMs": last.get("jitterMilliseconds"),
            "series": [[round(t - t0, 3), s.get("latencyMilliseconds"), s["bufferMilliseconds"], s["targetMilliseconds"]]
                       for t, s in samples],
        })
    return {"connections": connections}


def iostat(path):
    """JackTrip 1.7 `-I` lines: `DATE PEER send: U/O recv: U/O prot: A/B/C tot: N sync: ... skew: ... autoq: ...`.

    JackTrip prints cumulative counters; the window's figure is the sum of their steps from line to line
    (a counter that goes down was reset, and its new value is the step).
    Field meanings are JackTrip's (recv U/O: receive-side ring buffer underruns/overflows as it counts
    them; tot: packets received); they are reported as printed, not reinterpreted.
    """
    rows = []
    for line in open(path, errors="replace"):
        parts = line.split()
        if "recv:" not in parts or "tot:" not in parts:
            continue
        try:
            send = [int(x) for x in parts[parts.index("send:") + 1].split("/")]
            recv = [int(x) for x in parts[parts.index("recv:") + 1].split("/")]
            prot = [int(x) for x in parts[parts.index("prot:") + 1].split("/")]
            tot = int(parts[parts.index("tot:") + 1])
        except (ValueError, IndexError):
            continue
        rows.append({"send": send, "recv": recv, "prot": prot, "tot": tot})
    if len(rows) < 2:
        return {"lines": len(rows)}

    def increase(values):
        """Sum of the steps between successive lines; a counter that goes down was reset (JackTrip
        resets them when its buffer restarts), so its new value is the step."""
        return sum((b - a) if b >= a else b for a, b in zip(values, values[1:]))
    return {"lines": len(rows), "recvUnderruns": increase([r["recv"][0] for r in rows]),
            "recvOverflows": increase([r["recv"][1] for r in rows]),
            "sendUnderruns": increase([r["send"][0] for r in rows]),
            "protocol": [increase([r["prot"][k] for r in rows]) for k in range(len(rows[0]["prot"]))],
            "packets": increase([r["tot"] for r in rows])}


def snapshot(specs):
    """/proc figures of named process groups (see the module doc); a process that is gone is left out."""
    import time
    out = {"t": time.clock_gettime(time.CLOCK_MONOTONIC), "groups": {}}
    for spec in specs:
        name, pids = spec.split("=", 1)
        group = {"pids": [], "ticks": 0, "tasks": {}}
        for pid in filter(None, pids.split(",")):
            try:
                stat = open(f"/proc/{pid}/stat").read()
                fields = stat[stat.rindex(")") + 2:].split()
                ticks = int(fields[11]) + int(fields[12])   # utime, stime (fields 14, 15 of stat)
                tasks = os.listdir(f"/proc/{pid}/task")
            except (OSError, ValueError, IndexError):
                continue
            group["pids"].append(int(pid))
            group["ticks"] += ticks
            for task in tasks:
                counts = [0, 0]
                try:
                    for line in open(f"/proc/{pid}/task/{task}/status"):
                        if line.startswith("voluntary_ctxt_switches:"):
                            counts[0] = int(line.split()[1])
                        elif line.startswith("nonvoluntary_ctxt_switches:"):
                            counts[1] = int(line.split()[1])
                except OSError:
                    continue   # a thread that ended between the listing and the read
                group["tasks"][task] = counts
        out["groups"][name] = group
    return out


def perf_count(path):
    """The count in a `perf stat -x,` output file, or None (not counted, or perf failed)."""
    try:
        for line in open(path):
            fields = line.strip().split(",")
            if len(fields) > 2 and fields[2].startswith("raw_syscalls:sys_enter"):
                return int(fields[0]) if fields[0].isdigit() else None
    except OSError:
        pass
    return None


def cpu(before_path, after_path, perf_files=()):
    """Two snapshots -> {NAME: {cpuSeconds, wallSeconds, voluntarySwitches, nonvoluntarySwitches,
    switchesPerSecond, syscalls, syscallsPerSecond, processes, threads}}. Reads the old one-line-per-process
    format (`NAME PID UTIME STIME MONOTONIC_S`) too."""
    tick = float(os.sysconf("SC_CLK_TCK"))

    def read(path):
        text = open(path).read()
        if text.lstrip().startswith("{"):
            data = json.loads(text)
            return {name: dict(g, t=data["t"]) for name, g in data["groups"].items()}
        rows = {}
        for line in text.splitlines():
            f = line.split()
            if len(f) == 5:
                rows[f[0]] = {"pids": [int(f[1])], "ticks": int(f[2]) + int(f[3]), "t": float(f[4])}
        return rows
    before, after = read(before_path), read(after_path)
    perf = dict(item.split("=", 1) for item in perf_files)   # NAME=SECONDS:FILE
    out = {}
    for name, b in after.items():
        a = before.get(name)
        if not a or not b["pids"]:
            continue
        wall = b["t"] - a["t"]
        entry = {"cpuSeconds": (b["ticks"] - a["ticks"]) / tick, "wallSeconds": wall, "processes": len(b["pids"])}
        if "tasks" in b:
            # per thread: a thread that started in the window counts from 0; one that ended is left out
            # (its switches in the window are lost: threadsEnded says how many)
            before_tasks = a.get("tasks") or {}
            deltas = [(c[0] - before_tasks.get(t, [0, 0])[0], c[1] - before_tasks.get(t, [0, 0])[1]) for t, c in b["tasks"].items()]
            entry.update({"voluntarySwitches": sum(d[0] for d in deltas), "nonvoluntarySwitches": sum(d[1] for d in deltas),
                          "threads": len(b["tasks"]), "threadsStarted": len(set(b["tasks"]) - set(before_tasks)),
                          "threadsEnded": len(set(before_tasks) - set(b["tasks"]))})
            entry["switchesPerSecond"] = (entry["voluntarySwitches"] + entry["nonvoluntarySwitches"]) / wall if wall > 0 else None
        if name in perf:
            seconds, path = perf[name].split(":", 1)
            count = perf_count(path)
            entry["syscalls"] = count
            entry["syscallsPerSecond"] = count / float(seconds) if count is not None else None
        out[name] = entry
    return out


def glitches(path):
    """The floor sweep's verdict on one run (see the module doc)."""
    result = json.load(open(path))
    if result.get("refused"):
        return "refused"
    if result.get("tool") == "jacktrip":
        counts = [(result.get(k) or {}).get("recvUnderruns") for k in ("iostat", "farIostat")]
        counts = [c for c in counts if c is not None]
        return sum(counts) if len(counts) == 2 else "unmeasured"
    legs = [c for source in ("stats", "returnStats") for c in (result.get(source) or {}).get("connections") or []]
    seen, total = set(), 0
    for c in legs:
        key = (c["id"], c["source"], c["destination"])
        if key in seen:   # both peers' stats may list the same connection
            continue
        seen.add(key)
        inc = c["increase"]
        total += max(0, inc["packetsLost"]) + inc["packetsLate"] + inc["underruns"]
    expected = 2 if result.get("mode") == "jack-loop" else 1
    return total if len(seen) >= expected else "unmeasured"


def main(argv):
    command = argv[1] if len(argv) > 1 else ""
    if command == "impulse" and len(argv) == 4:
        result = impulse(argv[2], argv[3])
    elif command == "wav" and len(argv) == 6:
        result = wav_tone(argv[2], float(argv[3]), float(argv[4]), float(argv[5]))
    elif command == "stats" and len(argv) == 3:
        result = stats(argv[2])
    elif command == "iostat" and len(argv) == 3:
        result = iostat(argv[2])
    elif command == "cpu" and len(argv) >= 4:
        result = cpu(argv[2], argv[3], argv[4:])
    elif command == "snapshot":
        result = snapshot(argv[2:])
    elif command == "glitches" and len(argv) == 3:
        print(glitches(argv[2]))
        return 0
    else:
        print(__doc__, file=sys.stderr)
        return 2
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
