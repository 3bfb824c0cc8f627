#!/usr/bin/python3
"""Check a backend's ipip decapsulation without keyrouter (end-to-end test helper).

  ipip.py send OUTER_DST,SRC,SPORT,VIP,NAME ...  (in the router's namespace) encapsulate a DNS
        query SRC:SPORT -> VIP:53 for NAME TXT in an outer IPv4 (IPIP, 6in4) or IPv6 (4in6,
        6in6) header to OUTER_DST, through a raw socket: the kernel adds the outer header.
  ipip.py recv SRC,SPORT ...                      (in the client's namespace) prints "ready"
        once bound, then waits up to 15 s in all for an answer on each SRC:SPORT; prints
        "SPORT from PEER: TXT..." per answer, "SPORT timeout" per missing one.
"""
import socket
import struct
import sys
import time


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def dns_query(name):
    q = struct.pack("!HHHHHH", 0x4b52, 0x0100, 1, 0, 0, 0)
    for label in name.rstrip(".").split("."):
        q += bytes([len(label)]) + label.encode()
    return q + b"\0" + struct.pack("!HH", 16, 1)


def inner_packet(src, sport, dst, payload):
    v6 = ":" in dst
    fam = socket.AF_INET6 if v6 else socket.AF_INET
    s, d = socket.inet_pton(fam, src), socket.inet_pton(fam, dst)
    ulen = 8 + len(payload)
    udp = struct.pack("!HHHH", sport, 53, ulen, 0) + payload
    if v6:
        pseudo = s + d + struct.pack("!IxxxB", ulen, 17)
    else:
        pseudo = s + d + struct.pack("!xBH", 17, ulen)
    c = csum(pseudo + udp) or 0xFFFF
    udp = udp[:6] + struct.pack("!H", c) + udp[8:]
    if v6:
        return struct.pack("!IHBB", 6 << 28, ulen, 17, 64) + s + d + udp
    hdr = struct.pack("!BBHHHBBH", 0x45, 0, 20 + ulen, 1, 0, 64, 17, 0) + s + d
    hdr = hdr[:10] + struct.pack("!H", csum(hdr)) + hdr[12:]
    return hdr + udp


def send(outer, src, sport, vip, name):
    pkt = inner_packet(src, int(sport), vip, dns_query(name))
    proto = 41 if ":" in vip else 4
    fam = socket.AF_INET6 if ":" in outer else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_RAW, proto)
    s.sendto(pkt, (outer, 0))
    return 0


def recv(specs):
    socks = []
    for spec in specs:
        src, sport = spec.split(",")
        fam = socket.AF_INET6 if ":" in src else socket.AF_INET
        s = socket.socket(fam, socket.SOCK_DGRAM)
        s.bind((src, int(sport)))
        socks.append((sport, s))
    print("ready", flush=True)
    deadline = time.time() + 15.0
    rc = 0
    for sport, s in socks:
        s.settimeout(max(0.01, deadline - time.time()))
        try:
            data, peer = s.recvfrom(4096)
        except socket.timeout:
            print("%s timeout" % sport)
            rc = 1
            continue
        print("%s from %s: %s" % (sport, peer[0], txt(data)), flush=True)
    return rc


def txt(data):
    # skip the header and the question, print the TXT strings of the answers
    pos = 12
    while data[pos]:
        pos += data[pos] + 1
    pos += 5
    out = []
    for _ in range(struct.unpack("!H", data[6:8])[0]):
        pos += 2 if data[pos] & 0xC0 == 0xC0 else 0
        rtype, _, _, rdlen = struct.unpack("!HHIH", data[pos:pos + 10])
        rdata = data[pos + 10:pos + 10 + rdlen]
        pos += 10 + rdlen
        if rtype == 16:
            out.append(rdata[1:1 + rdata[0]].decode())
    return " ".join(out)


if __name__ == "__main__":
    a = sys.argv
    if len(a) > 2 and a[1] == "send":
        for spec in a[2:]:
            send(*spec.split(","))
        sys.exit(0)
    if len(a) > 2 and a[1] == "recv":
        sys.exit(recv(a[2:]))
    print(__doc__, file=sys.stderr)
    sys.exit(2)
