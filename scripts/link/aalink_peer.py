#!/usr/bin/env python3
"""A controllable real Ableton Link peer (PyPI `aalink`, which embeds the real Link library).

Run it ONLY inside a lab host: `scripts/lab exec h1 python3 scripts/link/aalink_peer.py ...`.
Link multicasts on every interface of the namespace it runs in (224.76.78.75:20808, ff12::8080).

Input (stdin): one command per line, JSON (`{"cmd":"tempo","bpm":128}`) or a bare word (`state`).
Output (stdout): one JSON object per line, flushed at once. Every line has "ev" (event kind), "src"
(the --name) and "t" (CLOCK_MONOTONIC nanoseconds of the event). Commands may carry an "id" that is
echoed back in the reply. See scripts/link/README.md for the full protocol; in short:

  {"cmd":"state"}                 -> {"ev":"state", ...sample fields...}
  {"cmd":"tempo","bpm":128}       -> {"ev":"ack","cmd":"tempo","t0":..,"t1":..}  (t0/t1 bracket the call)
  {"cmd":"start"} / {"cmd":"stop"}-> ack            (sets playing now; start/stop sync is enabled)
  {"cmd":"quantum","q":4}         -> ack
  {"cmd":"enable"} / {"cmd":"disable"} -> ack      (disable sends BYEBYE)
  {"cmd":"force_beat","beat":0} / {"cmd":"request_beat","beat":0} -> ack
  {"cmd":"sample","every_ms":1}   -> ack            (periodic sample lines; 0 stops them)
  {"cmd":"log_changes","on":true} -> ack
  {"cmd":"clock"}                 -> {"ev":"clock", ...}  (CLOCK_MONOTONIC <-> Link clock mapping)
  {"cmd":"quit"}                  -> ack, Link disabled (BYEBYE), {"ev":"bye"}, exit 0
  {"cmd":"kill"}                  -> ack, then SIGKILL to itself (a crash: no BYEBYE)

Sample line ("ev":"sample" periodic, "ev":"state" on request), the format tutti-link-agreement reads:
  {"ev":"sample","src":"h1","t":<ns>,"dt":<ns>,"beat":<float>,"phase":<float>,"quantum":4.0,
   "tempo":<bpm>,"peers":<int>,"playing":<bool>}
  t  = CLOCK_MONOTONIC midpoint of a bracket [t0, t1] taken right before and right after the one
       aalink call that computes the beat; dt = t1 - t0. The beat belongs to an instant inside the
       bracket, so |error of t| <= dt/2 + 1 us (Link truncates its clock to whole microseconds).
  beat  = Link's app "phase-encoded" beat at that instant for the quantum (beatAtTime(now, q));
  phase = beat mod quantum, in [0, q): session beats mod q, grid anchored at session beat 0.
  Two Link apps in one session agree on phase; their beat values may differ by multiples of q.
  tempo/peers/playing are read right after the bracket (separate calls).

Change line (--log-changes): {"ev":"change","what":"tempo"|"peers"|"playing","value":..,"old":..,
  "t":<ns>,"tprev":<ns>}: the monitor thread polls every --poll-ms (default 1 ms); the change happened
  in (tprev, t]. Link's own callbacks are also logged as {"ev":"callback","what":..,"value":..,"t":..}
  (t = when the asyncio loop ran the callback, so slightly later than the change).
"""

import argparse
import asyncio
import json
import os
import signal
import sys
import threading
import time

MONO = time.CLOCK_MONOTONIC
RAW = time.CLOCK_MONOTONIC_RAW


def mono_ns():
    return time.clock_gettime_ns(MONO)


def raw_ns():
    return time.clock_gettime_ns(RAW)


class Out:
    """Thread-safe JSON-lines writer."""

    def __init__(self, name):
        self.name = name
        self.lock = threading.Lock()

    def emit(self, ev, **fields):
        obj = {"ev": ev, "src": self.name}
        obj.update(fields)
        if "t" not in obj:
            obj["t"] = mono_ns()
        line = json.dumps(obj, separators=(",", ":"))
        with self.lock:
            try:
                sys.stdout.write(line + "\n")
                sys.stdout.flush()
            except (BrokenPipeError, ValueError):
                pass


def clock_mapping(link, rounds=200):
    """Relate CLOCK_MONOTONIC, CLOCK_MONOTONIC_RAW and Link's clock (link.time, integer us).

    raw_minus_mono_ns: RAW - MONOTONIC from the tightest (mono, raw, mono) triple; its error is
    bracket_ns/2. link_clock: which kernel clock Link's clock matches, checked by bracketing
    link.time between two reads of each candidate clock (Link truncates to whole us).
    """
    best = None
    for _ in range(rounds):
        a = mono_ns()
        r = raw_ns()
        b = mono_ns()
        if best is None or b - a < best[2] - best[0]:
            best = (a, r, b)
    a, r, b = best
    raw_minus_mono = r - (a + b) // 2
    result = {"raw_minus_mono_ns": raw_minus_mono, "raw_minus_mono_err_ns": (b - a + 1) // 2}

    # Which clock is Link's? Bracket link.time (us) between reads of each candidate.
    for cname, cid in (("CLOCK_MONOTONIC_RAW", RAW), ("CLOCK_MONOTONIC", MONO)):
        ok = 0
        lag = []
        for _ in range(50):
            c0 = time.clock_gettime_ns(cid)
            lt = link.time  # datetime.timedelta
            c1 = time.clock_gettime_ns(cid)
            lt_ns = ((lt.days * 86400 + lt.seconds) * 1000000 + lt.microseconds) * 1000
            if c0 - 1000 <= lt_ns <= c1:
                ok += 1
            lag.append(lt_ns - (c0 + c1) // 2)
        lag.sort()
        result["link_vs_" + cname] = {"consistent": ok, "of": 50, "median_lag_ns": lag[len(lag) // 2]}
    if result["link_vs_CLOCK_MONOTONIC_RAW"]["consistent"] >= 45:
        result["link_clock"] = "CLOCK_MONOTONIC_RAW"
    elif result["link_vs_CLOCK_MONOTONIC"]["consistent"] >= 45:
        result["link_clock"] = "CLOCK_MONOTONIC"
    else:
        result["link_clock"] = "unknown"
    return result


class Peer:
    def __init__(self, args, loop):
        import aalink  # imported here so --help works without aalink

        self.args = args
        self.loop = loop
        self.out = Out(args.name)
        self.link = aalink.Link(args.bpm, loop) if args.pass_loop else aalink.Link(args.bpm)
        self.link.quantum = args.quantum
        self.link.start_stop_sync_enabled = not args.no_start_stop_sync
        self.sample_every_ns = int(args.sample_every * 1e6) if args.sample_every else 0
        self.log_changes = args.log_changes
        self.poll_ns = int(args.poll_ms * 1e6)
        self.stopping = threading.Event()
        self.done = asyncio.Event()
        self.exit_code = 0

    # ---- sampling -------------------------------------------------------------------------
    def sample(self, ev="sample", **extra):
        link = self.link
        t0 = mono_ns()
        beat = link.beat
        t1 = mono_ns()
        q = link.quantum
        tempo = link.tempo
        peers = link.num_peers
        playing = link.playing
        phase = beat % q if q > 0 else 0.0
        self.out.emit(ev, t=(t0 + t1) // 2, dt=t1 - t0, beat=beat, phase=phase, quantum=q,
                      tempo=tempo, peers=peers, playing=playing, **extra)

    def monitor(self):
        """Poll thread: change detection (--log-changes) and periodic samples (--sample-every)."""
        link = self.link
        last = None
        tprev = mono_ns()
        next_sample = tprev
        while not self.stopping.is_set():
            now = mono_ns()
            if self.log_changes:
                a = mono_ns()
                cur = {"tempo": link.tempo, "peers": link.num_peers, "playing": link.playing}
                b = mono_ns()
                t = (a + b) // 2
                if last is not None:
                    for k in ("peers", "tempo", "playing"):
                        if cur[k] != last[k]:
                            self.out.emit("change", t=t, tprev=tprev, what=k, value=cur[k], old=last[k])
                last = cur
                tprev = t
            else:
                last = None
            if self.sample_every_ns and now >= next_sample:
                self.sample()
                next_sample += self.sample_every_ns
                if next_sample < now:  # fell behind (scheduler hiccup): do not burst
                    next_sample = now + self.sample_every_ns
            time.sleep(self.poll_ns / 1e9)

    # ---- callbacks (run in the asyncio loop) ----------------------------------------------
    def _cb(self, what):
        def f(value):
            if self.log_changes:
                self.out.emit("callback", what=what, value=value)
        return f

    # ---- commands -------------------------------------------------------------------------
    def handle(self, line):
        line = line.strip()
        if not line:
            return
        if line.startswith("{"):
            try:
                cmd = json.loads(line)
            except json.JSONDecodeError as e:
                self.out.emit("error", error="bad json: %s" % e, line=line)
                return
        else:
            parts = line.split()
            cmd = {"cmd": parts[0]}
            if len(parts) > 1:
                cmd["arg"] = parts[1]
        name = cmd.get("cmd")
        rid = {"id": cmd["id"]} if "id" in cmd else {}
        link = self.link

        def num(key):
            v = cmd.get(key, cmd.get("arg"))
            return float(v)

        def ack(t0, t1, **f):
            self.out.emit("ack", t=t0, t0=t0, t1=t1, cmd=name, **rid, **f)

        try:
            if name == "state":
                self.sample("state", **rid)
            elif name == "tempo":
                bpm = num("bpm")
                t0 = mono_ns(); link.tempo = bpm; t1 = mono_ns()
                ack(t0, t1, bpm=bpm)
            elif name in ("start", "stop"):
                t0 = mono_ns(); link.playing = (name == "start"); t1 = mono_ns()
                ack(t0, t1)
            elif name == "quantum":
                q = num("q")
                t0 = mono_ns(); link.quantum = q; t1 = mono_ns()
                ack(t0, t1, q=q)
            elif name in ("enable", "disable"):
                t0 = mono_ns(); link.enabled = (name == "enable"); t1 = mono_ns()
                ack(t0, t1)
            elif name in ("force_beat", "request_beat"):
                beat = num("beat")
                t0 = mono_ns(); getattr(link, name)(beat); t1 = mono_ns()
                ack(t0, t1, beat=beat)
            elif name == "sample":
                ms = float(cmd.get("every_ms", cmd.get("arg", 0)))
                self.sample_every_ns = int(ms * 1e6)
                t = mono_ns()
                ack(t, t, every_ms=ms)
            elif name == "log_changes":
                on = cmd.get("on", cmd.get("arg", True))
                self.log_changes = on not in (False, "0", "false", "off")
                t = mono_ns()
                ack(t, t, on=self.log_changes)
            elif name == "clock":
                self.out.emit("clock", **rid, **clock_mapping(link))
            elif name == "quit":
                t = mono_ns()
                ack(t, t)
                self.quit()
            elif name == "kill":
                t = mono_ns()
                ack(t, t, pid=os.getpid())
                os.kill(os.getpid(), signal.SIGKILL)
            else:
                self.out.emit("error", error="unknown command", cmd=name, **rid)
        except Exception as e:  # keep the peer alive on bad input
            self.out.emit("error", error=repr(e), cmd=name, **rid)

    def quit(self, code=0):
        """Disable Link (sends BYEBYE), wait until it reports disabled, then stop."""
        if self.stopping.is_set():
            return
        self.exit_code = code
        t0 = mono_ns()
        self.link.enabled = False
        deadline = time.monotonic() + 1.0
        while self.link.enabled and time.monotonic() < deadline:
            time.sleep(0.001)
        # Link 4 hands enable/disable to a dispatcher thread; give the BYEBYE time to leave.
        time.sleep(self.args.bye_grace_ms / 1000.0)
        self.stopping.set()
        self.out.emit("bye", t=mono_ns(), t_disable=t0)
        self.loop.call_soon_threadsafe(self.done.set)

    def stdin_reader(self):
        for line in sys.stdin:
            if self.stopping.is_set():
                return
            self.handle(line)
        if not self.stopping.is_set():  # EOF: leave politely
            self.quit()

    async def run(self):
        link = self.link
        link.set_num_peers_callback(self._cb("peers"))
        link.set_tempo_callback(self._cb("tempo"))
        link.set_start_stop_callback(self._cb("playing"))
        t0 = mono_ns()
        if not self.args.start_disabled:
            link.enabled = True
        t1 = mono_ns()
        self.out.emit("hello", t=t0, t_enabled=None if self.args.start_disabled else t1,
                      enabled=not self.args.start_disabled, pid=os.getpid(),
                      host=os.environ.get("TUTTI_LAB_HOST", ""), bpm=self.args.bpm,
                      quantum=link.quantum, start_stop_sync=link.start_stop_sync_enabled,
                      clock=clock_mapping(link))
        threading.Thread(target=self.monitor, daemon=True).start()
        if not self.args.no_stdin:
            threading.Thread(target=self.stdin_reader, daemon=True).start()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            loop.add_signal_handler(sig, lambda: threading.Thread(target=self.quit).start())
        if self.args.max_runtime > 0:
            loop.call_later(self.args.max_runtime,
                            lambda: threading.Thread(target=self.quit, args=(3,)).start())
        await self.done.wait()


def in_root_netns():
    """True when this process shares PID 1's network namespace (the machine's real network)."""
    try:
        return os.readlink("/proc/self/ns/net") == os.readlink("/proc/1/ns/net")
    except OSError:
        return "TUTTI_LAB_HOST" not in os.environ


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--name", default=os.environ.get("TUTTI_LAB_HOST", "aalink"),
                   help="label put in every output line as 'src' (default: lab host name)")
    p.add_argument("--bpm", type=float, default=120.0, help="initial tempo (default 120)")
    p.add_argument("--quantum", type=float, default=4.0, help="quantum in beats (default 4)")
    p.add_argument("--no-start-stop-sync", action="store_true", help="leave start/stop sync disabled")
    p.add_argument("--sample-every", type=float, default=0, metavar="MS",
                   help="print a sample line every MS milliseconds (0 = off)")
    p.add_argument("--log-changes", action="store_true",
                   help="print a change line when tempo, peer count or playing changes")
    p.add_argument("--poll-ms", type=float, default=1.0, help="monitor poll period (default 1 ms)")
    p.add_argument("--bye-grace-ms", type=float, default=100.0,
                   help="on quit, wait this long after disabling before exiting (default 100)")
    p.add_argument("--max-runtime", type=float, default=600.0, metavar="S",
                   help="quit by itself after S seconds (exit code 3; 0 = never; default 600)")
    p.add_argument("--no-stdin", action="store_true", help="do not read commands from stdin")
    p.add_argument("--start-disabled", action="store_true",
                   help="do not enable Link at start; wait for the enable command (hello has t_enabled null)")
    p.add_argument("--pass-loop", action="store_true",
                   help="pass the asyncio loop to aalink.Link (deprecated form)")
    args = p.parse_args()
    if in_root_netns():
        sys.exit("aalink_peer: refusing to run in the machine's root network namespace (use "
                 "`scripts/lab exec HOST python3 ...`): Link multicasts on every interface")

    async def amain():
        peer = Peer(args, asyncio.get_running_loop())
        await peer.run()
        return peer.exit_code

    code = asyncio.run(amain())
    sys.stdout.flush()
    os._exit(code)  # do not wait for daemon threads blocked on stdin


if __name__ == "__main__":
    main()
