#!/usr/bin/python3
"""The seeds' scale as a keyrouter configuration: NRINGS rings over the 2048 servers of
tests/data/bench2048.backends.txt, one per feature combination.

  scale_config.py rings   NRINGS PM OUT [--change K]   NRINGS rings, each a different subset
                                                       (~15/16 of the servers) with its own
                                                       weights; services on 4 of them
  scale_config.py subsets NRINGS PM OUT                the same subsets as tags of ONE shared
                                                       ring (the file's weights), one service
                                                       per subset

Deterministic (no randomness beyond a fixed hash).  --change K: rings 0..K-1 differ from
the plain configuration (one server of each gets another weight); the others are equal.
Every server has a MAC (l2 forwarding), so its identity includes its forwarding."""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data", "bench2048.backends.txt")


def servers():
    out = []
    for line in open(DATA):
        line = line.split("#")[0].strip()
        if line:
            a, w = line.split()
            out.append((a, int(w)))
    return out


def mix(a, b):
    h = (a * 0x9E3779B1 + b * 0x85EBCA77 + 0x165667B1) & 0xFFFFFFFF
    h ^= h >> 15
    h = (h * 0x2C1B3C6D) & 0xFFFFFFFF
    h ^= h >> 12
    h = (h * 0x297A2D39) & 0xFFFFFFFF
    return h ^ (h >> 15)


def member(r, j):
    return mix(r, j) % 16 != 0


def mac(j):
    return "02:00:00:00:%02x:%02x" % (j >> 8, j & 255)


def main():
    kind, nr, pm, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    change = int(sys.argv[6]) if len(sys.argv) > 6 and sys.argv[5] == "--change" else 0
    srv = servers()
    fwd = {"mode": "l2"}
    if kind == "rings":
        rings, svcs = [], []
        for r in range(nr):
            b = []
            for j, (a, w) in enumerate(srv):
                if not member(r, j):
                    continue
                w = 1 + mix(r + 1000, j) % 8
                if r < change and len(b) == 0:
                    w = 9 + r % 4      # the changed ring: its first server's weight
                b.append({"address": a, "weight": w, "mac": mac(j)})
            rings.append({"name": "r%02d" % r, "format": "v2", "point_multiple": pm,
                          "backends": b})
        for k in range(min(4, nr)):
            svcs.append({"name": "s%d" % k, "vip": "10.99.0.1", "port": 7000 + k,
                         "key": {"type": "payload"}, "ring": "r%02d" % k, "forward": fwd})
    else:
        b = []
        for j, (a, w) in enumerate(srv):
            tags = ["f%02d" % r for r in range(nr) if member(r, j)]
            b.append({"address": a, "weight": w, "mac": mac(j), "tags": tags})
        rings = [{"name": "shared", "format": "v2", "point_multiple": pm, "backends": b}]
        svcs = [{"name": "s%d" % r, "vip": "10.99.0.1", "port": 7000 + r,
                 "key": {"type": "payload"}, "ring": "shared", "subset": ["f%02d" % r],
                 "forward": fwd} for r in range(nr)]
    json.dump({"rings": rings, "services": svcs}, open(out, "w"))


main()
