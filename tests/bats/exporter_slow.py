#!/usr/bin/python3
"""Hold N connections to the exporter from one address, each trickling its request
headers one byte at a time (a slowloris client), then report how many the exporter kept
open.  Usage: exporter_slow.py SRC_ADDR HOST PORT N SECONDS
Prints "held H of N" after SECONDS of trickling (H: connections still open), and runs
until stdin closes or it is killed, so that a scrape can be tried meanwhile."""
import socket, sys, time

src, host, port, n, secs = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
conns = []
for _ in range(n):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((src, 0))
    try:
        s.connect((host, port))
        conns.append(s)
    except OSError:
        s.close()
req = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 4096
pos = 0
end = time.time() + secs
while time.time() < end:
    for s in list(conns):
        try:
            s.send(req[pos:pos + 1])
        except OSError:
            conns.remove(s)
            s.close()
    pos = (pos + 1) % len(req)
    time.sleep(0.2)
# a closed connection reads EOF (or a reset) without blocking
for s in list(conns):
    s.setblocking(False)
    try:
        if s.recv(1) == b"":
            conns.remove(s)
    except BlockingIOError:
        pass
    except OSError:
        conns.remove(s)
print("held %d of %d" % (len(conns), n), flush=True)
sys.stdin.read()
