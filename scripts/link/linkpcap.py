#!/usr/bin/env python3
"""Decode Link discovery datagrams (_asdp_v 1: ALIVE, RESPONSE, BYEBYE) from a pcap file.

  linkpcap.py dump FILE
      One line per Link datagram: time (s from the first packet), source, type, NodeId, sess,
      tempo (from tmln), playing (from stst).
  linkpcap.py sessions FILE [--json FILE|-]
      Per sender NodeId: source address, time of its first and last message, the session it
      announced first and last, and its first and last tempo. Then the outcome: the sessions
      announced last by every node that was still talking at the end of the capture (one entry
      means they all ended in one session), the smallest of all sessions founded (unsigned
      big-endian comparison of the 8 bytes, as Link compares them), the gap between the first
      messages of the founders, and when all nodes first announced the final session.

Standard library only. Reads classic pcap (tcpdump -w), Ethernet or Linux cooked (SLL) link
types, IPv4 and IPv6 (no extension headers), any UDP port (filter with tcpdump:
`udp port 20808` keeps ALIVE and BYEBYE, which go to the multicast group; RESPONSEs go to an
ephemeral port). Section 4 of shared/reference/link-protocol.md describes the format.
"""

import argparse
import json
import struct
import sys

MAGIC = b"_asdp_v\x01"
TYPES = {1: "ALIVE", 2: "RESPONSE", 3: "BYEBYE"}


def packets(path):
    """(time_s, src, sport, dst, dport, payload) for every UDP datagram in a classic pcap file."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        return
    magic = data[:4]
    if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
        endian = "<"
    elif magic in (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
        endian = ">"
    else:
        raise SystemExit("linkpcap: %s is not a classic pcap file" % path)
    nano = magic in (b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d")
    linktype = struct.unpack(endian + "I", data[20:24])[0]
    off = 24
    while off + 16 <= len(data):
        sec, frac, incl, _orig = struct.unpack(endian + "IIII", data[off:off + 16])
        off += 16
        frame = data[off:off + incl]
        off += incl
        t = sec + frac / (1e9 if nano else 1e6)
        if linktype == 1:  # Ethernet
            if len(frame) < 14:
                continue
            etype = struct.unpack(">H", frame[12:14])[0]
            p = 14
            if etype == 0x8100 and len(frame) >= 18:
                etype = struct.unpack(">H", frame[16:18])[0]
                p = 18
        elif linktype == 113:  # Linux cooked
            if len(frame) < 16:
                continue
            etype = struct.unpack(">H", frame[14:16])[0]
            p = 16
        else:
            continue
        ip = frame[p:]
        if etype == 0x0800 and len(ip) >= 20 and ip[9] == 17:
            ihl = (ip[0] & 15) * 4
            src = ".".join(str(b) for b in ip[12:16])
            dst = ".".join(str(b) for b in ip[16:20])
            udp = ip[ihl:]
        elif etype == 0x86DD and len(ip) >= 40 and ip[6] == 17:
            src = ip[8:24].hex()
            dst = ip[24:40].hex()
            udp = ip[40:]
        else:
            continue
        if len(udp) < 8:
            continue
        sport, dport, ulen = struct.unpack(">HHH", udp[:6])
        yield t, src, sport, dst, dport, udp[8:ulen]


def decode(payload):
    """A dict for a Link discovery datagram, or None."""
    if len(payload) < 20 or payload[:8] != MAGIC:
        return None
    mtype, ttl = payload[8], payload[9]
    group = struct.unpack(">H", payload[10:12])[0]
    msg = {"type": TYPES.get(mtype, str(mtype)), "ttl": ttl, "group": group, "node": payload[12:20].hex()}
    p = 20
    while p + 8 <= len(payload):
        key = payload[p:p + 4]
        size = struct.unpack(">I", payload[p + 4:p + 8])[0]
        val = payload[p + 8:p + 8 + size]
        p += 8 + size
        if len(val) != size:
            msg["truncated"] = True
            break
        if key == b"sess" and size == 8:
            msg["sess"] = val.hex()
        elif key == b"tmln" and size == 24:
            mpb, beat_origin, time_origin = struct.unpack(">qqq", val)
            msg["tempo"] = round(60e6 / mpb, 6) if mpb > 0 else None
            msg["beat_origin"] = beat_origin
            msg["time_origin"] = time_origin
        elif key == b"stst" and size == 17:
            playing, beats, ts = struct.unpack(">?qq", val)
            msg["playing"] = playing
            msg["stst_beats"] = beats
            msg["stst_time"] = ts
        elif key == b"mep4" and size == 6:
            msg["mep4"] = "%s:%d" % (".".join(str(b) for b in val[:4]), struct.unpack(">H", val[4:6])[0])
    return msg


def messages(path):
    out = []
    for t, src, sport, dst, dport, payload in packets(path):
        m = decode(payload)
        if m is None:
            continue
        m.update(t=t, src=src, sport=sport, dst=dst, dport=dport)
        out.append(m)
    return out


def cmd_dump(a):
    ms = messages(a.file)
    t0 = ms[0]["t"] if ms else 0
    for m in ms:
        print("%9.6f %-15s %-8s node %s sess %s tempo %s playing %s" % (
            m["t"] - t0, m["src"], m["type"], m["node"], m.get("sess", "-"), m.get("tempo", "-"),
            m.get("playing", "-")))
    return 0


def cmd_sessions(a):
    ms = messages(a.file)
    nodes = {}
    for m in ms:
        n = nodes.setdefault(m["node"], {"node": m["node"], "src": m["src"], "first_t": m["t"], "msgs": 0})
        n["msgs"] += 1
        n["last_t"] = m["t"]
        n["last_type"] = m["type"]
        if "sess" in m:
            n.setdefault("first_sess", m["sess"])
            n.setdefault("first_tempo", m.get("tempo"))
            if n.get("last_sess") != m["sess"]:
                n["sess_since_t"] = m["t"]  # when it started announcing its current session
            n["last_sess"] = m["sess"]
            n["last_tempo"] = m.get("tempo")
        if m["src"].count(".") == 3:
            n["src"] = m["src"]  # prefer the IPv4 address as the node's name
    t_end = ms[-1]["t"] if ms else 0
    t0 = min((n["first_t"] for n in nodes.values()), default=0)
    # Founders: nodes whose first announced session is their own NodeId (a fresh enable).
    founded = sorted({n["first_sess"] for n in nodes.values() if n.get("first_sess") == n["node"]})
    founders = sorted((n for n in nodes.values() if n.get("first_sess") == n["node"]), key=lambda n: n["first_t"])
    # Nodes still talking at the end (not said BYEBYE, heard in the last second of the capture).
    live = [n for n in nodes.values() if n.get("last_type") != "BYEBYE" and n["last_t"] >= t_end - 1.0]
    final = sorted({n.get("last_sess") for n in live})
    converged_t = max((n.get("sess_since_t", n["first_t"]) for n in live), default=None)
    res = {
        "nodes": [
            {k: (round(v - t0, 6) if k in ("first_t", "last_t", "sess_since_t") else v) for k, v in n.items()}
            for n in sorted(nodes.values(), key=lambda n: n["first_t"])
        ],
        "founded_sessions": founded,
        "smallest_founded": min(founded) if founded else None,  # hex strings of equal length: lexicographic = unsigned BE
        "founder_gap_s": round(founders[-1]["first_t"] - founders[0]["first_t"], 6) if len(founders) >= 2 else None,
        "older_founder_session": founders[0]["node"] if founders else None,
        "final_sessions": final,
        "one_session": len(final) == 1,
        "converged_s_after_last_founder": (round(converged_t - founders[-1]["first_t"], 6)
                                           if converged_t is not None and founders else None),
        "capture_s": round(t_end - t0, 6),
    }
    text = json.dumps(res, indent=1)
    if a.json == "-":
        print(text)
    else:
        if a.json:
            with open(a.json, "w") as f:
                f.write(text)
        print("final sessions %s; founded %s; smallest %s; founder gap %s s" % (
            final, founded, res["smallest_founded"], res["founder_gap_s"]))
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dump")
    d.add_argument("file")
    s = sub.add_parser("sessions")
    s.add_argument("file")
    s.add_argument("--json")
    a = p.parse_args()
    return cmd_dump(a) if a.cmd == "dump" else cmd_sessions(a)


if __name__ == "__main__":
    sys.exit(main())
