#!/usr/bin/python3
"""memcached helper for the end-to-end tests (a real memcached answers; this is only a client).

  mc.py udp HOST PORT set PREFIX N     set PREFIX-0 .. PREFIX-(N-1) over UDP (value = key)
  mc.py udp HOST PORT get PREFIX N     get them over UDP; prints "KEY VALUE" per hit
  mc.py tcp-keys HOST PORT             every key the server holds (lru_crawler metadump)
  mc.py tcp-get HOST PORT KEY...       "KEY VALUE" for each key the server has, over TCP
  mc.py locate PORT PREFIX N HOST...   ask every HOST over TCP for PREFIX-0 .. PREFIX-(N-1);
                                       prints "KEY I" (I: 1-based position of a HOST holding
                                       KEY with the right value) for each copy found

UDP requests carry the 8-byte memcached frame header (request id, sequence 0, count 1).
Each UDP request is sent once and waits up to 1 s for its answer; the last line of the
udp commands is "sent N answered A lost L" (exit status 0 only when L = 0).
"""
import socket
import struct
import sys
import urllib.parse


def udp(host, port, op, prefix, n):
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.settimeout(1.0)
    s.connect((host, port))
    answered = 0
    for i in range(n):
        key = "%s-%d" % (prefix, i)
        if op == "set":
            body = ("set %s 0 0 %d\r\n%s\r\n" % (key, len(key), key)).encode()
        else:
            body = ("get %s\r\n" % key).encode()
        rid = i & 0xFFFF
        s.send(struct.pack("!HHHH", rid, 0, 1, 0) + body)
        while True:
            try:
                pkt = s.recv(65536)
            except socket.timeout:
                pkt = None
                break
            if len(pkt) >= 8 and struct.unpack("!H", pkt[:2])[0] == rid:
                break
        if pkt is None:
            continue
        text = pkt[8:].decode(errors="replace")
        if op == "set":
            if text.startswith("STORED"):
                answered += 1
            else:
                print("%s unexpected answer %r" % (key, text[:40]), file=sys.stderr)
        else:
            answered += 1
            lines = text.split("\r\n")
            if lines[0].startswith("VALUE"):
                print("%s %s" % (key, lines[1]))
    print("sent %d answered %d lost %d" % (n, answered, n - answered))
    return 0 if answered == n else 1


def tcp_lines(host, port, cmd, end):
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    s = socket.create_connection((host, port), timeout=5) if fam == socket.AF_INET \
        else socket.create_connection((host, port, 0, 0), timeout=5)
    s.sendall(cmd.encode())
    buf = b""
    while not buf.endswith(end):
        chunk = s.recv(65536)
        if not chunk:
            break
        buf += chunk
    s.close()
    return buf.decode(errors="replace").split("\r\n")


def main(argv):
    if len(argv) >= 6 and argv[1] == "udp" and argv[4] in ("set", "get"):
        return udp(argv[2], int(argv[3]), argv[4], argv[5], int(argv[6]) if len(argv) > 6 else 1)
    if len(argv) == 4 and argv[1] == "tcp-keys":
        for line in tcp_lines(argv[2], int(argv[3]), "lru_crawler metadump all\r\n", b"END\r\n"):
            if line.startswith("key="):
                print(urllib.parse.unquote(line.split()[0][4:]))
        return 0
    if len(argv) >= 5 and argv[1] == "tcp-get":
        lines = tcp_lines(argv[2], int(argv[3]), "get %s\r\n" % " ".join(argv[4:]), b"END\r\n")
        for i, line in enumerate(lines):
            if line.startswith("VALUE"):
                print("%s %s" % (line.split()[1], lines[i + 1]))
        return 0
    if len(argv) >= 6 and argv[1] == "locate":
        port, prefix, n = int(argv[2]), argv[3], int(argv[4])
        keys = ["%s-%d" % (prefix, i) for i in range(n)]
        for hi, host in enumerate(argv[5:], 1):
            for c in range(0, n, 100):
                lines = tcp_lines(host, port, "get %s\r\n" % " ".join(keys[c:c + 100]), b"END\r\n")
                for i, line in enumerate(lines):
                    if line.startswith("VALUE") and lines[i + 1] == line.split()[1]:
                        print("%s %d" % (line.split()[1], hi))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
