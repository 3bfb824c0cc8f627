#!/usr/bin/python3
"""memcached UDP gets with planted hot keys, for the hot-key tests and demos.

  hot_traffic.py HOST PORT [--seconds S] [--pps R] [--cold PREFIX N] [--zipf A]
                 [--hot PREFIX K] [--hot-share F] [--sockets M] [--seed X]

Sends `get KEY` requests (with the 8-byte memcached UDP frame header) to HOST:PORT at R
packets per second for S seconds (0: until SIGTERM/SIGINT).  A share F of the packets
asks for one of the K hot keys PREFIX-0 .. PREFIX-(K-1) (uniformly); the others for one of
the N cold keys PREFIX-0 .. PREFIX-(N-1), uniformly or, with --zipf A, Zipf-distributed
with exponent A (rank 1 the most popular).  Requests leave from M sockets (M source ports,
so hot-key replicas chosen by the source see several clients).  Answers are not read (the
backends answer the client directly; the kernel drops what no one reads).  Prints
"sent N hot H" at the end.
"""
import argparse
import bisect
import random
import signal
import socket
import struct
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("host")
    ap.add_argument("port", type=int)
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--pps", type=float, default=2000)
    ap.add_argument("--cold", nargs=2, default=["k", "2000"])
    ap.add_argument("--zipf", type=float, default=0)
    ap.add_argument("--hot", nargs=2, default=["hot", "3"])
    ap.add_argument("--hot-share", type=float, default=0.3)
    ap.add_argument("--sockets", type=int, default=32)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    cold_prefix, ncold = a.cold[0], int(a.cold[1])
    hot_prefix, nhot = a.hot[0], int(a.hot[1])
    if ncold < 1 or nhot < 0 or not 0 <= a.hot_share <= 1 or a.pps <= 0 or a.sockets < 1:
        sys.exit("hot_traffic.py: bad arguments (see the docstring)")
    rnd = random.Random(a.seed)
    cum = None
    if a.zipf > 0:
        tot, cum = 0.0, []
        for r in range(1, ncold + 1):
            tot += r ** -a.zipf
            cum.append(tot)
    fam = socket.AF_INET6 if ":" in a.host else socket.AF_INET
    socks = []
    for _ in range(a.sockets):
        s = socket.socket(fam, socket.SOCK_DGRAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.connect((a.host, a.port))
        socks.append(s)
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    sent = hot = 0
    t0 = time.monotonic()
    while not stop:
        now = time.monotonic() - t0
        if a.seconds and now >= a.seconds:
            break
        due = int(now * a.pps) + 1
        while sent < due:
            if nhot and rnd.random() < a.hot_share:
                key = "%s-%d" % (hot_prefix, rnd.randrange(nhot))
                hot += 1
            elif cum:
                key = "%s-%d" % (cold_prefix, bisect.bisect_left(cum, rnd.random() * cum[-1]))
            else:
                key = "%s-%d" % (cold_prefix, rnd.randrange(ncold))
            body = ("get %s\r\n" % key).encode()
            try:
                socks[sent % len(socks)].send(struct.pack("!HHHH", sent & 0xFFFF, 0, 1, 0) + body)
            except OSError:
                pass  # an ICMP error from an earlier packet: keep sending
            sent += 1
        time.sleep(0.002)
    print("sent %d hot %d" % (sent, hot))


if __name__ == "__main__":
    main()
