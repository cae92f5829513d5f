#!/usr/bin/env python3
"""Sends one plain control frame (4-byte big-endian length, then JSON) to a peer and prints the one answer's
JSON, as a host without the session key would: the lab's check that a stranger cannot tear down a stream.

Usage: control_frame.py HOST PORT JSON"""
import json
import socket
import struct
import sys


def main() -> None:
    host, port, body = sys.argv[1], int(sys.argv[2]), sys.argv[3].encode()
    with socket.create_connection((host, port), timeout=5) as conn:
        conn.sendall(struct.pack(">I", len(body)) + body)
        header = b""
        while len(header) < 4:
            chunk = conn.recv(4 - len(header))
            if not chunk:
                print(json.dumps({"closed": True}))
                return
            header += chunk
        (length,) = struct.unpack(">I", header)
        answer = b""
        while len(answer) < length:
            chunk = conn.recv(length - len(answer))
            if not chunk:
                break
            answer += chunk
        print(answer.decode())


if __name__ == "__main__":
    main()
