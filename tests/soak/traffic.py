#!/usr/bin/python3
"""The soak test's client (tests/soak/soak.py starts it in the client's namespace).

  traffic.py VIP DNS_RATE MC_RATE OUT STOPFILE

Sends DNS queries (A, a new name under kr.test each, to VIP:53) and memcached UDP
requests (9 gets for 1 set, keys s-0 .. s-4999, to VIP:11211), each at its rate per
second, paced, until STOPFILE exists; then waits for the last answers and exits.
Writes one line per query to OUT:

  SEND_TIME PROTO OUTCOME BACKEND

SEND_TIME: the wall clock (time.time(), as the driver's events) when it was sent;
PROTO: dns | mc; OUTCOME: ok (answered) | lost (no answer within TIMEOUT s);
BACKEND: for dns the backend that answered (unbound on backend I answers A 10.250.0.I), else -.
An answer already in the socket's buffer is read before anything is declared lost, so a
client descheduled for a while (a busy machine) does not make losses of its own.
"""
import os
import select
import socket
import struct
import sys
import time

TIMEOUT = 3.0
DNS_PORT = 53
MC_PORT = 11211
ZONE = "kr.test"


def dns_query(qid, name):
    q = b"".join(bytes([len(l)]) + l.encode() for l in name.split(".")) + b"\0"
    return struct.pack("!HHHHHH", qid, 0x0100, 1, 0, 0, 0) + q + struct.pack("!HH", 1, 1)


def dns_backend(pkt):
    """The backend index of an answer (A 10.250.0.I), or '-' when there is none."""
    if len(pkt) < 12:
        return "-"
    an = struct.unpack("!H", pkt[6:8])[0]
    p = 12
    while p < len(pkt) and pkt[p] != 0:
        p += pkt[p] + 1
    p += 5
    for _ in range(an):
        if p + 12 > len(pkt):
            break
        p += 2 if pkt[p] & 0xC0 == 0xC0 else 0
        typ, _cls, _ttl, rdlen = struct.unpack("!HHIH", pkt[p:p + 10])
        p += 10
        if typ == 1 and rdlen == 4 and pkt[p:p + 3] == bytes([10, 250, 0]):
            return str(pkt[p + 3])
        p += rdlen
    return "-"


def main(argv):
    vip, dns_rate, mc_rate, out, stop = argv[1], float(argv[2]), float(argv[3]), argv[4], argv[5]
    fam = socket.AF_INET6 if ":" in vip else socket.AF_INET
    dns = socket.socket(fam, socket.SOCK_DGRAM)
    mc = socket.socket(fam, socket.SOCK_DGRAM)
    for s, port in ((dns, DNS_PORT), (mc, MC_PORT)):
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
        s.connect((vip, port))
        s.setblocking(False)
    f = open(out, "w", buffering=1 << 16)
    pending = {"dns": {}, "mc": {}}
    seq = {"dns": 0, "mc": 0}
    gap = {"dns": 1.0 / dns_rate, "mc": 1.0 / mc_rate}
    now = time.time()
    due = {"dns": now, "mc": now + gap["mc"] / 2}
    stopping = None
    open(out + ".started", "w").close()
    last_check = 0.0

    def drain():
        for proto, s in (("dns", dns), ("mc", mc)):
            while True:
                try:
                    pkt = s.recv(65536)
                except (BlockingIOError, InterruptedError):
                    break
                except OSError:	# an ICMP error (port unreachable) reported on the socket
                    continue
                if len(pkt) < 8:
                    continue
                rid = struct.unpack("!H", pkt[:2])[0]
                q = pending[proto].pop(rid, None)
                if q is None:
                    continue
                be = dns_backend(pkt) if proto == "dns" else "-"
                f.write("%.6f %s ok %s\n" % (q, proto, be))

    def expire(t):
        for proto in pending:
            for rid, ts in list(pending[proto].items()):
                if t - ts > TIMEOUT:
                    del pending[proto][rid]
                    f.write("%.6f %s lost -\n" % (ts, proto))

    while True:
        now = time.time()
        if stopping is None:
            for proto, s in (("dns", dns), ("mc", mc)):
                # paced: a late round sends what is due (no burst beyond one second's worth)
                n = 0
                while due[proto] <= now and n < 1000:
                    rid = seq[proto] & 0xFFFF
                    if proto == "dns":
                        pkt = dns_query(rid, "q%d.%s" % (seq[proto], ZONE))
                    else:
                        k = "s-%d" % (seq[proto] % 5000)
                        body = ("set %s 0 0 %d\r\n%s\r\n" % (k, len(k), k) if seq[proto] % 10 == 0
                                else "get %s\r\n" % k)
                        pkt = struct.pack("!HHHH", rid, 0, 1, 0) + body.encode()
                    try:
                        s.send(pkt)
                    except OSError:
                        pass	# an earlier ICMP error surfaced here: the query is lost
                    pending[proto][rid] = time.time()
                    seq[proto] += 1
                    due[proto] += gap[proto]
                    n += 1
                if due[proto] < now - 1.0:
                    due[proto] = now
            if now - last_check > 0.2:
                last_check = now
                if os.path.exists(stop):
                    stopping = now
        nxt = min(due.values()) if stopping is None else now + 0.05
        r, _, _ = select.select([dns, mc], [], [], max(0.0, min(nxt - time.time(), 0.05)))
        drain()
        expire(time.time())
        if stopping is not None and (not any(pending.values())
                                     or time.time() - stopping > TIMEOUT + 1):
            break
    drain()
    expire(float("inf"))
    f.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
