#!/usr/bin/env python3
# Real UDP packets for the trace/top tests (tests/bats/e2e_trace.bats), from plain sockets:
#   trace_send.py dns IP PORT NAMESFILE [REPEAT]     one DNS query (A) per name
#   trace_send.py mc IP PORT KEYSFILE                memcached UDP "get KEY" per key
#   trace_send.py payload IP PORT KEYSFILE           the key as the whole payload
#   trace_send.py quic IP PORT CIDSFILE              a QUIC short-header packet per CID (hex)
#   trace_send.py raw IP PORT HEXPAYLOAD COUNT       COUNT copies of one payload
# Paced at PPS (environment, default 20000) so that the trace's reader keeps up.
import os, socket, struct, sys, time

def sock(ip):
    fam = socket.AF_INET6 if ":" in ip else socket.AF_INET
    return socket.socket(fam, socket.SOCK_DGRAM)

def dns_query(name, qid):
    labels = [l for l in name.rstrip(".").split(".") if l]
    q = b"".join(bytes([len(l)]) + l.encode() for l in labels) + b"\0"
    return struct.pack("!HHHHHH", qid & 0xffff, 0x0100, 1, 0, 0, 0) + q + struct.pack("!HH", 1, 1)

def lines(path):
    with open(path) as f:
        return [l.split()[0] for l in f if l.strip() and not l.startswith("#")]

def main():
    kind, ip, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    s = sock(ip)
    pps = float(os.environ.get("PPS", "20000"))
    if kind == "raw":
        payloads = [bytes.fromhex(sys.argv[4])] * int(sys.argv[5])
    else:
        keys = lines(sys.argv[4])
        rep = int(sys.argv[5]) if len(sys.argv) > 5 else 1
        payloads = []
        for r in range(rep):
            for i, k in enumerate(keys):
                if kind == "dns":
                    payloads.append(dns_query(k, i))
                elif kind == "mc":
                    payloads.append(struct.pack("!HHHH", i & 0xffff, 0, 1, 0) + b"get " + k.encode() + b"\r\n")
                elif kind == "payload":
                    payloads.append(k.encode())
                elif kind == "quic":
                    payloads.append(b"\x41" + bytes.fromhex(k) + os.urandom(24))
    t0 = time.monotonic()
    for n, p in enumerate(payloads):
        ahead = t0 + n / pps - time.monotonic()
        if ahead > 0.002:
            time.sleep(ahead)
        s.sendto(p, (ip, port))
    print(len(payloads))

main()
