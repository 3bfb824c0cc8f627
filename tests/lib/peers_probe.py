#!/usr/bin/python3
"""Which backend answers each key: DNS queries over UDP through a router (keyrouter, dnsdist,
nginx, nftables) to the topology's unbound backends, whose A answers 10.250.0.I name
backend I (tests/lib/topo.sh).  Used by the peer benchmark (scripts/bench.d/peers.sh) and
tests/bats/peers.bats.

  peers_probe.py names SERVER NAMESFILE
      one A query per name of NAMESFILE (first field of each line), from one socket;
      prints "NAME I" per answered name (NAME as written in the file)
  peers_probe.py tuples SERVER SRCADDR PORT0 COUNT
      one A query from each source port PORT0 .. PORT0+COUNT-1 of SRCADDR (its own
      socket: the tuple key is the query's source address and port); prints
      "SRCADDR:PORT I" per answered port

Queries go out WINDOW at a time (-w, default 128), each retried up to 3 times after 1 s
without an answer; names or ports that never get an answer are left out (the caller
counts them).  Exit status 0 when at least one answer came back.
"""
import argparse
import select
import socket
import struct
import sys
import time

TRIES = 3
TIMEOUT = 1.0


def query(qid, name):
    wire = b""
    for label in name.rstrip(".").split("."):
        b = label.encode()
        if not 0 < len(b) < 64:
            raise ValueError("bad name %r" % name)
        wire += bytes([len(b)]) + b
    # RD off: the backends answer from their local zone
    return struct.pack("!HHHHHH", qid, 0, 1, 0, 0, 0) + wire + b"\0" + struct.pack("!HH", 1, 1)


def answer_backend(msg):
    """(id, backend index) of a response whose answer is A 10.250.0.I, else (id, None)."""
    if len(msg) < 12:
        return None, None
    qid, flags, _, an = struct.unpack("!HHHH", msg[:8])
    if an < 1 or flags & 0xF or len(msg) < 16 or msg[-6:-4] != b"\0\4" or msg[-4:-1] != b"\x0a\xfa\0":
        return qid, None
    return qid, msg[-1]


def run(items, window, sock_for, item_of, finished):
    """Send items[i] (a query) from sock_for(i), up to `window` unanswered at once;
    item_of(sock, qid) says which item an answer on sock answers; finished(i, sock) is
    called once per item (answered or given up), True when sock is then closed.
    Returns {i: backend}."""
    got = {}
    pending = {}        # i -> (socket, deadline, tries)
    socks = {}          # fd -> socket
    poll = select.poll()
    nxt = 0

    def send(s, i):
        try:
            s.send(items[i])
        except OSError:     # an earlier ICMP error on this socket: the retry resends
            pass

    def finish(i, s):
        del pending[i]
        if finished(i, s):
            poll.unregister(s.fileno())
            del socks[s.fileno()]
            s.close()

    while nxt < len(items) or pending:
        while nxt < len(items) and len(pending) < window:
            s = sock_for(nxt)
            if s.fileno() not in socks:
                poll.register(s.fileno(), select.POLLIN)
                socks[s.fileno()] = s
            send(s, nxt)
            pending[nxt] = (s, time.monotonic() + TIMEOUT, 1)
            nxt += 1
        for fd, _ in poll.poll(50):
            s = socks.get(fd)
            while s is not None:
                try:
                    msg = s.recv(4096)
                except OSError:     # nothing left, or an ICMP error
                    break
                qid, b = answer_backend(msg)
                i = item_of(s, qid)
                if i in pending and pending[i][0] is s and b is not None:
                    got[i] = b
                    open_after = fd in socks
                    finish(i, s)
                    if open_after and fd not in socks:
                        break
        now = time.monotonic()
        for i, (s, dl, tries) in list(pending.items()):
            if dl > now:
                continue
            if tries >= TRIES:
                finish(i, s)
            else:
                send(s, i)
                pending[i] = (s, now + TIMEOUT, tries + 1)
    return got


def udp_socket(server, src=None, port=0):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
    if src is not None:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((src, port))
    s.connect((server, 53))
    s.setblocking(False)
    return s


def probe_names(server, path, window):
    names = []
    with open(path) as f:
        for line in f:
            f0 = line.split()
            if f0 and not f0[0].startswith("#"):
                names.append(f0[0])
    s = udp_socket(server)
    # the DNS id is the name's index mod 65536; at most `window` names are outstanding,
    # so an id names the last item sent with it
    items = [query(i & 0xFFFF, n) for i, n in enumerate(names)]
    last = {}

    def sock_for(i):
        last[i & 0xFFFF] = i
        return s

    got = run(items, window, sock_for, lambda sock, qid: last.get(qid), lambda i, sock: False)
    for i, n in enumerate(names):
        if i in got:
            print(n, got[i])
    return bool(got)


def probe_tuples(server, src, port0, count, window):
    item = {}           # fd -> item: one socket (source port) per item

    def sock_for(i):
        s = udp_socket(server, src, port0 + i)
        item[s.fileno()] = i
        return s

    def finished(i, sock):
        del item[sock.fileno()]
        return True

    items = [query(i & 0xFFFF, "tuple.kr.test") for i in range(count)]
    got = run(items, window, sock_for, lambda sock, qid: item.get(sock.fileno()), finished)
    for i in range(count):
        if i in got:
            print("%s:%d %d" % (src, port0 + i, got[i]))
    return bool(got)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-w", "--window", type=int, default=128)
    sub = ap.add_subparsers(dest="mode", required=True)
    n = sub.add_parser("names")
    n.add_argument("server")
    n.add_argument("names_file")
    t = sub.add_parser("tuples")
    t.add_argument("server")
    t.add_argument("src")
    t.add_argument("port0", type=int)
    t.add_argument("count", type=int)
    a = ap.parse_args()
    if a.mode == "names":
        ok = probe_names(a.server, a.names_file, a.window)
    else:
        if not (1024 <= a.port0 and a.port0 + a.count <= 65536 and a.count > 0):
            ap.error("tuples: ports PORT0 .. PORT0+COUNT-1 must lie in 1024..65535")
        ok = probe_tuples(a.server, a.src, a.port0, a.count, a.window)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
