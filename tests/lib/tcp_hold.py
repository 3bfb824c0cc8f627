#!/usr/bin/python3
"""Long-lived DNS-over-TCP connections (tests/bats/e2e_tcp.bats).

tcp_hold.py VIP PORT SRC FIRSTPORT N SECONDS: N connections to VIP:PORT, connection i from
SRC:FIRSTPORT+i, each asking an A query every 100 ms over its one connection until SECONDS
pass.  An answer's A record 10.250.0.I names backend I.  Prints one line per connection:
"SPORT BACKENDS ANSWERS BROKEN", BACKENDS the distinct backends that answered it (comma
separated, in order), BROKEN 1 when the connection failed (reset, closed, timeout)."""
import selectors
import socket
import struct
import sys
import time


def query(qid, name):
    q = struct.pack('!HHHHHH', qid, 0x0100, 1, 0, 0, 0)
    for label in name.split('.'):
        q += bytes([len(label)]) + label.encode()
    q += b'\0' + struct.pack('!HH', 1, 1)
    return struct.pack('!H', len(q)) + q


def answer_backend(msg):
    """The last octet of the first A record's address, or None."""
    if len(msg) < 12:
        return None
    an = struct.unpack_from('!H', msg, 6)[0]
    o = 12
    while o < len(msg) and msg[o]:
        o += msg[o] + 1
    o += 5
    for _ in range(an):
        if o < len(msg) and msg[o] & 0xc0 == 0xc0:
            o += 2
        else:
            while o < len(msg) and msg[o]:
                o += msg[o] + 1
            o += 1
        if o + 10 > len(msg):
            return None
        typ, _, _, rdlen = struct.unpack_from('!HHIH', msg, o)
        o += 10
        if typ == 1 and rdlen == 4:
            return msg[o + 3]
        o += rdlen
    return None


def main():
    vip, port, src, first, n, secs = sys.argv[1], int(sys.argv[2]), sys.argv[3], \
        int(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6])
    fam = socket.AF_INET6 if ':' in vip else socket.AF_INET
    conns = []
    for i in range(n):
        s = socket.socket(fam, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((src, first + i))
        s.settimeout(3)
        st = {'s': s, 'port': first + i, 'seen': [], 'answers': 0, 'broken': 0, 'buf': b''}
        try:
            s.connect((vip, port))
        except OSError:
            st['broken'] = 1
        conns.append(st)
    end = time.monotonic() + secs
    qid = 0
    while time.monotonic() < end:
        t0 = time.monotonic()
        for c in conns:
            if c['broken']:
                continue
            qid = (qid + 1) & 0xffff
            try:
                c['s'].sendall(query(qid, 'h%d.kr.test' % c['port']))
                while True:
                    if len(c['buf']) >= 2:
                        ln = struct.unpack_from('!H', c['buf'])[0]
                        if len(c['buf']) >= 2 + ln:
                            msg, c['buf'] = c['buf'][2:2 + ln], c['buf'][2 + ln:]
                            break
                    d = c['s'].recv(4096)
                    if not d:
                        raise OSError('closed')
                    c['buf'] += d
                b = answer_backend(msg)
                if b is None:
                    raise OSError('no answer')
                c['answers'] += 1
                if not c['seen'] or c['seen'][-1] != b:
                    c['seen'].append(b)
            except OSError:
                c['broken'] = 1
        time.sleep(max(0.0, 0.1 - (time.monotonic() - t0)))
    for c in conns:
        print(c['port'], ','.join(str(b) for b in c['seen']) or '-', c['answers'], c['broken'])
        c['s'].close()


main()
