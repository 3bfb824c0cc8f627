#!/usr/bin/env python3
# The share of the 2^32 key hashes that change backend between two rings, from two
# `keyrouter ring dump` outputs and each side's backend names (index -> name, in dump
# order): an oracle for apply's max_move guard written apart from the engine's diff
# (kr_an_diff). A key hash h goes to the first point with hash >= h, wrapping to point 0.
#   moved_share.py OLD.dump OLD.names NEW.dump NEW.names   -> prints the share (0..1)
import bisect
import sys


def ring(dump, names):
    owner = [l.strip() for l in open(names) if l.strip()]
    pts = []
    for line in open(dump):
        if line.startswith('#') or not line.strip():
            continue
        _, h, b = line.split()
        pts.append((int(h, 16), owner[int(b)]))
    pts.sort()
    return [h for h, _ in pts], [o for _, o in pts]


def owner_at(hashes, owners, h):
    i = bisect.bisect_left(hashes, h)
    return owners[i % len(owners)]


def main():
    ha, oa = ring(sys.argv[1], sys.argv[2])
    hb, ob = ring(sys.argv[3], sys.argv[4])
    # every arc between consecutive points of either ring has one owner on each side
    cuts = sorted(set(ha) | set(hb))
    moved, prev = 0, -1
    for c in cuts:
        if owner_at(ha, oa, c) != owner_at(hb, ob, c):
            moved += c - prev
        prev = c
    if owner_at(ha, oa, 0) != owner_at(hb, ob, 0):	# (last cut, 2^32): wraps to point 0
        moved += 0xffffffff - prev
    print('%.9f' % (moved / 2 ** 32))


main()
