#!/usr/bin/env python3
"""Builds the bench report from a run's work directory: report.md, report.json and SVG plots.

Usage: report.py WORK OUT [--add]
       (WORK holds meta.json and results/*.json written by scripts/bench/run; --add joins them to the report
       already in OUT (a commit with the same Sources/ and Package.swift) instead of replacing it: `scripts/bench/run --add-to OUT`)

Nothing here measures: every figure comes from results/*.json; a figure that was not measured is shown
as "not measured" with the reason, never filled in.
"""

import datetime
import glob
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import svgplot  # noqa: E402


def load(work):
    results = {}
    for path in sorted(glob.glob(os.path.join(work, "results", "*.json"))):
        results[os.path.basename(path)[:-5]] = json.load(open(path))
    return json.load(open(os.path.join(work, "meta.json"))), results


# What a report keeps of each run that went into it.
RUN_FIELDS = ("commit", "quick", "started", "finished", "only", "args", "tuttiSha256", "dirty", "floorSeconds", "floorConfirm",
              "work")


class MergeRefused(Exception):
    """A run that cannot join the report in OUT (other product sources, or no report there)."""


def merge_runs(previous, meta, results):
    """Joins a run (meta, results) to a report already written (previous: its report.json).

    The report then describes one commit measured in several runs: meta["runs"] lists each run; a result
    measured again replaces the earlier one, and the run that replaced it names it (meta["runs"][i]["replaced"]).
    """
    old_meta, old_results = previous["meta"], previous["results"]
    if old_meta.get("commit") not in (meta.get("commit"), meta.get("sameSourcesAs")):
        raise MergeRefused(f"the report measured commit {old_meta.get('commit')}, this run {meta.get('commit')}, "
                           "whose Sources/ or Package.swift differ: one report measures one product")
    runs = old_meta.get("runs") or [{k: old_meta.get(k) for k in RUN_FIELDS}]
    run = {k: meta.get(k) for k in RUN_FIELDS}
    run["replaced"] = sorted(set(old_results) & set(results))
    # The latest run's description of the machine and tools, but not a figure it could not read (the lab's
    # impairment backend is "unknown" to a part that impaired nothing).
    merged = dict(old_meta)
    merged.update({k: v for k, v in meta.items() if v not in (None, "", "unknown")})
    merged["commit"] = old_meta["commit"]
    merged["quick"] = all(r.get("quick") for r in runs + [run])
    merged["runs"] = runs + [run]
    merged["started"] = min(r["started"] for r in merged["runs"])
    merged["finished"] = max(r["finished"] for r in merged["runs"])
    merged["dirty"] = any(r.get("dirty") for r in merged["runs"])
    scenarios = []
    for r in merged["runs"]:
        scenarios += [s for s in (r.get("only") or "").split() if s not in scenarios]
    merged["only"] = " ".join(scenarios)
    return merged, {**old_results, **results}


def fmt(value, digits=2, unit=""):
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}{unit}"
    return f"{value}{unit}"


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def receiving(result, destination="h2:in"):
    """The receiver's stats of the h1 -> h2 stream of a Tutti run. (`tutti stats --peer` also answers for the
    peers it knows, so with the JACK loop both directions are in the file: pick by destination.)"""
    connections = (result.get("stats") or {}).get("connections") or []
    chosen = [c for c in connections if c["destination"] == destination]
    return chosen[0] if chosen else None


def loop_frames(results, frames):
    """The JACK graph's feedback delay on the far host, in frames: the median (tutti-bench-analyze's) of its probe."""
    probe = (results.get(f"jackloop-{frames}") or {}).get("probe") or {}
    median = (probe.get("roundTripMs") or {}).get("median")
    return round(median * probe["rate"] / 1000) if median is not None else None


def one_way(result, results):
    """(RTT - the JACK graph's feedback delay on the far host) / 2 per impulse, in ms, for the plots; None if no probe."""
    probe = result.get("probe")
    if not probe or not probe.get("delayFrames"):
        return None
    loop = loop_frames(results, result["frames"])
    if loop is None:
        return None
    rate = probe["rate"]
    return [(d - loop) / 2 * 1000 / rate for d in probe["delayFrames"]]


def one_way_summary(result, results):
    """The one-way summary: (the probe's round-trip figures - the far host's feedback delay) / 2. A linear map
    keeps percentiles, so these are tutti-bench-analyze's (the one percentile definition); None if no probe."""
    probe = result.get("probe") or {}
    round_trip = probe.get("roundTripMs") or {}
    loop = loop_frames(results, result["frames"])
    if not round_trip.get("n") or loop is None:
        return None
    loop_ms = loop * 1000 / probe["rate"]
    return dict({"n": round_trip["n"]}, **{k: (round_trip[k] - loop_ms) / 2 for k in ("median", "p95", "p99", "max")})


def both_ways(t):
    """The mean of the two legs' median stats latencies (what a round trip halves), or None."""
    a, b = t.get("statsLatencyMs"), t.get("returnStatsLatencyMs")
    if not a or not b or a.get("median") is None or b.get("median") is None:
        return None
    return (a["median"] + b["median"]) / 2


def cycles_cell(pair):
    """'h1 p1…p99 / h2 p1…p99' of the JACK servers' cycle starts around their line, in ms."""
    def one(c):
        if not c:
            return "–"
        r = c["residualMs"]
        return f"{r['p1']:.2f}…{r['p99']:.2f} ({c['ppm']:+.0f} ppm)"
    return f"{one(pair[0])} / {one(pair[1])}"


def returning(result):
    """The h2 -> h1 leg of a JACK-loop Tutti run (h1's stats; h2's may list it too), or None."""
    for source in ("returnStats", "stats"):
        for c in (result.get(source) or {}).get("connections") or []:
            if c["destination"] == "h1:ret":
                return c
    return None


def tutti_figures(result, results):
    c = receiving(result)
    back = returning(result)
    inc = (c or {}).get("increase") or {}
    # Counters of the whole loop (both legs) where it was closed, as the damaged audio is of the round trip.
    legs = [x for x in (c, back) if x]
    both = {key: sum(((x.get("increase") or {}).get(key, 0) for x in legs)) for key in ("packetsLost", "packetsLate", "underruns")}
    concealed_both = sum((x.get("concealedMs") or 0) for x in legs)
    ow = one_way_summary(result, results)
    tone = result.get("tone") or result.get("probe") or {}
    return {
        "statsLatencyMs": (c or {}).get("latencyMs"),
        "returnStatsLatencyMs": (back or {}).get("latencyMs"),
        "legs": len(legs),
        "loopLostLate": both["packetsLost"] + both["packetsLate"] if legs else None,
        "loopUnderruns": both["underruns"] if legs else None,
        "loopConcealedMs": concealed_both if legs else None,
        "serverCycles": ((result.get("probe") or {}).get("serverCycles"), result.get("farServerCycles")),
        "impulseOneWayMs": ow,
        "lostLate": (inc.get("packetsLost", 0) + inc.get("packetsLate", 0)) if c else None,
        "underruns": inc.get("underruns") if c else None,
        "concealedMs": (c or {}).get("concealedMs"),
        "latencyChanges": inc.get("latencyChanges") if c else None,
        "targetMs": (c or {}).get("targetMs"),
        "damagedMs": tone.get("damagedMs"),
        "damagedSource": "recording of the returned probe tone" if result.get("probe") else "WAV recording at the receiver",
        "states": (c or {}).get("states"),
    }


def jacktrip_figures(result, results):
    ow = one_way_summary(result, results)
    probe = result.get("probe") or {}
    io = result.get("iostat") or {}
    far = result.get("farIostat") or {}

    def loop(key, index=None):
        values = [(x.get(key) if index is None else (x.get(key) or [None])[index]) for x in (io, far) if x]
        values = [v for v in values if v is not None]
        return sum(values) if values else None
    return {
        "impulseOneWayMs": ow,
        "roundTripMs": probe.get("roundTripMs"),
        "missingImpulses": probe.get("missing"),
        "damagedMs": probe.get("damagedMs"),
        "recvUnderruns": io.get("recvUnderruns"),
        "recvOverflows": io.get("recvOverflows"),
        "protLost": (io.get("protocol") or [None])[0],
        "loopRecvUnderruns": loop("recvUnderruns"),
        "loopProtLost": loop("protocol", 0),
        "options": result.get("options") or "",
        "probeXruns": probe.get("probeXruns"),
    }


def cpu_per_stream(result):
    """ms of CPU per second of audio per stream, send + receive (see the report's method section)."""
    cpu = result.get("cpu") or {}
    window = result.get("windowSeconds")
    n = result.get("streams") or 1
    if not cpu or not window:
        return None
    if result["tool"] == "tutti":
        if "sender" not in cpu or "receiver" not in cpu:
            return None
        total = cpu["sender"]["cpuSeconds"] + cpu["receiver"]["cpuSeconds"]
        wall = cpu["receiver"]["wallSeconds"]
        return {"total": total / wall / n * 1000, "sender": cpu["sender"]["cpuSeconds"] / wall / n * 1000,
                "receiver": cpu["receiver"]["cpuSeconds"] / wall / n * 1000}
    jt = [v for k, v in cpu.items() if k.startswith("jacktrip")]
    if not jt:
        return None
    wall = jt[0]["wallSeconds"]
    total = sum(v["cpuSeconds"] for v in jt)
    jackd = {k: v["cpuSeconds"] / v["wallSeconds"] * 1000 for k, v in cpu.items() if k.startswith("jackd")}
    # N pairs carry 2N streams (h1 -> h2 and the loop back), each sent by one jacktrip and received by another.
    return {"total": total / wall / (2 * n) * 1000, "jackdMsPerSecond": jackd}


def scale_dropouts(result):
    connections = (result.get("stats") or {}).get("connections") or []
    if not connections:
        return None
    lost_late = sum(c["increase"]["packetsLost"] + c["increase"]["packetsLate"] for c in connections)
    underruns = sum(c["increase"]["underruns"] for c in connections)
    concealed = sum(c["concealedMs"] for c in connections)
    playing = sum(1 for c in connections if c["states"] == ["playing"])
    return {"lostLate": lost_late, "underruns": underruns, "concealedMs": concealed, "playing": playing,
            "connections": len(connections)}


# A stream count "drops audio" when more than this share of its packets came lost or late, or a connection
# stopped playing: a single late packet on this shared machine (other builds, the lab's own processes) is
# not the load of N streams. The raw counts are in the scale table.
SCALE_DROP_SHARE = 0.001


def scale_drops_audio(result, n):
    d = scale_dropouts(result)
    if not d:
        return False
    packets = n * result["windowSeconds"] * 48000 / 64
    return d["lostLate"] > SCALE_DROP_SHARE * packets or d["playing"] < n


# ---- floor, CPU and scale (issue 11) -------------------------------------------------------------------

def floor_runs(results):
    """{(kind, frames, net): [(step, result), ...] in ladder order} of the floor sweep."""
    ladders = {}
    for key, r in results.items():
        if key.startswith("floor-") and r.get("floor"):
            kind, frames, net = r["floor"].split()
            ladders.setdefault((kind, int(frames), net), []).append((r.get("step"), key, r))
    for runs in ladders.values():
        runs.sort(key=lambda x: float(x[0]))
    return ladders


def floor_latency(result, results):
    """(one-way latency summary, method) of a floor run: the impulse for a JACK loop, else the stats."""
    if result.get("tool") == "jacktrip":
        return one_way_summary(result, results), "impulse"
    if result.get("mode") == "jack-loop":
        ow = one_way_summary(result, results)
        if ow:
            return ow, "impulse"
    c = receiving(result)
    return ((c or {}).get("latencyMs")), "stats"


def floor_setting(result):
    if result.get("tool") == "jacktrip":
        return f"-q {result.get('queue')}" + (f" {result['options']}" if result.get("options") else "")
    return f"{result.get('latency')} ms ({result.get('step')} packets)"


def cycles_of(result):
    """The JACK servers' cycle wander (h1, h2) of a run, or (None, None)."""
    return ((result.get("probe") or {}).get("serverCycles"), result.get("farServerCycles"))


def cycles_spread(pair):
    """The widest p1…p99 span of the two JACK servers' cycle starts around their line, ms."""
    return max((c["residualMs"]["p99"] - c["residualMs"]["p1"] for c in pair if c), default=0)


def floor_summary(results):
    """Per ladder: the first glitch-free run, its setting and latency; the ladder's verdicts."""
    out = {}
    for (kind, frames, net), runs in floor_runs(results).items():
        verdicts = [(step, r.get("glitches")) for step, _, r in runs]
        found = next(((step, key, r) for step, key, r in runs if r.get("glitches") == "0"), None)
        entry = {"kind": kind, "frames": frames, "network": net, "ladder": verdicts, "found": None}
        if found:
            lat, method = floor_latency(found[2], results)
            entry["found"] = {"step": found[0], "run": found[1], "setting": floor_setting(found[2]), "method": method,
                              "oneWayMs": lat, "cycles": cycles_of(found[2])}
        else:
            widest = max(((step, cycles_of(r)) for step, _, r in runs if any(cycles_of(r))),
                         key=lambda sc: cycles_spread(sc[1]), default=None)
            if widest:
                entry["widest"] = {"step": widest[0], "cycles": widest[1]}
        out[f"{kind}-{frames}-{net}"] = entry
    return out


def cpu_figures(result):
    """Per stream figures of a cpu-/scale- run: CPU ms per s of audio, context switches and system calls
    per second, for each process group and the tool's total (JackTrip: its processes; + jackd apart)."""
    cpu = result.get("cpu") or {}
    n = result.get("streams") or 1
    if result["tool"] == "tutti":
        n = result.get("connected") or n
    groups = {}
    for name, c in cpu.items():
        wall = c.get("wallSeconds") or 0
        if wall <= 0:
            continue
        groups[name] = {"msPerSecond": c["cpuSeconds"] / wall * 1000, "switchesPerSecond": c.get("switchesPerSecond"),
                        "syscallsPerSecond": c.get("syscallsPerSecond"), "threads": c.get("threads"),
                        "processes": c.get("processes")}

    def total(names, key):
        values = [groups[g][key] for g in names if g in groups]
        return sum(values) if values and all(v is not None for v in values) else None
    tool = [g for g in groups if not g.startswith("jackd")]
    servers = [g for g in groups if g.startswith("jackd")]
    out = {"streams": n, "groups": groups}
    for key in ("msPerSecond", "switchesPerSecond", "syscallsPerSecond"):
        t = total(tool, key)
        out[key] = t / n if t is not None and n else None
        j = total(servers, key) if servers else None
        out["jackd" + key[0].upper() + key[1:]] = j / n if j is not None and n else None
        out["withJackd" + key[0].upper() + key[1:]] = (t + j) / n if t is not None and j is not None and n else out[key]
    return out


def cpu_summary(results):
    """Tutti against JackTrip per stream at each stream count both ran; the headline at 8 streams (else the largest)."""
    tutti = {r["streams"]: r for k, r in results.items() if k.startswith("cpu-tutti-")}
    plain = {r["streams"]: r for k, r in results.items() if k.startswith("cpu-tuttiplain-")}
    jt = {}
    for k, r in results.items():
        if k.startswith("cpu-jacktrip-"):
            jt[int(k.rsplit("-", 1)[1])] = r   # by the stream count asked for (pairs = ⌈N/2⌉)
    rows = []
    for n in sorted(set(tutti) | set(jt)):
        t = cpu_figures(tutti[n]) if n in tutti else None
        j = cpu_figures(jt[n]) if n in jt else None
        p = cpu_figures(plain[n]) if n in plain else None
        rows.append({"streams": n, "tutti": t, "jacktrip": j,
                     "ratio": ratio(t and t["msPerSecond"], j and j["msPerSecond"]),
                     "ratioWithJackd": ratio(t and t["msPerSecond"], j and j["withJackdMsPerSecond"]),
                     "tuttiPlain": p,
                     "plainRatio": ratio(p and p["msPerSecond"], j and j["msPerSecond"]),
                     "plainRatioWithJackd": ratio(p and p["msPerSecond"], j and j["withJackdMsPerSecond"])})
    return rows


def scale_summary(results):
    """Pinned-receiver steps: per step counters, and the largest step with every stream connected and 0 lost or late."""
    steps = []
    for k, r in results.items():
        if not k.startswith("scale-tutti-"):
            continue
        d = scale_dropouts(r) or {}
        c = cpu_figures(r)
        steps.append({"streams": r["streams"], "connected": r.get("connected"), "refused": r.get("refused", 0),
                      "refusal": r.get("refusal") or "", "playing": d.get("playing"), "lostLate": d.get("lostLate"),
                      "underruns": d.get("underruns"), "concealedMs": d.get("concealedMs"),
                      "receiverCpuMsPerSecond": (c["groups"].get("receiver") or {}).get("msPerSecond"),
                      "senderCpuMsPerSecond": (c["groups"].get("sender") or {}).get("msPerSecond"),
                      "senderCoreCount": len(cores_of(r.get("senderCores"))) or None,
                      "receiverCore": r.get("receiverCore"), "senderCores": r.get("senderCores"), "windowSeconds": r.get("windowSeconds")})
    steps.sort(key=lambda s: s["streams"])
    clean = [s["streams"] for s in steps if s["connected"] == s["streams"] and s["lostLate"] == 0 and s["playing"] == s["streams"]]
    return {"steps": steps, "largestClean": max(clean) if clean else None}


def cores_of(prefix):
    """The cores in a `taskset -c LIST` prefix ("" -> [])."""
    cores = []
    for part in (prefix or "").split()[-1:] if prefix else []:
        for item in part.split(","):
            if "-" in item:
                low, high = item.split("-")
                cores += range(int(low), int(high) + 1)
            elif item.isdigit():
                cores.append(int(item))
    return cores


def ladder_cell(ladder):
    return " · ".join(f"{step}: {verdict}" for step, verdict in ladder)


def wander_cell(cycles):
    """The JACK servers' cycle starts off their line (p1…p99 ms), h1 / h2."""
    if not cycles or not any(cycles):
        return "–"
    return cycles_cell(cycles)


def ladder_wander_cell(floor):
    """The wander of the glitch-free run; without one, that of the ladder's step whose servers strayed most."""
    if floor["found"]:
        return wander_cell(floor["found"].get("cycles"))
    widest = floor.get("widest")
    return f"widest, at {widest['step']}: {wander_cell(widest['cycles'])}" if widest else "–"


def floor_section(md, summary, results, meta):
    floors = summary.get("floor") or {}
    if not floors:
        return
    md.append("## Lowest glitch-free latency\n")
    md.append(f"Each tool's buffer setting goes up a ladder, {meta.get('floorSeconds')} s a setting, until a setting plays "
              "with **no glitch**: Tutti 0 lost, late and underruns (both legs of the JACK loop; the paced path's one leg, "
              "`tone` → `null`, by its stats), JackTrip 0 receive underruns on both hosts (its `-I 1` lines). Tutti's "
              "setting is `--latency` in packets; JackTrip's `-q`, with its default buffer and `--bufstrategy 1`. A "
              "setting the binary refuses is shown as `refused` (Tutti refuses targets below its floor). The ladder stops "
              "at the first glitch-free setting, so a row's latency is the lowest glitch-free one found. One-way latency: "
              "the impulse ((round trip − far JACK loop) ÷ 2) for the JACK loops, the capture-to-playout stats for the "
              "paced path (no JACK). `jitter05` is `scripts/lab impair --delay 0.5 --jitter 0.5` on both hosts' egress "
              "(0–1 ms uniform). Beside each: how far the JACK servers' cycle starts strayed from their line in the "
              "glitch-free run (p1…p99 ms, h1 / h2), or, in a ladder without one, in its step where they strayed most.\n")
    md.append("| frames | network | tool, path | ladder (setting: glitches) | lowest glitch-free setting | one-way median / p99 (ms) | method | JACK servers' cycle wander h1 / h2 |")
    md.append("|---|---|---|---|---|---|---|---|")
    names = {"tutti": "Tutti, JACK loop", "paced": "Tutti, paced (no JACK)", "jacktrip": "JackTrip"}
    order = ["tutti", "paced", "jacktrip"]
    for key in sorted(floors, key=lambda k: (floors[k]["frames"], floors[k]["network"] != "clean",
                                              order.index(floors[k]["kind"]) if floors[k]["kind"] in order else 9, floors[k]["kind"])):
        f = floors[key]
        found = f["found"]
        name = names.get(f["kind"], f"JackTrip `--bufstrategy {f['kind'][len('jacktrip-bs'):]}`")
        lat = (found or {}).get("oneWayMs")
        md.append(f"| {f['frames']} | {f['network']} | {name} | {ladder_cell(f['ladder'])} | "
                  f"{found['setting'] if found else 'none in the ladder'} | "
                  f"{(fmt(lat.get('median')) + ' / ' + fmt(lat.get('p99'))) if lat else '–'} | {(found or {}).get('method', '–')} | "
                  f"{ladder_wander_cell(f)} |")
    for confirm in summary.get("floorConfirm") or []:
        lat = confirm.get("oneWayMs") or {}
        span = f"{confirm['seconds'] / 60:.0f} min" if confirm["seconds"] >= 60 else f"{confirm['seconds']} s"
        wander = (f"; JACK servers' cycle wander {wander_cell(confirm.get('cycles'))}"
                  if confirm["path"] in ("tutti", "jacktrip") else "")
        where = "its lowest clean" if confirm.get("lowest", True) else "a chosen (`--floor-confirm-packets`)"
        md.append(f"\n**Confirmation, {names.get(confirm['path'], confirm['path'])}** ({span} at {where} "
                  f"64-frame setting, {confirm['setting']}): one-way {fmt(lat.get('median'))} / {fmt(lat.get('p99'))} ms "
                  f"(median / p99, {confirm['method']}), **{confirm['glitches']} glitches**{wander}. "
                  + ("Tutti's goal: ≤ 2.0 ms with 0 glitches; JackTrip's minutes, run the same way, show what this machine "
                     "lets a tool hold.\n" if confirm["path"] == "jacktrip" else "Goal: ≤ 2.0 ms with 0 glitches.\n"))
        machine = confirm.get("machineWake") or {}
        if machine:
            by_cpu = machine.get("lateByCpu") or {}
            stolen = (machine.get("steal") or {}).get("milliseconds") or {}
            pinned = ", ".join(f"CPU {c}: {by_cpu.get(c, 0)}" for c in sorted(set(by_cpu) | set(stolen), key=int)) or "none"
            steal = ", ".join(f"CPU {c}: {ms:g} ms" for c, ms in sorted(stolen.items(), key=lambda kv: int(kv[0]))) or "not read"
            md.append(f"- The machine over the same {span}: probe threads pinned to each CPU (SCHED_FIFO "
                      f"{machine.get('priority')}, the paced clock's {machine.get('periodMicroseconds')} µs grid) woke later "
                      f"than 667 µs {machine['over']['667']} times ({pinned}), later than a whole packet "
                      f"{machine['over']['1333']} times, {fmt(machine['latenessMicroseconds']['max'], 1)} µs at worst; "
                      f"the hypervisor took {steal} (`/proc/stat` steal).\n")
        for leg in confirm.get("episodes") or []:
            wakes = (f"the sender's clock woke late {leg['senderLateWakes']} times and the receiver's "
                     f"{leg['receiverLateWakes']}, " if leg["peerClocks"] else "")
            peer = (f"{leg['withPeerLateWake']} with a late wake-up (over half a period) of a peer's device clock, "
                    if leg["peerClocks"] else "")
            md.append(f"- {leg['leg']}: its glitches came in **{len(leg['episodes'])} episodes**: {peer}"
                      f"{leg['withProbeLateWake']} with a late wake-up of a probe thread (a bare SCHED_FIFO thread run alongside, "
                      "`wake_lateness`: over 667 µs), "
                      f"{leg.get('withSteal', 0)} with time the hypervisor took (steal), "
                      f"{leg.get('withMachineEvidence', leg['withProbeLateWake'])} with either, "
                      f"**{leg['unexplained']} with none**. Over the run {wakes}the probes {leg['probeLateWakes']} times, "
                      f"and {leg.get('stealMilliseconds', 0):g} ms were stolen. "
                      "Episodes (s into the run: glitches, sender/receiver clock late wake-ups, probe late wake-ups, "
                      "the latest in µs and the CPUs of the probes that woke late, stolen ms): "
                      + (", ".join(f"{e['start']:.1f}: {e['glitches']}, "
                                   + (f"{e['senderLateWakes']}/{e['receiverLateWakes']}, " if leg["peerClocks"] else "–/–, ")
                                   + f"{e['probeLateWakes']} ({e['probeWorstMicroseconds']:.0f}"
                                   + (f"; CPU {'+'.join(str(c) for c in e['probeCPUs'])}" if e.get('probeCPUs') else "")
                                   + f"), {e.get('stealMilliseconds', 0):g}"
                                   for e in leg["episodes"][:40]) or "none")
                      + (" …" if len(leg["episodes"]) > 40 else "") + "\n")
    wake = summary.get("machineWake")
    if wake:
        late = wake["latenessMicroseconds"]
        over = wake["over"]
        md.append(f"\n**The machine's own floor** (`scripts/bench/wake_lateness.c`, {wake['seconds']:g} s with nothing else "
                  f"running): {'one thread' if wake.get('threads', 1) == 1 else str(wake['threads']) + ' threads, one pinned to each CPU,'} at SCHED_FIFO "
                  f"{wake['priority']}{'' if wake['realtime'] else ' (refused: an ordinary thread)'}, sleeping to a grid of "
                  f"{wake['periodMicroseconds']} µs as Tutti's paced clock does, woke late by {fmt(late['p50'], 1)} µs "
                  f"(median), {fmt(late['p99'], 1)} (p99), {fmt(late['p999'], 1)} (p99.9), {fmt(late['max'], 1)} (max) over "
                  f"{wake['wakes']} wake-ups: {over['250']} later than 250 µs, {over['667']} later than 667 µs (the slack of "
                  f"a 1.5-packet target at 64 frames), {over['1333']} later than a whole 64-frame packet. Every such wake-up "
                  "of a sender's or receiver's clock is a packet that arrives, or a read that comes, that much late.\n")
    md.append("")


def cpu_section(md, rows, meta):
    if not rows:
        return
    md.append("## CPU per stream\n")
    md.append("Tutti: one sender peer on h1 with N `tone` sender ports (one stream each) into one receiver peer on h2 "
              f"with ⌈N/{meta.get('portConnections', 64)}⌉ `null` receiver ports, 64-frame L24 packets, fixed 5 ms, no "
              "Link, no JACK. JackTrip: ⌈N/2⌉ P2P pairs (`jacktrip -c` on h1, `jacktrip -s` on h2 looping back in its "
              "JACK graph), so 2⌈N/2⌉ streams, over one `jackd` dummy server per host. Per process group over the window: "
              "CPU time (utime + stime from /proc/PID/stat), context switches (voluntary + nonvoluntary, summed over "
              "/proc/PID/task/*/status), system calls (`perf stat -e raw_syscalls:sys_enter -p PIDS`"
              f"{'' if meta.get('perf') else ': perf did not work here, so not measured'}). Figures per stream are the "
              "group's figure ÷ its streams; CPU in ms per second of audio.\n")
    md.append("| streams | Tutti ms/s per stream | JackTrip ms/s per stream | + jackd | JackTrip + jackd | Tutti / JackTrip | Tutti / (JackTrip + jackd) | switches/s per stream: Tutti / JackTrip (+ jackd) | system calls/s per stream: Tutti / JackTrip (+ jackd) |")
    md.append("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        t, j = r["tutti"] or {}, r["jacktrip"] or {}
        md.append(f"| {r['streams']} | {fmt(t.get('msPerSecond'))} | {fmt(j.get('msPerSecond'))} | {fmt(j.get('jackdMsPerSecond'))} | "
                  f"{fmt(j.get('withJackdMsPerSecond'))} | {fmt(r['ratio'])} | {fmt(r['ratioWithJackd'])} | "
                  f"{fmt(t.get('switchesPerSecond'), 0)} / {fmt(j.get('switchesPerSecond'), 0)} ({fmt(j.get('withJackdSwitchesPerSecond'), 0)}) | "
                  f"{fmt(t.get('syscallsPerSecond'), 0)} / {fmt(j.get('syscallsPerSecond'), 0)} ({fmt(j.get('withJackdSyscallsPerSecond'), 0)}) |")
    for r in rows:
        p = r.get("tuttiPlain")
        if p:
            md.append(f"\n**Like for like at {r['streams']} streams.** JackTrip neither encrypts nor follows the sender's "
                      "clock; Tutti by default does both (SRTP in a members-only session, drift compensation by resampling). "
                      "The same Tutti run in an open session with `--no-drift-compensation`: "
                      f"{fmt(p.get('msPerSecond'))} ms/s per stream, {fmt(r.get('plainRatio'))} of JackTrip's "
                      f"({fmt(r.get('plainRatioWithJackd'))} of JackTrip + jackd), against {fmt((r['tutti'] or {}).get('msPerSecond'))} "
                      "ms/s by default in the same run.")
    md.append("\nEach process group's own figures (whole group, not per stream):\n")
    md.append("| streams | tool | group | processes | threads | CPU ms/s | context switches/s | system calls/s |")
    md.append("|---|---|---|---|---|---|---|---|")
    for r in rows:
        for tool, figures in (("Tutti", r["tutti"]), ("Tutti, open, no drift compensation", r.get("tuttiPlain")),
                              ("JackTrip", r["jacktrip"])):
            for name, g in ((figures or {}).get("groups") or {}).items():
                md.append(f"| {r['streams']} | {tool} | {name} | {fmt(g.get('processes'))} | {fmt(g.get('threads'))} | "
                          f"{fmt(g['msPerSecond'], 1)} | {fmt(g.get('switchesPerSecond'), 0)} | {fmt(g.get('syscallsPerSecond'), 0)} |")
    md.append("")


def scale_section(md, scale, meta):
    if not scale["steps"]:
        return
    md.append("## Scale: streams into one receiver core\n")
    md.append(f"N `tone` sender ports on one peer on h1 (`{scale['steps'][0].get('senderCores') or 'not pinned'}`: the other cores) "
              f"into one receiver peer on h2 pinned to one core (`{scale['steps'][0].get('receiverCore') or 'taskset'}`), ⌈N/{meta.get('portConnections', 64)}⌉ `null` "
              "receiver ports, 64-frame L24 stereo packets, fixed 5 ms. Lost and late packets are the receiver's counters "
              "over the window; a connection the binary refuses (a full port) is counted as refused. Goal: ≥ 128 streams "
              "with 0 lost or late.\n")
    md.append("| N | connected | refused | playing | lost + late | underruns | concealed (ms) | receiver CPU (ms/s, of its one core) | sender CPU (ms/s) |")
    md.append("|---|---|---|---|---|---|---|---|---|")
    saturated = []
    for s in scale["steps"]:
        cores = s.get("senderCoreCount")
        if cores and (s["senderCpuMsPerSecond"] or 0) >= 900 * cores:
            saturated.append(s["streams"])
        md.append(f"| {s['streams']} | {s['connected']} | {s['refused']}{(' (`' + s['refusal'][:80] + '`)') if s['refused'] else ''} | "
                  f"{fmt(s['playing'])} | {fmt(s['lostLate'])} | {fmt(s['underruns'])} | {fmt(s['concealedMs'], 1)} | "
                  f"{fmt(s['receiverCpuMsPerSecond'], 0)} | {fmt(s['senderCpuMsPerSecond'], 0)} |")
    md.append(f"\nLargest step with every stream connected, playing, and 0 lost or late: **{scale['largestClean'] or 'none'}**.\n")
    if saturated:
        md.append(f"**The sender was saturated** at N = {', '.join(map(str, saturated))} (its CPU ≥ 90 % of the cores it may use): "
                  "packets it sent late count as late at the receiver, so those steps measure the sender as much as the "
                  "receiver.\n")


def main(work, out, add=False):
    meta, results = load(work)
    if add:
        previous = os.path.join(out, "report.json")
        if not os.path.exists(previous):
            raise MergeRefused(f"no report to add to: {previous} does not exist")
        meta, results = merge_runs(json.load(open(previous)), meta, results)
    os.makedirs(out, exist_ok=True)
    md = []
    js = {"meta": meta, "results": results, "summary": {}}
    started = datetime.datetime.fromtimestamp(meta["started"], datetime.timezone.utc)
    duration = meta["finished"] - meta["started"]
    md.append(f"# Lab benchmark: Tutti and JackTrip side by side{' (quick)' if meta['quick'] else ''}\n")
    md.append("| | |\n|---|---|")
    md.append(f"| measured commit | `{meta['commit']}`{' (working tree dirty)' if meta['dirty'] else ''} |")
    runs = meta.get("runs") or []
    if len(runs) > 1:
        for number, run in enumerate(runs, 1):
            begun = datetime.datetime.fromtimestamp(run["started"], datetime.timezone.utc)
            took = run["finished"] - run["started"]
            replaced = run.get("replaced") or []
            md.append(f"| run {number} of {len(runs)} | {begun:%Y-%m-%d %H:%M} UTC, {took // 60} min {took % 60} s: "
                      f"{run.get('only')}; `scripts/bench/run {run.get('args') or '(arguments not recorded)'}`; "
                      f"tutti sha256 {run.get('tuttiSha256')}…"
                      + (f"; checkout `{run['commit'][:9]}` (its Sources/ and Package.swift are the measured commit's)"
                         if run.get("commit") and run["commit"] != meta["commit"] else "")
                      + (f"; measured again here: {', '.join(replaced)}" if replaced else "") + " |")
    else:
        md.append(f"| run | {started:%Y-%m-%d %H:%M} UTC, {duration // 60} min {duration % 60} s |")
    preemption = meta.get("preemption")
    md.append(f"| machine | {meta['nproc']} cores ({meta['machine']}), kernel {meta['kernel']}"
              + (f" (preemption: {preemption})" if preemption else "")
              + "; shared with other builds: figures are noisy |")
    md.append(f"| network impairment | `scripts/lab impair` backend: **{meta['backend']}** (each run's exact settings are in report.json) |")
    shas = sorted({run.get("tuttiSha256") for run in runs} | {meta["tuttiSha256"]})
    md.append(f"| tutti | release build, sha256 {' / '.join(s + '…' for s in shas)}"
              f"{' (one build per part: the same sources built again)' if len(shas) > 1 else ''}; JACK ports: {'yes' if meta['tuttiJack'] else 'no (see Latency)'} |")
    md.append(f"| JackTrip | {meta['jacktrip']}; jackd2 {meta['jackd']} (`jackd --realtime -P 80 -d dummy -r 48000 -p FRAMES`, one per lab host) |")
    md.append(f"| seeds, durations | impairment seed {meta['seed']} (h1 egress) and {meta['seed'] + 1} (h2 egress); "
              f"{meta['window']} s measured per run after {meta['settle']} s settling; clock {meta['clockWindow']} s |")
    md.append("")

    # ---- latency -----------------------------------------------------------------------------------
    lat_rows = []
    for key in sorted(k for k in results if k.startswith("latency-tutti-")):
        _, _, frames, net = key.split("-", 3)
        t = tutti_figures(results[key], results)
        j_result = results.get(f"latency-jacktrip-{frames}-{net}")
        j = jacktrip_figures(j_result, results) if j_result else None
        lat_rows.append((int(frames), net, t, j, results[key], j_result))
    lat_rows.sort(key=lambda r: (r[0], r[1]))

    def lat_cell(s, key="median"):
        return fmt(s[key]) if s else "–"

    summary = {}
    row64 = next((r for r in lat_rows if r[0] == 64 and r[1] == "clean"), None)
    if row64:
        t, j = row64[2], row64[3]
        summary["oneWayLatency64Ms"] = {
            "tuttiStats": (t["statsLatencyMs"] or {}).get("median"),
            "tuttiStatsBothWays": both_ways(t),
            "tuttiImpulse": (t["impulseOneWayMs"] or {}).get("median") if t["impulseOneWayMs"] else None,
            "jacktripImpulse": (j["impulseOneWayMs"] or {}).get("median") if j and j["impulseOneWayMs"] else None}
    imp2 = {k: results.get(f"impair-{k}-jitter2") for k in ("tutti-fixed", "tutti-adaptive", "jacktrip")}
    if imp2["tutti-fixed"] or imp2["jacktrip"]:
        tf = tutti_figures(imp2["tutti-fixed"], results) if imp2["tutti-fixed"] else {}
        ta = tutti_figures(imp2["tutti-adaptive"], results) if imp2["tutti-adaptive"] else {}
        jj = jacktrip_figures(imp2["jacktrip"], results) if imp2["jacktrip"] else {}
        summary["jitter2"] = {"tuttiFixedDamagedMs": tf.get("damagedMs"), "tuttiAdaptiveDamagedMs": ta.get("damagedMs"),
                              "jacktripDamagedMs": jj.get("damagedMs"), "tuttiFixedLostLate": tf.get("loopLostLate"),
                              "tuttiAdaptiveLostLate": ta.get("loopLostLate"), "jacktripRecvUnderruns": jj.get("loopRecvUnderruns"),
                              "tuttiFixedConcealedMs": tf.get("loopConcealedMs"), "tuttiAdaptiveConcealedMs": ta.get("loopConcealedMs"),
                              "jacktripProtLost": jj.get("loopProtLost"),
                              "windowSeconds": meta["window"]}
    tscale = {results[k]["streams"]: results[k] for k in results if k.startswith("scale-tutti-")}
    cpu_rows = cpu_summary(results)
    both = [r for r in cpu_rows if r["tutti"] and r["jacktrip"]]
    if both:
        r = next((x for x in both if x["streams"] == 8), both[-1])
        tc, jc = r["tutti"], r["jacktrip"]
        summary["cpu"] = {"streams": r["streams"], "tuttiMsPerSecond": tc["msPerSecond"], "jacktripMsPerSecond": jc["msPerSecond"],
                          "jacktripWithJackdMsPerSecond": jc["withJackdMsPerSecond"],
                          "ratio": r["ratio"], "ratioWithJackd": r["ratioWithJackd"],
                          "plainRatio": r.get("plainRatio"), "plainRatioWithJackd": r.get("plainRatioWithJackd"),
                          "tuttiStreamsPerCore": tc["msPerSecond"] and 1000 / tc["msPerSecond"],
                          "jacktripStreamsPerCore": jc["msPerSecond"] and 1000 / jc["msPerSecond"]}
    summary["cpuByStreams"] = cpu_rows
    scale = scale_summary(results)
    if scale["steps"]:
        summary["scale"] = scale
    floors = floor_summary(results)
    if floors:
        summary["floor"] = floors
    def confirm_episodes(confirm):
        # Each host's sampler sees every peer's connections: one entry per connection id, named by its ends.
        legs, seen = [], set()
        for source in ("stats", "returnStats"):
            for connection in (confirm.get(source) or {}).get("connections") or []:
                episodes = connection.get("episodes")
                if episodes is None or connection.get("id") in seen:
                    continue
                seen.add(connection.get("id"))
                leg = f"{connection.get('source', '?')} → {connection.get('destination', '?')}"
                legs.append(dict(episodes, leg=leg, peerClocks=confirm.get("mode") != "jack-loop"))
        return legs
    confirms = []
    for key in sorted(k for k in results if k.startswith("floorconfirm-")):
        confirm = results[key]
        lat, method = floor_latency(confirm, results)
        kind = key[len("floorconfirm-"):].rsplit("-64-clean-", 1)[0]
        found = (floors.get(f"{kind}-64-clean") or {}).get("found") or {}
        confirms.append({"path": key.split("-")[1], "setting": floor_setting(confirm),
                         "lowest": str(found.get("step")) == str(confirm.get("step")),
                         "seconds": confirm.get("windowSeconds"), "glitches": confirm.get("glitches"),
                         "oneWayMs": lat, "method": method, "cycles": cycles_of(confirm),
                         "episodes": confirm_episodes(confirm), "machineWake": confirm.get("machineWake")})
    if confirms:
        summary["floorConfirm"] = confirms
    if results.get("machine-wake"):
        summary["machineWake"] = results["machine-wake"]
    first_drop = None
    for n in sorted(tscale):
        if scale_drops_audio(tscale[n], n):
            first_drop = n
            break
    summary["tuttiFirstDropoutStreams"] = first_drop
    summary["tuttiScaleTested"] = sorted(tscale)
    js["summary"] = summary

    md.append("## Summary: Tutti vs JackTrip\n")
    md.append("| | Tutti | JackTrip 1.7 | Tutti / JackTrip |\n|---|---|---|---|")
    if "oneWayLatency64Ms" in summary:
        s = summary["oneWayLatency64Ms"]
        tutti_cell = f"{fmt(s['tuttiStats'])} ms (capture→playout stats h1→h2"
        tutti_cell += f"; mean of both legs {fmt(s['tuttiStatsBothWays'])})" if s.get("tuttiStatsBothWays") is not None else ")"
        tutti_cell += f"; {fmt(s['tuttiImpulse'])} ms (impulse)" if s["tuttiImpulse"] is not None else "; impulse: not measured (no JACK ports)"
        basis = s["tuttiImpulse"] if s["tuttiImpulse"] is not None else s["tuttiStats"]
        md.append(f"| one-way latency, 64 frames, clean (median) | {tutti_cell} | {fmt(s['jacktripImpulse'])} ms (impulse) | "
                  f"{fmt(ratio(basis, s['jacktripImpulse']))}{'' if s['tuttiImpulse'] is not None else ' (stats vs impulse)'} |")
    if "jitter2" in summary:
        s = summary["jitter2"]
        md.append(f"| dropouts under 2 ms jitter, {s['windowSeconds']} s: packets not played in time, both legs of the loop (the tools' own counters) | "
                  f"fixed 5 ms: {fmt(s['tuttiFixedLostLate'])} lost/late ({fmt(s['tuttiFixedConcealedMs'], 1)} ms concealed); "
                  f"adaptive: {fmt(s['tuttiAdaptiveLostLate'])} ({fmt(s['tuttiAdaptiveConcealedMs'], 1)} ms) | "
                  f"{fmt(s['jacktripRecvUnderruns'])} receive underruns; {fmt(s['jacktripProtLost'])} lost (its `prot` count) | – (different counters) |")
        md.append(f"| dropouts under 2 ms jitter: damaged 1 kHz tone (tool-neutral, see below) | fixed {fmt(s['tuttiFixedDamagedMs'], 1)} ms; "
                  f"adaptive {fmt(s['tuttiAdaptiveDamagedMs'], 1)} ms | {fmt(s['jacktripDamagedMs'], 1)} ms | "
                  f"{fmt(ratio(s['tuttiFixedDamagedMs'], s['jacktripDamagedMs']))} (fixed) |")
    if "cpu" in summary:
        s = summary["cpu"]
        md.append(f"| CPU per stream (ms per s of audio, send + receive, at {s['streams']} streams; goal ≤ 1/3 of JackTrip's) | {fmt(s['tuttiMsPerSecond'])} | "
                  f"{fmt(s['jacktripMsPerSecond'])} (+ jackd: {fmt(s['jacktripWithJackdMsPerSecond'])}) | {fmt(s['ratio'])} "
                  f"({fmt(s['ratioWithJackd'])} with jackd) |")
        md.append(f"| streams per core (1 s ÷ CPU per stream) | {fmt(s['tuttiStreamsPerCore'], 0)} | {fmt(s['jacktripStreamsPerCore'], 0)} | "
                  f"{fmt(ratio(s['tuttiStreamsPerCore'], s['jacktripStreamsPerCore']))} |")
    floors = summary.get("floor") or {}
    for frames in (64, 32):
        for net in ("clean", "jitter05"):
            t = (floors.get(f"tutti-{frames}-{net}") or {}).get("found")
            jts = [(floors[k] or {}).get("found") for k in floors if k.startswith("jacktrip") and k.endswith(f"-{frames}-{net}")]
            jts = [j for j in jts if j and j.get("oneWayMs")]
            best = min(jts, key=lambda j: j["oneWayMs"]["median"]) if jts else None
            if t or best:
                tl, jl = (t or {}).get("oneWayMs") or {}, (best or {}).get("oneWayMs") or {}
                md.append(f"| lowest glitch-free one-way latency, {frames} frames, {net} (median / p99, impulse) | "
                          f"{fmt(tl.get('median'))} / {fmt(tl.get('p99'))} ms ({t['setting'] if t else 'none in the ladder'}) | "
                          f"{fmt(jl.get('median'))} / {fmt(jl.get('p99'))} ms ({best['setting'] if best else 'none in the ladder'}) | "
                          f"{fmt(ratio(tl.get('median'), jl.get('median')))} |")
            p = (floors.get(f"paced-{frames}-{net}") or {}).get("found")
            if p and frames == 64:
                pl = p.get("oneWayMs") or {}
                md.append(f"| lowest glitch-free latency, paced path (no JACK), 64 frames, {net} (median / p99, stats) | "
                          f"{fmt(pl.get('median'))} / {fmt(pl.get('p99'))} ms ({p['setting']}) | – | – |")
    for c in summary.get("floorConfirm") or []:
        span = f"{c['seconds'] / 60:.0f} min" if c["seconds"] >= 60 else f"{c['seconds']} s"
        cell = f"{fmt((c.get('oneWayMs') or {}).get('median'))} ms ({c['method']}), {c['glitches']} glitches"
        if c["path"] == "jacktrip":
            md.append(f"| {span} at JackTrip's lowest setting ({c['setting']}), 64 frames, clean | – | {cell} | – |")
            continue
        path = "JACK loop" if c["path"] == "tutti" else "paced path"
        md.append(f"| {span} at the {path}'s {'lowest setting' if c.get('lowest', True) else 'setting'} ({c['setting']}), 64 frames, clean (goal ≤ 2.0 ms, 0 glitches) | "
                  f"{cell} | – | – |")
    if summary.get("scale"):
        sc = summary["scale"]
        md.append(f"| streams into one receiver core with 0 lost or late (goal ≥ 128; tried {', '.join(str(x['streams']) for x in sc['steps'])}) | "
                  f"{sc['largestClean'] or 'none'} | – | – |")
    md.append("")
    if "jitter2" in summary:
        md.append("\n**Read the damaged-tone row with care.** The probe signal is a steady 1 kHz tone, and Tutti's concealment "
                  "repeats whole periods of what it last played, which continues a steady tone perfectly: its concealed audio "
                  "(the counters' row) does not show as damage, while on music it would be audible. JackTrip's concealment "
                  "does not continue the tone, so all of it shows. The counters' row is the fairer dropout comparison; the "
                  "tools count differently, so no ratio is given for it.\n")
    if tscale:
        md.append(f"\nTutti first dropped audio at **{first_drop if first_drop else 'none of'}** "
                  f"{'streams' if first_drop else 'the stream counts tested'} ({', '.join(map(str, sorted(tscale)))}): the "
                  f"first count with more than {SCALE_DROP_SHARE:.1%} of its packets lost or late, or a connection not "
                  "playing (the Scale section has every count's figures).\n")

    if lat_rows:
        # ---- latency section -----------------------------------------------------------------------------
        md.append("## Latency\n")
        md.append("One stereo 48 kHz L24 stream h1 → h2. Tutti: fixed 5 ms target (5.34 ms at 128 frames: Tutti refuses less than two packets), device period = packet size. "
                  "JackTrip: `-q` = the packets that make ≥ 5 ms (32 → 8, 64 → 4, 128 → 2), `-b 16` (its default), JACK period = packet size. "
                  "`jitter1` is `scripts/lab impair --delay 1 --jitter 1` on both hosts' egress (0–2 ms uniform).\n")
        md.append("Two methods. **Stats**: each receiver's capture-to-playout latency from the packets' capture timestamps "
                  "(`tutti stats --json` every 0.1 s), for both legs of the loop: h1 → h2 and h2 → h1. **Impulse**: a JACK probe "
                  "on h1 plays an impulse every 250 ms into the sender; the far host loops the audio back in its JACK graph; "
                  "one-way = (round trip − the JACK graph's own feedback delay, measured on h2) / 2.\n")
        md.append("A round trip measures the sum of the two legs, so the impulse's one-way figure is checked against the "
                  "**mean of the two legs' stats** (they must agree within a packet). How the round trip splits into its legs "
                  "is what the stats alone tell: each leg's latency is the far host's playout time less the near host's "
                  "capture time, each read on its own host's JACK cycle timeline, so a difference between the two hosts' "
                  "timelines moves latency from one leg to the other and cancels in the sum. The last Tutti column shows it: "
                  "half the difference of the legs (0 when the legs are equal, as they are by construction: the same target, "
                  "the same impairment both ways). The next column shows why it moves: how far each host's JACK server's "
                  "cycle starts strayed from a straight line over the window (p1…p99, ms, and the server's rate off "
                  "nominal), measured by the probe on h1 and an observer client on h2.\n")
        md.append("| frames | network | Tutti stats h1→h2 median / p99 (ms) | stats h2→h1 median | stats, mean of the legs | Tutti impulse one-way median / p99 | impulse − mean of the legs | half the legs' difference | JACK servers' cycle starts off their line, h1 / h2 | JackTrip impulse one-way median / p99 | JackTrip round trip median | far-host JACK loop (frames) | Tutti / JackTrip |")
        md.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        disagreements = []
        for frames, net, t, j, tr, jr in lat_rows:
            sl, sb = t["statsLatencyMs"], t["returnStatsLatencyMs"]
            mean = both_ways(t)
            ti = t["impulseOneWayMs"]
            ji = j["impulseOneWayMs"] if j else None
            basis = ti["median"] if ti else (sl or {}).get("median")
            gap = ti["median"] - mean if ti and mean is not None else None
            gap_cell = "–"
            if gap is not None:
                gap_cell = fmt(gap)
                if abs(gap) > frames / 48:
                    gap_cell = f"**{fmt(gap)}** (more than a packet)"
                    disagreements.append(f"{frames} frames {net}")
            split = (sl["median"] - sb["median"]) / 2 if sl and sb else None
            md.append(f"| {frames} | {net} | {lat_cell(sl)} / {lat_cell(sl, 'p99')} | {lat_cell(sb)} | {fmt(mean)} | "
                      f"{(lat_cell(ti) + ' / ' + lat_cell(ti, 'p99')) if ti else 'not measured'} | {gap_cell} | {fmt(split)} | {cycles_cell(t['serverCycles'])} | "
                      f"{(lat_cell(ji) + ' / ' + lat_cell(ji, 'p99')) if ji else 'not measured'} | "
                      f"{lat_cell((j or {}).get('roundTripMs'))} | {fmt(loop_frames(results, frames))} | {fmt(ratio(basis, ji['median'] if ji else None))} |")
        summary["tuttiLatencyMethodsAgree"] = not disagreements
        if disagreements:
            md.append(f"\n**Tutti's two latency methods disagree** by more than a packet ({', '.join(disagreements)}): the "
                      "impulse's round trip is not the sum of the legs' stats. Both are reported as measured; the impulse is "
                      "the one comparable with JackTrip.\n")
            summary["tuttiLatencyMethodsDisagree"] = disagreements
        else:
            md.append("\nThe two methods agree within a packet in every row.\n")
        md.append("Where half the legs' difference is large, the two hosts' time bases disagree by that much: each leg's "
                  "stats latency is read across two hosts, on the Link session's ghost time (estimated by each peer's "
                  "non-realtime Link thread) at each host's JACK cycle times (fitted from its server's wake-ups), all on one "
                  "shared 2-core machine that also runs the servers, the peers' realtime threads and the delay line. The "
                  "JACK-servers column shows when a server itself wandered (a dummy server that wakes late runs hundreds of "
                  "ppm slow); the Clock section shows the ghost clocks' agreement without audio load. The round trip, and "
                  "so the impulse, does not depend on either.\n")
        if not meta["tuttiJack"]:
            md.append("\n**Tutti's impulse round trip: not measured.** This tutti has no JACK ports "
                      f"(`tutti peer --sender x=jack --dry-run` said: `{meta.get('jackProbe', '').strip()[:200]}`), so the A → B → A "
                      "loop cannot be closed; the Tutti/JackTrip ratio above compares Tutti's stats latency with JackTrip's "
                      "impulse latency, which are different methods.\n")
        # plots
        plots = []
        cdf_series = []
        for frames, net, t, j, tr, jr in lat_rows:
            if frames == 64:
                c = receiving(tr)
                if c:
                    cdf_series.append((f"Tutti stats {net}", [p[1] for p in c["series"]]))
                ow = one_way(tr, results)
                if ow:
                    cdf_series.append((f"Tutti impulse {net}", ow))
                if jr and one_way(jr, results):
                    cdf_series.append((f"JackTrip impulse {net}", one_way(jr, results)))
        if cdf_series:
            open(os.path.join(out, "latency-64-cdf.svg"), "w").write(
                svgplot.cdf("One-way latency, 64-frame packets", "one-way latency (ms)", cdf_series))
            plots.append(("latency-64-cdf.svg", "One-way latency at 64 frames: distribution (CDF)"))
        series = []
        for frames, net, t, j, tr, jr in lat_rows:
            c = receiving(tr)
            if c and frames == 64:
                series.append((f"buffer {net}", [(p[0], p[2]) for p in c["series"]]))
                series.append((f"latency {net}", [(p[0], p[1]) for p in c["series"]]))
        if series:
            open(os.path.join(out, "latency-64-buffer.svg"), "w").write(
                svgplot.lines("Tutti receiver at 64 frames: buffer level and latency over time", "time in window (s)", "ms", series))
            plots.append(("latency-64-buffer.svg", "Tutti's buffer level and capture-to-playout latency over the window"))
        for name, caption in plots:
            md.append(f"![{caption}]({name})\n")

    # ---- impairment ----------------------------------------------------------------------------------
    imp_labels = []
    for key in results:
        if key.startswith("impair-"):
            label = key.rsplit("-", 1)[1]
            if label not in imp_labels:
                imp_labels.append(label)
    if imp_labels:
        md.append("## Impairment\n")
        md.append("64-frame packets, the same impairment on both hosts' egress. Tutti fixed = `--latency 5`, adaptive = `--latency auto` "
                  "(2–40 ms); JackTrip `-q 4` (5.3 ms). **Damaged audio** is the tool-neutral measure: ms of 64-frame blocks of the "
                  "returned 1 kHz tone that are not the tone (gap, click, or concealment that does not continue it), over the "
                  f"{meta['window']} s window. The tools' own counters are beside it: Tutti's lost + late packets, underruns and "
                  "concealed audio; JackTrip's receive underruns and the first of its `prot` counters (lost), as its `-I` line prints them. "
                  "The lab's jitter delays each packet independently, so it also reorders them.\n")
        md.append("The counters are the whole loop's (both legs: h1 → h2 and back), as the damaged audio is of the round "
                  "trip. JackTrip runs twice: with its default buffer, and with its alternative jitter buffer "
                  "(`--bufstrategy N`, same `-q`).\n")
        md.append("| impairment | tool, buffer | damaged audio (ms) | lost + late packets (both legs) | underruns | concealed (ms) | latency median / p99 (ms) | target (ms) |")
        md.append("|---|---|---|---|---|---|---|---|")
        order = ["jitter1", "jitter2", "jitter5", "loss1", "loss5", "reorder"]
        for label in sorted(imp_labels, key=lambda l: order.index(l) if l in order else 99):
            variants = ["tutti-fixed", "tutti-adaptive", "jacktrip"]
            variants += sorted(k[len("impair-"):-len(label) - 1] for k in results
                               if k.startswith("impair-jacktrip-bs") and k.endswith(f"-{label}"))
            for variant in variants:
                r = results.get(f"impair-{variant}-{label}")
                if not r:
                    continue
                if variant.startswith("tutti"):
                    t = tutti_figures(r, results)
                    lat = t["impulseOneWayMs"] or t["statsLatencyMs"]
                    method = "impulse" if t["impulseOneWayMs"] else "stats"
                    md.append(f"| {label} | Tutti {variant.split('-')[1]} | {fmt(t['damagedMs'], 1)} | {fmt(t['loopLostLate'])} | {fmt(t['loopUnderruns'])} | "
                              f"{fmt(t['loopConcealedMs'], 1)} | {lat_cell(lat)} / {lat_cell(lat, 'p99')} ({method}) | "
                              f"{lat_cell(t['targetMs'])} (max {lat_cell(t['targetMs'], 'max')}) |")
                else:
                    j = jacktrip_figures(r, results)
                    lat = j["impulseOneWayMs"]
                    name = f"JackTrip q{r.get('queue')}" + (f" `{j['options']}`" if j["options"] else "")
                    md.append(f"| {label} | {name} | {fmt(j['damagedMs'], 1)} | {fmt(j['loopProtLost'])} (prot) | {fmt(j['loopRecvUnderruns'])} (recv) | – | "
                              f"{lat_cell(lat)} / {lat_cell(lat, 'p99')} (impulse) | – |")
        descs = sorted({r.get("impairment", "") for k, r in results.items() if k.startswith("impair-")})
        md.append("\nImpairments as the lab applied them:\n")
        for d in descs:
            md.append(f"- `{d}`")
        md.append("")
        series = []
        for variant in ("tutti-fixed", "tutti-adaptive"):
            r = results.get(f"impair-{variant}-jitter5")
            c = receiving(r) if r else None
            if c:
                series.append((f"{variant[6:]} buffer", [(p[0], p[2]) for p in c["series"]]))
                series.append((f"{variant[6:]} target", [(p[0], p[3]) for p in c["series"]]))
        if series:
            open(os.path.join(out, "impair-jitter5-buffer.svg"), "w").write(
                svgplot.lines("Tutti under 5 ms jitter: buffer level and target over time", "time in window (s)", "ms", series))
            md.append("![Tutti's buffer level under 5 ms jitter, fixed vs adaptive](impair-jitter5-buffer.svg)\n")
        cdf_series = []
        for variant in ("tutti-fixed", "tutti-adaptive", "jacktrip"):
            r = results.get(f"impair-{variant}-jitter2")
            if not r:
                continue
            ow = one_way(r, results)
            if ow:
                cdf_series.append((f"{variant} impulse", ow))
            c = receiving(r) if variant != "jacktrip" else None
            if c:
                cdf_series.append((f"{variant} stats", [p[1] for p in c["series"]]))
        if cdf_series:
            open(os.path.join(out, "impair-jitter2-cdf.svg"), "w").write(
                svgplot.cdf("One-way latency under 2 ms jitter", "one-way latency (ms)", cdf_series))
            md.append("![One-way latency under 2 ms jitter (CDF)](impair-jitter2-cdf.svg)\n")

    # ---- floor, CPU, scale ----------------------------------------------------------------------------
    floor_section(md, summary, results, meta)
    cpu_section(md, cpu_rows, meta)
    scale_section(md, scale, meta)

    # ---- clock ---------------------------------------------------------------------------------------
    clocks = [(k[len("clock-"):], results[k]) for k in sorted(results, key=lambda k: (k != "clock-clean", k))
              if k.startswith("clock-")]
    if clocks:
        md.append("## Clock\n")
        md.append(f"Two Tutti beat clocks (`tutti clock --serve`, Link on the lab interface), h2 joining h1's session; "
                  f"both sampled every 1 ms for {clocks[0][1]['windowSeconds']} s; phase agreement by `tutti-link-agreement` "
                  "(signed median: the constant offset; |Δ|: the spread), on the clean network and under the latency "
                  "scenario's jitter on both hosts' egress.\n")
        md.append("| network | pair | instants | signed median (µs) | median abs(Δ) (µs) | p95 | p99 | max |\n|---|---|---|---|---|---|---|---|")
        for net, clock in clocks:
            pairs = (clock.get("agreement") or {}).get("pairs") or {}
            if not pairs:
                md.append(f"| {net} | not measured: tutti-link-agreement said `{clock.get('summary', '')[:200]}` | | | | | | |")
            for name, p in pairs.items():
                md.append(f"| {net} | {name} | {p.get('n')} | {fmt(p.get('signed_median_us'))} | {fmt(p.get('median_us'))} | "
                          f"{fmt(p.get('p95_us'))} | {fmt(p.get('p99_us'))} | {fmt(p.get('max_us'))} |")
                summary.setdefault("clock", p)
                summary.setdefault("clockByNetwork", {})[net] = p
        md.append("")

    md.append("## Method notes\n")
    md.append("- Every process runs inside the lab's network namespaces (`scripts/lab exec`); JACK servers are per host "
              "(each lab host has its own /dev/shm). Capture timestamps are on the Link session's ghost time (its agreement "
              "between the hosts is the Clock section's figure), read at each host's JACK cycle times.\n"
              "- Damaged audio: each 64-frame block of the returned 1 kHz tone is fitted with the best 1 kHz sine; it is "
              "damaged when its amplitude is off the median block's by more than 1 dB or the residual is above −40 dB. "
              "Concealment that continues the tone is not damage.\n"
              "- JackTrip counters are cumulative in its `-I 1` lines; the figure is the sum of their steps over the window (a reset counter restarts the sum). Its "
              "field meanings are JackTrip's own and are not reinterpreted here.\n"
              "- Distributions are given as median and p95/p99 because the machine is shared; CI checks only that the "
              "numbers exist and are sane, never timings.\n")
    js["summary"] = summary
    # The scale runs' per-connection time series (up to 128 of them) are not needed beside their counters.
    for key, result in results.items():
        if key.startswith(("scale-", "cpu-")):
            for c in (result.get("stats") or {}).get("connections") or []:
                c.pop("series", None)
    open(os.path.join(out, "report.md"), "w").write("\n".join(md) + "\n")
    json.dump(js, open(os.path.join(out, "report.json"), "w"), indent=1, sort_keys=True)
    print("\n".join(md))


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4) or sys.argv[3:] not in ([], ["--add"]):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    try:
        main(sys.argv[1], sys.argv[2], add=sys.argv[3:] == ["--add"])
    except MergeRefused as refusal:
        print(f"report: {refusal}", file=sys.stderr)
        sys.exit(2)
