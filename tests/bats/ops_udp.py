#!/usr/bin/env python3
# UDP helper of the ops tests (plain sockets, no capture):
#   ops_udp.py recv PORT OUT [PIDFILE]  append every payload received on PORT to OUT, one per
#                                     line (with a timestamp); its pid goes to PIDFILE
#   ops_udp.py send IP PORT PREFIX FIRST COUNT [PPS]
#                                     send payloads PREFIX<FIRST>..PREFIX<FIRST+COUNT-1>
#   ops_udp.py stream IP PORT PREFIX COUNT PPS LOG
#                                     send PREFIX0..PREFIX<COUNT-1> at PPS packets/s and log
#                                     "time key" per packet (CLOCK_REALTIME) to LOG
#   ops_udp.py pace IP PORT PREFIX PPS LOG STOPFILE [MAX]
#                                     send PREFIX0, PREFIX1, ... at PPS packets/s on average
#                                     (paced by the clock: packets due are sent, at most 32
#                                     at once) until STOPFILE exists (or MAX were sent); log
#                                     "time key" per packet, the time taken just before it
#                                     is sent; LOG.started appears once the first is out
import os, socket, sys, time

def recv(port, out, pidfile=None):
    if pidfile:
        with open(pidfile, "w") as f:
            f.write("%d\n" % os.getpid())
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    s.bind(("0.0.0.0", int(port)))
    with open(out, "a", buffering=1) as f:
        while True:
            data, _ = s.recvfrom(65535)
            f.write("%.6f %s\n" % (time.time(), data.decode("ascii", "replace")))

def send(ip, port, prefix, first, count, pps=0):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    gap = 1.0 / float(pps) if float(pps) > 0 else 0
    for n in range(int(first), int(first) + int(count)):
        s.sendto(("%s%d" % (prefix, n)).encode(), (ip, int(port)))
        if gap:
            time.sleep(gap)

def stream(ip, port, prefix, count, pps, log):
    """Send PREFIX0..PREFIX<count-1> at pps packets/s; log "time key" (CLOCK_REALTIME)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    gap, t0, out = 1.0 / float(pps), time.time(), []
    for n in range(int(count)):
        due = t0 + n * gap
        while time.time() < due:
            time.sleep(max(0.0, min(gap, due - time.time())))
        key = "%s%d" % (prefix, n)
        out.append("%.6f %s" % (time.time(), key))
        s.sendto(key.encode(), (ip, int(port)))
    with open(log, "w") as f:
        f.write("\n".join(out) + "\n")

def pace(ip, port, prefix, pps, log, stopfile, maxn=10000000):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    pps, maxn, out, n = float(pps), int(maxn), [], 0
    t0 = time.time()
    started = False
    while n < maxn:
        if n % 256 == 0 and os.path.exists(stopfile):
            break
        due = int((time.time() - t0) * pps) + 1
        burst = min(due - n, 32)
        if burst <= 0:
            time.sleep(0.0002)
            continue
        for _ in range(burst):
            key = "%s%d" % (prefix, n)
            out.append("%.6f %s" % (time.time(), key))
            s.sendto(key.encode(), (ip, int(port)))
            n += 1
        if not started:
            open(log + ".started", "w").close()
            started = True
    with open(log, "w") as f:
        f.write("\n".join(out) + "\n")

if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "recv":
        recv(*sys.argv[2:5])
    elif cmd == "send":
        send(*sys.argv[2:])
    elif cmd == "stream":
        stream(*sys.argv[2:8])
    elif cmd == "pace":
        pace(*sys.argv[2:10])
    else:
        sys.exit("usage: ops_udp.py recv PORT OUT | send IP PORT PREFIX FIRST COUNT [PPS]")
