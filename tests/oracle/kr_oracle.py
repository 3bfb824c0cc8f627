#!/usr/bin/python3
"""Independent packet oracle of keyrouter's data path.

A second implementation of "frame -> verdict, counter, service, key bytes, key hash",
written from the rules in docs/datapath.md and the key definitions of docs/config.md, in
Python, sharing no code with include/kr_parse.h or include/kr_key.h.  Headers are decoded
with struct here; a sample of the frames is also dissected by scapy (Debian's
python3-scapy) and the two decodings must agree, so the oracle's own header reading is
checked by a third party.  Hashes: zlib.crc32 and the SipHash-1-3 reference below.

  kr_oracle.py gen COUNT SEED     the world, then COUNT random and mutated frames with the
                                  oracle's expectation, as binary records on stdout
                                  (tests/bpf/test_oracle.c reads and checks them against
                                  the XDP and TC programs through BPF_PROG_TEST_RUN)
  kr_oracle.py deep COUNT SEED    frames with deep IPv6 extension headers, longer than a page
                                  (tests/bats/oracle_tc.bats): "frame-hex reason key-hex"
  kr_oracle.py send IFACE FILE    send such frames on IFACE through an AF_PACKET socket
  kr_oracle.py selftest           the oracle on hand-made frames with known answers

QUIC-LB (docs/quic.md): two `quic` services carry QUIC-LB configurations (plaintext,
single pass, four pass with 3 and 4 passes, odd and even lengths, two keys, unconfigured
rotations) and server IDs of backends up, draining and down; their frames carry routable
CIDs of known server IDs, unknown server IDs, unknown rotations, rotation 0b111, CIDs too
short and over 20 octets, long headers (versions 1, 0 = version negotiation, others) and
short headers.  The oracle decodes CIDs with tests/lib/quic_lb_oracle.py
(python3-cryptography's AES) and decides by the documented order of the stage.

Record format (little-endian) -- header: b"KRO1", u32 nservices, nservices x SERVICE;
u32 nconfigs, nconfigs x (u8 service, u8 config rotation, u8 server ID length, u8 nonce
length, u8 keyed, 16 key bytes); u32 nserverids, nserverids x (u8 service, u8 rotation,
u8 server ID length, 16 server ID bytes zero-padded, u16 backend index in the service);
u32 nextra, nextra x (u8 service, u16 backend index, u8 state): backends outside the ring
named by server IDs; then per frame: u32 frame length (0xffffffff ends the stream, followed by u32 frames
sampled for scapy, u32 disagreements, u32 frames scapy could not dissect), frame bytes, u8 verdict, u8 reason, u8 service
index (255 = none), u8 key status, u16 key length, key bytes, u32 key hash, u8 flags,
u8 QUIC-LB outcome (255: the stage is not reached), u8 config rotation, u16 backend index
routed to by CID (0xffff: the ring decides).
"""
import os
import random
import struct
import sys
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lib'))
import quic_lb_oracle as qlb    # noqa: E402  (independent QUIC-LB codec, python3-cryptography)

# ---- verdicts, reasons (the kr_counters field that counts the packet) ------------------
PASS, DROP, FORWARD = 0, 1, 2
(R_PARSE_ERROR, R_FRAGMENT, R_NOMATCH, R_NO_KEY, R_TOO_LONG, R_BAD_SERVICE, R_NO_RING,
 R_ALL_DOWN, R_WALK_LIMIT, R_ROUTED) = range(10)
KEY_OK, KEY_NOT_FOUND, KEY_TOO_LONG, KEY_BAD_SERVICE = range(4)
# frame flags
F_MUTATED = 1

# ---- SipHash-1-3 (reference, from the algorithm's description) -------------------------
M64 = (1 << 64) - 1


def _rotl(x, b):
    return ((x << b) | (x >> (64 - b))) & M64


def siphash(key16, msg, c=1, d=3):
    k0 = int.from_bytes(key16[:8], 'little')
    k1 = int.from_bytes(key16[8:], 'little')
    v = [k0 ^ 0x736f6d6570736575, k1 ^ 0x646f72616e646f6d,
         k0 ^ 0x6c7967656e657261, k1 ^ 0x7465646279746573]

    def rnd():
        v[0] = (v[0] + v[1]) & M64; v[1] = _rotl(v[1], 13) ^ v[0]; v[0] = _rotl(v[0], 32)
        v[2] = (v[2] + v[3]) & M64; v[3] = _rotl(v[3], 16) ^ v[2]
        v[0] = (v[0] + v[3]) & M64; v[3] = _rotl(v[3], 21) ^ v[0]
        v[2] = (v[2] + v[1]) & M64; v[1] = _rotl(v[1], 17) ^ v[2]; v[2] = _rotl(v[2], 32)

    data = msg + b'\0' * (7 - len(msg) % 8) + bytes([len(msg) & 0xff])
    for o in range(0, len(data), 8):
        m = int.from_bytes(data[o:o + 8], 'little')
        v[3] ^= m
        for _ in range(c):
            rnd()
        v[0] ^= m
    v[2] ^= 0xff
    for _ in range(d):
        rnd()
    return v[0] ^ v[1] ^ v[2] ^ v[3]


def siphash13_32(key16, msg):
    h = siphash(key16, msg)
    return (h ^ (h >> 32)) & 0xffffffff


SECRET = bytes.fromhex('efbeaddedf0ad8bbefcdab8967452301')   # k0, k1 little-endian

# ---- the world: services and rings -----------------------------------------------------
TUPLE, PAYLOAD, DNS, MEMCACHE, QUIC = 1, 2, 3, 4, 5
POL_PASS, POL_DROP = 0, 1
# ring kinds (tests/bpf/test_oracle.c builds them): backends all up; all down with exactly
# 65 points (the walk covers the ring); all down with 160 points of 4 backends (the walk
# stops at 64 points, then the backend table says none is up); nothing published; all down
# with 300 backends (beyond the 256 table entries scanned: reported as the walk limit, the
# one documented imprecision of "all down"); one backend of 100 up (a key is routed to it
# when it is within 64 points of the key's point, else walk limit: the driver decides from
# the engine's ring, the oracle says "forward")
RING_UP, RING_DOWN65, RING_DOWNBIG, RING_NONE, RING_DOWN300, RING_WALK = range(6)
KEYED = 2
DELIM = 1
QLB = 4                 # the service has QUIC-LB configurations (its off = QUIC-LB id,
                        # plen = the tag of its entries: the same fields in the map value)
VIP4 = bytes([192, 0, 2, 53])
VIP6 = bytes.fromhex('20010db8000000000000000000000053')


class Svc:
    def __init__(self, port, key, ring=RING_UP, family=0, addr=b'', cid=0, off=0, plen=0,
                 delim=0, flags=0, nokey=POL_PASS, toolong=POL_PASS, noroute=POL_PASS):
        self.port, self.key, self.ring, self.family = port, key, ring, family
        self.addr = addr.ljust(16, b'\0')
        self.cid, self.off, self.plen, self.delim, self.flags = cid, off, plen, delim, flags
        self.nokey, self.toolong, self.noroute = nokey, toolong, noroute

    def pack(self):
        return struct.pack('<HB16sBBHHBBBBBB', self.port, self.family, self.addr, self.key,
                           self.cid, self.off, self.plen, self.delim, self.flags, self.nokey,
                           self.toolong, self.noroute, self.ring)


SERVICES = [
    Svc(53, DNS, toolong=POL_DROP),
    Svc(53, DNS, RING_DOWN65, family=4, addr=VIP4, nokey=POL_DROP),
    Svc(53, DNS, RING_DOWNBIG, family=6, addr=VIP6, noroute=POL_DROP),
    Svc(11211, MEMCACHE, nokey=POL_DROP),
    Svc(443, QUIC, cid=8, nokey=POL_DROP),
    Svc(4433, QUIC, cid=20, flags=KEYED),
    Svc(4434, QUIC),                        # no short-header CID length: bad service
    Svc(9000, PAYLOAD, toolong=POL_DROP),
    Svc(9001, PAYLOAD, off=3, plen=16),
    Svc(9002, PAYLOAD, off=5, delim=0x0a, flags=DELIM, nokey=POL_DROP),
    Svc(9003, TUPLE),
    Svc(9004, TUPLE, RING_NONE, noroute=POL_DROP),
    Svc(9005, PAYLOAD, off=256),
    Svc(9006, PAYLOAD, flags=KEYED, toolong=POL_DROP),
    Svc(9007, DNS, flags=KEYED),
    Svc(9008, TUPLE, RING_DOWNBIG),
    Svc(9009, PAYLOAD, off=1, flags=DELIM, delim=0x20),
    Svc(9010, TUPLE, RING_WALK, noroute=POL_DROP),
    Svc(9011, DNS, RING_DOWN300),
    Svc(8443, QUIC, cid=8, flags=QLB, off=1, plen=0x5101),
    Svc(8444, QUIC, RING_DOWN65, cid=20, flags=QLB, off=2, plen=0x5102, noroute=POL_DROP),
]

# ---- QUIC-LB (docs/quic.md) --------------------------------------------------------------
# outcomes: the kr_qlb_stats counter of the service that counts the packet
(Q_ROUTED, Q_UNROUTABLE, Q_UNKNOWN_CONFIG, Q_UNKNOWN_SID, Q_TOO_SHORT, Q_BACKEND_DOWN,
 Q_TOO_LONG) = range(7)
Q_NONE = 255
B_UP, B_DOWN, B_DRAIN = 0, 1, 2
QLB_SVC1, QLB_SVC2 = len(SERVICES) - 2, len(SERVICES) - 1
KEY_A = bytes.fromhex('8f95f09245765f80256934e50c66207f')
KEY_B = bytes.fromhex('0123456789abcdeffedcba9876543210')
# service -> {config rotation: (server ID length, nonce length, key or None)}
QLB_CONF = {
    QLB_SVC1: {0: (2, 6, None),         # plaintext, CID 9
               1: (3, 8, KEY_A),        # four pass, nonce >= server ID: 3 passes, odd
               2: (4, 12, KEY_A),       # single pass
               4: (8, 5, KEY_B),        # four pass, server ID > nonce: 4 passes, odd
               5: (1, 4, KEY_B)},       # four pass, shortest, odd
    QLB_SVC2: {3: (2, 14, KEY_B),       # single pass
               6: (15, 4, None),        # plaintext, CID 20 (the longest)
               0: (6, 6, KEY_A)},       # four pass, even, 3 passes
}
# backends named by server IDs outside the ring: (service, index) -> state
QLB_EXTRA = {(QLB_SVC1, 400): B_DRAIN, (QLB_SVC1, 401): B_DOWN, (QLB_SVC1, 402): B_UP,
             (QLB_SVC2, 400): B_UP, (QLB_SVC2, 401): B_DRAIN, (QLB_SVC2, 402): B_DOWN}


def _server_ids():
    """(service, rotation, server ID) -> backend index: ring backends 0..5 (service 1: all
    up; service 2: ring all down, backends 0..3) and the extra ones, fixed pseudo-random IDs."""
    r = random.Random(0x51b)
    out = {}
    for si, confs in QLB_CONF.items():
        bes = list(range(6) if si == QLB_SVC1 else range(4)) + [400, 401, 402]
        for cr, (sl, nl, key) in confs.items():
            for be in bes:
                while True:
                    sid = r.randbytes(sl)
                    if (si, cr, sid) not in out:
                        break
                out[(si, cr, sid)] = be
    return out


QLB_SIDS = _server_ids()
QLB_SID_LIST = {}
for (_si, _cr, _sid), _be in QLB_SIDS.items():
    QLB_SID_LIST.setdefault((_si, _cr), []).append(_sid)


def backend_state(si, be):
    if (si, be) in QLB_EXTRA:
        return QLB_EXTRA[(si, be)]
    return B_UP if SERVICES[si].ring == RING_UP else B_DOWN


def quic_lb(pl, si):
    """The QUIC-LB stage, from docs/quic.md: (outcome, config rotation, backend index or
    None).  Reached only with a DCID (the key was found)."""
    confs = QLB_CONF[si]
    if pl[0] & 0x80:                    # long header, any version: DCID length at octet 5
        cid = pl[6:6 + pl[5]]
    else:                               # short header: the datagram after the first octet
        cid = pl[1:21]
    cr = cid[0] >> 5
    if cr == 7:
        return Q_UNROUTABLE, cr, None
    if cr not in confs:
        return Q_UNKNOWN_CONFIG, cr, None
    if pl[0] & 0x80 and len(cid) > 20:
        return Q_TOO_LONG, cr, None
    sl, nl, key = confs[cr]
    if len(cid) < 1 + sl + nl:
        return Q_TOO_SHORT, cr, None
    _, sid, _ = qlb.decode(bytes(cid), sl, nl, key)
    be = QLB_SIDS.get((si, cr, sid))
    if be is None:
        return Q_UNKNOWN_SID, cr, None
    if backend_state(si, be) == B_DOWN:
        return Q_BACKEND_DOWN, cr, None
    return Q_ROUTED, cr, be             # up and drain: routed by the CID


def pack_quic_lb():
    out = struct.pack('<I', sum(len(c) for c in QLB_CONF.values()))
    for si, confs in QLB_CONF.items():
        for cr, (sl, nl, key) in confs.items():
            out += struct.pack('<BBBBB16s', si, cr, sl, nl, key is not None, key or b'')
    out += struct.pack('<I', len(QLB_SIDS))
    for (si, cr, sid), be in QLB_SIDS.items():
        out += struct.pack('<BBB16sH', si, cr, len(sid), sid, be)
    out += struct.pack('<I', len(QLB_EXTRA))
    for (si, be), state in QLB_EXTRA.items():
        out += struct.pack('<BHB', si, be, state)
    return out

# ---- the oracle: headers --------------------------------------------------------------
MAX_VLANS, MAX_EXT = 2, 8
TAGS = (0x8100, 0x88a8)
EXT = (0, 43, 60, 44)


class Parsed:
    pass


def parse(f):
    """('ok', Parsed) or (reason, None)."""
    n = len(f)
    if n < 14:
        return R_PARSE_ERROR, None
    etype, off = struct.unpack_from('!H', f, 12)[0], 14
    tags = 0
    while etype in TAGS:
        if tags == MAX_VLANS:
            return R_NOMATCH, None          # a third tag: not ours
        if off + 4 > n:
            return R_PARSE_ERROR, None
        etype = struct.unpack_from('!H', f, off + 2)[0]
        off, tags = off + 4, tags + 1
    p = Parsed()
    p.l3 = off
    if etype == 0x0800:
        if off + 20 > n:
            return R_PARSE_ERROR, None
        vihl, tot, frag, proto = f[off], *struct.unpack_from('!H2xH', f, off + 2), f[off + 9]
        hl = (vihl & 15) * 4
        if vihl >> 4 != 4 or hl < 20 or tot < hl or off + tot > n:
            return R_PARSE_ERROR, None
        if frag & 0x1fff:
            return R_FRAGMENT, None
        p.family, p.src, p.dst = 4, f[off + 12:off + 16], f[off + 16:off + 20]
        p.l3_end, l4 = off + tot, off + hl
    elif etype == 0x86dd:
        if off + 40 > n:
            return R_PARSE_ERROR, None
        plen, nh = struct.unpack_from('!HB', f, off + 4)
        if f[off] >> 4 != 6 or plen == 0 or off + 40 + plen > n:
            return R_PARSE_ERROR, None
        p.family, p.src, p.dst = 6, f[off + 8:off + 24], f[off + 24:off + 40]
        p.l3_end, l4 = off + 40 + plen, off + 40
        for _ in range(MAX_EXT):
            if nh not in EXT:
                break
            if l4 + 8 > n:
                return R_PARSE_ERROR, None
            if nh == 44:
                if struct.unpack_from('!H', f, l4 + 2)[0] >> 3:
                    return R_FRAGMENT, None
                size = 8
            else:
                size = 8 * (f[l4 + 1] + 1)
            nh, l4 = f[l4], l4 + size
            if l4 > p.l3_end:
                return R_PARSE_ERROR, None
        else:
            if nh in EXT:
                return R_PARSE_ERROR, None  # more extension headers than walked
        proto = nh
    else:
        return R_NOMATCH, None
    if proto == 6:
        # TCP (docs/datapath.md "TCP"): a 20-byte header whose data offset (5..15 words)
        # fits in the IP packet; a valid one is not ours here (the world has no TCP
        # service), a malformed one a parse error, in both programs
        if l4 + 20 > p.l3_end or f[l4 + 12] >> 4 < 5 or l4 + (f[l4 + 12] >> 4) * 4 > p.l3_end:
            return R_PARSE_ERROR, None
        return R_NOMATCH, None
    if proto != 17:
        return R_NOMATCH, None
    if l4 + 8 > p.l3_end:
        return R_PARSE_ERROR, None
    sport, dport, ulen = struct.unpack_from('!HHH', f, l4)
    if ulen < 8 or l4 + ulen > p.l3_end:
        return R_PARSE_ERROR, None
    p.sport, p.dport = sport, dport
    p.payload = f[l4 + 8:l4 + ulen]
    p.l4 = l4
    return 'ok', p


def service(p):
    wild = None
    for i, s in enumerate(SERVICES):
        if s.port != p.dport:
            continue
        if s.family == 0:
            wild = i
        elif s.family == p.family and s.addr[:len(p.dst)] == p.dst:
            return i
    return wild


# ---- the oracle: keys ------------------------------------------------------------------
WINDOW, MAX_KEY, MAX_OFF = 512, 255, 256
MC_KEY_FIRST = {b'get', b'gets', b'set', b'add', b'replace', b'append', b'prepend', b'cas',
                b'delete', b'incr', b'decr', b'touch', b'mg', b'ms', b'md', b'ma'}
MC_KEY_SECOND = {b'gat', b'gats'}


def key_tuple(p, s):
    return KEY_OK, bytes(p.src) + struct.pack('!H', p.sport)


def key_payload(p, s):
    pl = p.payload
    if s.off > MAX_OFF:
        return KEY_BAD_SERVICE, b''
    if s.off > len(pl):
        return KEY_NOT_FOUND, b''
    if s.plen:
        if s.plen > MAX_KEY:
            return KEY_TOO_LONG, b''
        if s.off + s.plen > len(pl):
            return KEY_NOT_FOUND, b''
        return KEY_OK, pl[s.off:s.off + s.plen]
    rest = pl[s.off:]
    if s.flags & DELIM:
        i = rest.find(bytes([s.delim]), 0, MAX_KEY + 1)
        if i >= 0:
            return KEY_OK, rest[:i]
        return (KEY_TOO_LONG, b'') if len(rest) > MAX_KEY else (KEY_NOT_FOUND, b'')
    return (KEY_TOO_LONG, b'') if len(rest) > MAX_KEY else (KEY_OK, rest)


def key_dns(p, s):
    pl = p.payload
    if len(pl) < 12 or pl[2] & 0x80 or pl[4:6] == b'\0\0':
        return KEY_NOT_FOUND, b''
    name, pos = bytearray(), 12
    while True:
        # the name so far plus this length byte must fit 255 bytes; a byte that is not
        # in the payload is a truncated name, whatever the length so far
        if pos >= len(pl):
            return KEY_NOT_FOUND, b''
        if len(name) == MAX_KEY:
            return KEY_TOO_LONG, b''
        ln = pl[pos]
        if ln > 63:
            return KEY_NOT_FOUND, b''
        name.append(ln)
        if ln == 0:
            return KEY_OK, bytes(name)
        label = pl[pos + 1:pos + 1 + ln]
        room = MAX_KEY - len(name)
        if len(label) < ln and len(label) < room + 1:
            return KEY_NOT_FOUND, b''       # the payload ends inside the label
        if ln > room:
            return KEY_TOO_LONG, b''
        name += label.lower()               # bytes.lower(): A-Z only
        pos += 1 + ln


def key_memcache(p, s):
    pl = p.payload
    win = min(len(pl), WINDOW)
    line = pl[8:win]
    # the command: 1..7 bytes, then a space or a tab
    cmd = b''
    for i, b in enumerate(line[:8]):
        if b in b' \t':
            cmd = line[:i]
            break
        if b in b'\r\n':
            return KEY_NOT_FOUND, b''
    else:
        return KEY_NOT_FOUND, b''
    if cmd in MC_KEY_FIRST:
        skip = 0
    elif cmd in MC_KEY_SECOND:
        skip = 1
    else:
        return KEY_NOT_FOUND, b''
    i = len(cmd) + 1
    while True:
        while i < len(line) and line[i] in b' \t':
            i += 1
        if i >= len(line) or line[i] in b'\r\n':
            return KEY_NOT_FOUND, b''
        if not skip:
            break
        while i < len(line) and line[i] not in b' \t':
            if line[i] in b'\r\n':
                return KEY_NOT_FOUND, b''
            i += 1
        skip -= 1
    start = 8 + i                       # payload offset of the key
    end = start
    while end < len(pl) and pl[end] not in b' \t\r\n':
        end += 1
    if end - start > MAX_KEY:
        # too long when 256 key bytes are within the window; else the window ends first
        return (KEY_TOO_LONG, b'') if start + MAX_KEY < win else (KEY_NOT_FOUND, b'')
    if not (end < win or end == len(pl) <= win):
        # the byte that ends the key is past the window: the key is not seen whole
        return KEY_NOT_FOUND, b''
    return KEY_OK, pl[start:end]


def key_quic(p, s):
    pl = p.payload
    if not pl:
        return KEY_NOT_FOUND, b''
    if pl[0] & 0x80:
        if len(pl) < 6 or pl[5] == 0 or 6 + pl[5] > len(pl):
            return KEY_NOT_FOUND, b''
        return KEY_OK, pl[6:6 + pl[5]]
    if s.cid == 0:
        return KEY_BAD_SERVICE, b''
    if 1 + s.cid > len(pl):
        return KEY_NOT_FOUND, b''
    return KEY_OK, pl[1:1 + s.cid]


EXTRACT = {TUPLE: key_tuple, PAYLOAD: key_payload, DNS: key_dns, MEMCACHE: key_memcache,
           QUIC: key_quic}


def oracle(f):
    """(verdict, reason, service index or None, key status, key, hash, QUIC-LB outcome,
    config rotation, backend index routed to by CID or None)."""
    r, p = parse(f)
    if r != 'ok':
        return PASS, r, None, 0, b'', 0, Q_NONE, 0, None
    si = service(p)
    if si is None:
        return PASS, R_NOMATCH, None, 0, b'', 0, Q_NONE, 0, None
    s = SERVICES[si]
    st, key = EXTRACT[s.key](p, s)
    if st == KEY_BAD_SERVICE:
        return PASS, R_BAD_SERVICE, si, st, b'', 0, Q_NONE, 0, None
    if st != KEY_OK:
        pol = s.nokey if st == KEY_NOT_FOUND else s.toolong
        return (DROP if pol == POL_DROP else PASS), (R_NO_KEY if st == KEY_NOT_FOUND else
                                                     R_TOO_LONG), si, st, b'', 0, Q_NONE, 0, None
    h = siphash13_32(SECRET, key) if s.flags & KEYED else zlib.crc32(key) & 0xffffffff
    qo, cr, be = Q_NONE, 0, None
    if s.flags & QLB:
        qo, cr, be = quic_lb(p.payload, si)
        if qo == Q_ROUTED:              # by the CID: no ring
            return FORWARD, R_ROUTED, si, st, key, h, qo, cr, be
    if s.ring in (RING_UP, RING_WALK):
        return FORWARD, R_ROUTED, si, st, key, h, qo, cr, be
    reason = {RING_NONE: R_NO_RING, RING_DOWN65: R_ALL_DOWN, RING_DOWNBIG: R_ALL_DOWN,
              RING_DOWN300: R_WALK_LIMIT}[s.ring]
    return (DROP if s.noroute == POL_DROP else PASS), reason, si, st, key, h, qo, cr, be


# ---- scapy: a second decoding of the headers --------------------------------------------
_scapy = None


def scapy_agrees(f, p):
    """Does scapy's dissection of a frame the oracle parsed give the same addresses,
    ports and UDP payload?  None when scapy does not get as far as UDP."""
    global _scapy
    if _scapy is None:
        import logging
        logging.getLogger('scapy').setLevel(logging.ERROR)
        from scapy.layers.l2 import Ether
        from scapy.layers.inet import IP, UDP
        from scapy.layers.inet6 import IPv6
        from scapy.packet import Raw, NoPayload
        from scapy.config import conf
        UDP.payload_guess = []          # the payload stays raw bytes
        _scapy = (Ether, IP, IPv6, UDP, Raw)
    Ether, IP, IPv6, UDP, Raw = _scapy
    e = Ether(f)
    ip = e.getlayer(IP if p.family == 4 else IPv6)
    u = e.getlayer(UDP)
    if ip is None or u is None:
        return None                     # scapy could not dissect it (e.g. a routing
                                        # header whose length holds no whole address)
    src = ip.src if p.family == 4 else ip.src
    from ipaddress import ip_address
    if ip_address(src).packed != bytes(p.src) or ip_address(ip.dst).packed != bytes(p.dst):
        return False
    if u.sport != p.sport or u.dport != p.dport or u.len != len(p.payload) + 8:
        return False
    return bytes(u.payload)[:len(p.payload)] == p.payload


# ---- packets -----------------------------------------------------------------------------
class Gen:
    def __init__(self, seed):
        self.r = random.Random(seed)

    def b(self, n):
        return self.r.randbytes(n)

    def dns(self):
        r = self.r
        kind = r.randrange(24)
        hdr = bytearray(self.b(2) + b'\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00')
        if kind == 0:
            hdr[2] |= 0x80                      # a response
        if kind == 1:
            hdr[5] = 0                          # no question
        labels = []
        nl = 6 if kind in (2, 3) else 1 + r.randrange(6)
        for _ in range(nl):
            ln = 50 + r.randrange(14) if kind in (2, 3) else (
                40 + r.randrange(24) if r.randrange(8) == 0 else 1 + r.randrange(14))
            labels.append(bytes(r.choice(b'abcXYZdefMNOxyz0123456789-_') for _ in range(ln)))
        name = b''.join(bytes([len(x)]) + x for x in labels) + b'\0'
        if kind == 4:
            name = name[:r.randrange(len(name))] + b'\xc0\x0c' + name
        if kind == 5:
            name = bytes([64 + r.randrange(3)]) + name   # a label over 63
        if kind == 6:                           # a label of 63 at the 255-byte boundary
            name = (b'\x3f' + b'a' * 63) * 3 + b'\x3e' + b'b' * 62 + b'\0'   # 255 bytes
        if kind == 7:
            name = (b'\x3f' + b'a' * 63) * 3 + b'\x3f' + b'b' * 63 + b'\0'   # 257 bytes
        pl = bytes(hdr) + name + b'\x00\x01\x00\x01'
        if kind == 8:
            pl = pl[:12 + r.randrange(len(name))]          # truncated name
        return pl

    def mc(self):
        r = self.r
        cmds = [b'get', b'gets', b'set', b'add', b'replace', b'append', b'prepend', b'cas',
                b'delete', b'incr', b'decr', b'touch', b'mg', b'ms', b'md', b'ma', b'gat',
                b'gats', b'GET', b'bogus', b'', b'\0get', b'\0\0gat', b'getx', b'me']
        c = r.choice(cmds)
        klen = r.choice([1 + r.randrange(40), 1 + r.randrange(40), 250 + r.randrange(10),
                         r.randrange(300)])
        sep = lambda: r.choice([b' ', b' ', b'\t', b'  ', b' \t ',
                                bytes(r.choice(b' \t') for _ in range(1 + r.randrange(30)))])
        key = bytes(33 + r.randrange(94) for _ in range(klen))
        line = c + sep()
        if c.startswith(b'gat') or r.randrange(20) == 0:
            exp = str(r.randrange(1000)) if r.randrange(2) else ''.join(
                r.choice('0123456789') for _ in range(1 + r.randrange(40)))
            line += exp.encode() + sep()
        if r.randrange(6) == 0:                 # push the key towards the window's end
            line += b' ' * (440 + r.randrange(80))
        line += key
        tail = r.randrange(4)
        if tail == 1:
            line += b' 0 0 5\r\nhello\r\n'
        elif tail == 2:
            line += b'\r\n'
        elif tail == 3:
            line += b'\n'
        return b'\0\x01\0\0\0\x01\0\0' + line

    def quic(self):
        r = self.r
        if r.randrange(2):
            cl = r.choice([0, 1 + r.randrange(20), 1 + r.randrange(20), 200 + r.randrange(56)])
            pl = bytes([0xc0 | r.randrange(64), 0, 0, 0, 1, cl]) + self.b(cl + r.randrange(40))
            if r.randrange(10) == 0:
                pl = pl[:r.randrange(len(pl) + 1)]
            return pl
        return bytes([0x40 | r.randrange(64)]) + self.b(r.randrange(40))

    def quic_lb(self, si):
        """A QUIC datagram for a QUIC-LB service: the DCID routable for a known server ID,
        for an unknown one, of an unknown rotation, of rotation 0b111, too short, empty,
        over 20 octets, in a long header (versions 1, 0, others) or a short header."""
        r = self.r
        confs = QLB_CONF[si]
        k = r.randrange(12)
        cr = r.choice(sorted(confs))
        sl, nl, key = confs[cr]
        if k < 7:                       # known (6 of 7) or unknown server ID
            sid = r.choice(QLB_SID_LIST[(si, cr)]) if k < 6 else self.b(sl)
            cid = qlb.encode(cr, sid, self.b(nl), key) + self.b(r.choice([0, 0, 0, 1, 3]))
            if len(cid) > 20:
                cid = cid[:20]
        elif k == 7:                    # an unconfigured rotation
            cid = bytes([r.choice([c for c in range(7) if c not in confs]) << 5 |
                         r.randrange(32)]) + self.b(r.randrange(20))
        elif k == 8:                    # rotation 0b111 (a client's random DCID)
            cid = bytes([0xe0 | r.randrange(32)]) + self.b(r.randrange(20))
        elif k == 9:                    # too short for the rotation's lengths
            cid = qlb.encode(cr, r.choice(QLB_SID_LIST[(si, cr)]), self.b(nl), key)
            cid = cid[:1 + r.randrange(sl + nl)]
        elif k == 10:                   # over 20 octets (long header only means anything)
            cid = qlb.encode(cr, r.choice(QLB_SID_LIST[(si, cr)]), self.b(nl), key)
            cid += self.b(21 - len(cid) + r.randrange(30))
        else:                           # empty or random
            cid = b'' if r.randrange(2) else self.b(1 + r.randrange(20))
        if r.randrange(3):              # long header
            ver = r.choice([1, 1, 0, 0x6b3343cf, r.randrange(1 << 32)])
            pl = bytes([0x80 | r.randrange(128)]) + struct.pack('!I', ver) + \
                bytes([len(cid)]) + cid + bytes([r.randrange(21)]) + self.b(r.randrange(40))
            if r.randrange(12) == 0:
                pl = pl[:r.randrange(len(pl) + 1)]
        else:                           # short header: the datagram may end in the CID
            pl = bytes([0x40 | r.randrange(64)]) + cid + self.b(r.choice([0, 0, r.randrange(40)]))
        return pl

    def payload(self):
        r = self.r
        n = r.choice([r.randrange(64), r.randrange(64), 250 + r.randrange(300), 0, 3, 19])
        pl = bytearray(self.b(n))
        if n > 6 and r.randrange(2):
            pl[5 + r.randrange(n - 5)] = 0x0a
        if n > 2 and r.randrange(3) == 0:
            pl[1 + r.randrange(n - 1)] = 0x20
        return bytes(pl)

    def ipv6_ext(self, nh_after, types):
        """Extension headers of the given types, chained to nh_after."""
        out = b''
        for i in reversed(range(len(types))):
            t = types[i]
            nxt = types[i + 1] if i + 1 < len(types) else nh_after
            if t == 44:
                off = 0 if self.r.randrange(8) else 1 + self.r.randrange(100)
                h = struct.pack('!BBHI', nxt, 0, (off << 3) | self.r.randrange(2), 1234)
            else:
                # options: one PadN filling the header; routing: type 0, no segment
                # left, whole 16-byte addresses (what a dissector expects)
                ln = self.r.choice([0, 0, 2, 4, 30] if t == 43 else [0, 0, 1, 2, 31])
                if t == 43:
                    h = bytes([nxt, ln, 0, 0]) + b'\0' * (8 * ln + 4)
                else:
                    h = bytes([nxt, ln, 1, 8 * ln + 4]) + b'\0' * (8 * ln + 4)
            out = h + out
        return out

    def frame(self):
        r = self.r
        port = r.choice([53, 53, 53, 11211, 11211, 443, 443, 4433, 4434, 9000, 9001, 9002, 9003,
                         9004, 9005, 9006, 9007, 9008, 9009, 9010, 9010, 9011, 80,
                         8443, 8443, 8443, 8444, 8444])
        fam = r.choice([4, 6])
        if port in (53, 9007, 9011):
            pl = self.dns()
        elif port == 11211:
            pl = self.mc()
        elif port in (443, 4433, 4434):
            pl = self.quic()
        elif port in (8443, 8444):
            si = QLB_SVC1 if port == 8443 else QLB_SVC2
            pl = self.quic_lb(si) if r.randrange(6) else self.quic()
        else:
            pl = self.payload()
        u_len = len(pl) + 8
        if r.randrange(30) == 0:
            u_len = max(0, u_len + r.randrange(-20, 20))
        udp = struct.pack('!HHHH', r.randrange(65536), port, u_len & 0xffff, 0) + pl
        proto = 17 if r.randrange(40) else r.choice([6, 1, 58, 132])
        if fam == 4:
            opts = b'\x01' * (4 * r.randrange(11)) if r.randrange(3) == 0 else b''
            ihl = 5 + len(opts) // 4
            if r.randrange(40) == 0:
                ihl = r.randrange(16)
            tot = 20 + len(opts) + len(udp)
            if r.randrange(30) == 0:
                tot = max(0, tot + r.randrange(-30, 30))
            frag = r.choice([0] * 30 + [0x2000, 0x2000 | 5, 5, 0x4000])
            dst = VIP4 if r.randrange(4) == 0 else self.b(4)
            ver = 4 if r.randrange(60) else r.choice([5, 6])
            l3 = struct.pack('!BBHHHBBH4s4s', ver << 4 | ihl, 0, tot & 0xffff, r.randrange(65536),
                             frag, 64, proto, 0, self.b(4), dst) + opts + udp
            etype = 0x0800
        else:
            next_hdrs = []
            if r.randrange(3) == 0:
                next_hdrs = [r.choice(EXT) for _ in range(r.choice([1, 1, 2, 3, 8, 9, 10]))]
            ext = self.ipv6_ext(proto, next_hdrs)
            nh = next_hdrs[0] if next_hdrs else proto
            plen = len(ext) + len(udp)
            if r.randrange(30) == 0:
                plen = max(0, plen + r.randrange(-30, 30))
            dst = VIP6 if r.randrange(4) == 0 else b'\x20\x01' + self.b(14)
            ver = 6 if r.randrange(60) else 4
            l3 = struct.pack('!IHBB16s16s', ver << 28 | r.randrange(1 << 20), plen & 0xffff, nh,
                             64, b'\x20\x01' + self.b(14), dst) + ext + udp
            etype = 0x86dd
        if r.randrange(40) == 0:
            etype = r.choice([0x0806, 0x88cc, r.randrange(65536)])
        tags = b''
        nv = r.choice([0] * 6 + [1, 1, 2, 3])
        for i in range(nv):
            tpid = r.choice([0x8100, 0x8100, 0x88a8, 0x9100]) if i == 0 else 0x8100
            tags += struct.pack('!HH', tpid, r.randrange(4096))
        f = b'\x02\0\0\0\0\xaa\x02\0\0\0\0\xcc' + tags + struct.pack('!H', etype) + l3
        if r.randrange(20) == 0:
            f += b'\0' * r.randrange(30)         # Ethernet padding
        return f

    def mutate(self, f):
        r = self.r
        f = bytearray(f)
        for _ in range(1 + r.randrange(4)):
            k = r.randrange(5)
            if k < 2:
                f[r.randrange(len(f))] = r.randrange(256)
            elif k == 2:
                f = f[:14 + r.randrange(len(f) - 13)]
            elif k == 3:
                if len(f) < 1400:
                    f += self.b(1 + r.randrange(64))
            else:
                o = r.randrange(len(f) - 1)
                v = (f[o] << 8 | f[o + 1]) + r.randrange(-8, 9)
                f[o:o + 2] = struct.pack('!H', v & 0xffff)
        return bytes(f)


def gen(count, seed, sample_every=10):
    out = sys.stdout.buffer
    g = Gen(seed)
    out.write(b'KRO1' + struct.pack('<I', len(SERVICES)))
    for s in SERVICES:
        out.write(s.pack())
    out.write(pack_quic_lb())
    samples = disagree = undissected = 0
    buf = []
    for i in range(count):
        f = g.frame()
        flags = 0
        if g.r.randrange(2):
            f = g.mutate(f)
            flags |= F_MUTATED
        v, reason, si, st, key, h, qo, cr, be = oracle(f)
        if i % sample_every == 0:
            r, p = parse(f)
            if r == 'ok':
                samples += 1
                agree = scapy_agrees(f, p)
                undissected += agree is None
                if agree is False:
                    disagree += 1
                    sys.stderr.write('scapy disagrees on frame %d: %s\n' % (i, f.hex()))
        buf.append(struct.pack('<I', len(f)) + f +
                   struct.pack('<BBBBH', v, reason, 255 if si is None else si, st, len(key)) +
                   key + struct.pack('<IBBBH', h, flags, qo, cr, 0xffff if be is None else be))
        if len(buf) >= 512:
            out.write(b''.join(buf))
            buf = []
    out.write(b''.join(buf))
    out.write(struct.pack('<IIII', 0xffffffff, samples, disagree, undissected))
    out.flush()


def pad_options(n):
    """n bytes of IPv6 options: PadN options (at most 255 data bytes each), Pad1 for 1."""
    out = b''
    while n > 0:
        if n == 1:
            out, n = out + b'\0', 0
            continue
        k = min(n - 2, 255)
        if n - (k + 2) == 1:
            k -= 1
        out, n = out + bytes([1, k]) + b'\0' * k, n - (k + 2)
    return out


def deep(count, seed):
    """Frames whose UDP header lies beyond the first 256 bytes (IPv6 extension headers of
    300..3000 bytes) and whose length exceeds a page (an AF_PACKET send of such a frame
    makes a non-linear skb), to the payload service of port 9001 at VIP6: one line each,
    "frame-hex reason key-hex" (the oracle's reason and key)."""
    g = Gen(seed)
    r = g.r
    for _ in range(count):
        while True:
            types = [r.choice((0, 60, 43, 44)) for _ in range(r.randrange(2, 9))]
            if types.count(0) > 1 or (0 in types and types[0] != 0):
                types = [t for t in types if t != 0] or [60]
            ext = b''
            for i in reversed(range(len(types))):
                nxt = types[i + 1] if i + 1 < len(types) else 17
                if types[i] == 44:
                    h = struct.pack('!BBHI', nxt, 0, r.randrange(2), r.randrange(1 << 32))
                else:
                    ln = 2 * r.randrange(1, 60)
                    h = bytes([nxt, ln]) + (b'\0' * (8 * ln + 6) if types[i] == 43 else
                                            pad_options(8 * ln + 6))
                ext = h + ext
            if 300 <= len(ext) <= 3000:
                break
        pl = g.b(4200 + r.randrange(800))
        udp = struct.pack('!HHHH', r.randrange(1024, 65536), 9001, 8 + len(pl), 0) + pl
        l3 = struct.pack('!IHBB16s16s', 0x60000000, len(ext) + len(udp), types[0], 64,
                         b'\x20\x01' + g.b(14), VIP6) + ext + udp
        f = b'\x02\0\0\0\0\xaa\x02\0\0\0\0\xcc\x86\xdd' + l3
        v, reason, si, st, key, h = oracle(f)[:6]
        print(f.hex(), reason, key.hex() or '-')


def send(iface, path):
    """Send the frames of a file (first field of each line, hex) on iface (AF_PACKET)."""
    import socket
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((iface, 0))
    n = 0
    for line in open(path):
        s.send(bytes.fromhex(line.split()[0]))
        n += 1
    print('sent %d frames on %s' % (n, iface))


# ---- selftest: known answers ------------------------------------------------------------
def _frame4(dport, pl, opts=b'', frag=0, tags=b''):
    udp = struct.pack('!HHHH', 1234, dport, 8 + len(pl), 0) + pl
    ip = struct.pack('!BBHHHBBH4s4s', 0x45 + len(opts) // 4, 0, 20 + len(opts) + len(udp), 0,
                     frag, 64, 17, 0, bytes([10, 0, 0, 1]), bytes([10, 9, 9, 9])) + opts + udp
    return b'\2\0\0\0\0\1\2\0\0\0\0\2' + tags + b'\x08\x00' + ip


def selftest():
    bad = 0

    def expect(what, got, want):
        nonlocal bad
        if got != want:
            bad += 1
            print('selftest: %s: got %r, want %r' % (what, got, want))

    q = b'\x12\x34\x01\x00\x00\x01\0\0\0\0\0\0\x03WwW\x07ExAmple\x03com\x00\0\1\0\1'
    expect('dns key', oracle(_frame4(53, q))[4], b'\x03www\x07example\x03com\x00')
    expect('dns via 2 tags', oracle(_frame4(53, q, tags=b'\x88\xa8\0\1\x81\0\0\2'))[1], R_ROUTED)
    expect('3 tags', oracle(_frame4(53, q, tags=b'\x81\0\0\1' * 3))[1], R_NOMATCH)
    expect('non-first fragment', oracle(_frame4(53, q, frag=0x2001))[1], R_FRAGMENT)
    expect('first fragment routed', oracle(_frame4(53, q, frag=0x2000))[1], R_ROUTED)
    expect('ip options', oracle(_frame4(53, q, opts=b'\1' * 12))[4], b'\x03www\x07example\x03com\x00')
    expect('quic short', oracle(_frame4(443, b'\x41' + bytes(range(1, 20))))[4], bytes(range(1, 9)))
    expect('quic long', oracle(_frame4(443, b'\xc0\0\0\0\1\3abcdef'))[4], b'abc')
    expect('quic long truncated', oracle(_frame4(443, b'\xc0\0\0\0\1\7abc'))[1:4:2],
           (R_NO_KEY, KEY_NOT_FOUND))
    expect('memcache get', oracle(_frame4(11211, b'\0' * 8 + b'get  k1 \r\n'))[4], b'k1')
    expect('memcache gat', oracle(_frame4(11211, b'\0' * 8 + b'gat 10 k2\r\n'))[4], b'k2')
    expect('memcache GET', oracle(_frame4(11211, b'\0' * 8 + b'GET k1\r\n'))[0:2], (DROP, R_NO_KEY))
    expect('memcache NUL get', oracle(_frame4(11211, b'\0' * 8 + b'\0get k1\r\n'))[1], R_NO_KEY)
    expect('payload off+len', oracle(_frame4(9001, bytes(range(30))))[4], bytes(range(3, 19)))
    expect('payload delim', oracle(_frame4(9002, b'01234abc\ndef'))[4], b'abc')
    expect('tuple', oracle(_frame4(9003, b''))[4], bytes([10, 0, 0, 1, 4, 210]))
    expect('no ring', oracle(_frame4(9004, b''))[0:2], (DROP, R_NO_RING))
    expect('all down, 160 points', oracle(_frame4(9008, b''))[0:2], (PASS, R_ALL_DOWN))
    expect('all down, 300 backends', oracle(_frame4(9011, q))[0:2], (PASS, R_WALK_LIMIT))
    expect('no service', oracle(_frame4(80, b''))[1], R_NOMATCH)
    expect('keyed hash', oracle(_frame4(9006, b'abc'))[5], siphash13_32(SECRET, b'abc'))
    expect('crc', oracle(_frame4(9000, b'abc'))[5], zlib.crc32(b'abc'))
    # QUIC-LB: the codec on the vectors file, then the stage's decisions
    vec = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'data',
                       'quic_lb_vectors.txt')
    expect('quic-lb vectors', qlb.selftest(vec), 0)
    sids = {(si, cr, be): sid for (si, cr, sid), be in QLB_SIDS.items()}

    def ql(si, cid, long=True, ver=1):
        port = SERVICES[si].port
        pl = (bytes([0xc0]) + struct.pack('!I', ver) + bytes([len(cid)]) + cid + b'\0' * 20
              if long else b'\x40' + cid + b'\0' * 8)
        o = oracle(_frame4(port, pl))
        return o[0], o[1], o[6], o[8]

    s1, s2 = QLB_SVC1, QLB_SVC2
    enc = lambda si, cr, be, nonce: qlb.encode(cr, sids[(si, cr, be)], nonce,
                                               QLB_CONF[si][cr][2])
    expect('quic-lb plaintext', ql(s1, bytes([0x08]) + sids[(s1, 0, 3)] + b'abcdef'),
           (FORWARD, R_ROUTED, Q_ROUTED, 3))
    expect('quic-lb four pass, short header', ql(s1, enc(s1, 1, 402, bytes(8)), False),
           (FORWARD, R_ROUTED, Q_ROUTED, 402))
    expect('quic-lb single pass, version negotiation', ql(s1, enc(s1, 2, 400, bytes(12)),
                                                          ver=0), (FORWARD, R_ROUTED, Q_ROUTED, 400))
    expect('quic-lb down backend', ql(s1, enc(s1, 4, 401, bytes(5))),
           (FORWARD, R_ROUTED, Q_BACKEND_DOWN, None))
    expect('quic-lb drain backend, ring all down', ql(s2, enc(s2, 6, 401, bytes(4))),
           (FORWARD, R_ROUTED, Q_ROUTED, 401))
    expect('quic-lb ring all down, fallback', ql(s2, enc(s2, 3, 1, bytes(14))),
           (DROP, R_ALL_DOWN, Q_BACKEND_DOWN, None))
    expect('quic-lb rotation 7', ql(s1, b'\xe8' + bytes(8)), (FORWARD, R_ROUTED, Q_UNROUTABLE, None))
    expect('quic-lb unknown rotation', ql(s1, b'\x68' + bytes(8)),
           (FORWARD, R_ROUTED, Q_UNKNOWN_CONFIG, None))
    expect('quic-lb 21 octets', ql(s1, enc(s1, 0, 1, bytes(6)) + bytes(12)),
           (FORWARD, R_ROUTED, Q_TOO_LONG, None))
    expect('quic-lb too short', ql(s1, enc(s1, 2, 1, bytes(12))[:16]),
           (FORWARD, R_ROUTED, Q_TOO_SHORT, None))
    expect('quic-lb empty DCID', ql(s1, b''), (PASS, R_NO_KEY, Q_NONE, None))
    # SipHash-2-4 with key 00..0f, message 00..0e (the paper's example)
    expect('siphash-2-4', siphash(bytes(range(16)), bytes(range(15)), 2, 4), 0xa129ca6149be45e5)
    g = Gen(1)
    n = 0
    for i in range(300):
        f = g.frame()
        r, p = parse(f)
        if r == 'ok':
            n += 1
            expect('scapy on frame %d' % i, scapy_agrees(f, p), True)
    expect('frames parsed for scapy', n > 100, True)
    print('selftest: %d wrong' % bad)
    return 1 if bad else 0


if __name__ == '__main__':
    if sys.argv[1:2] == ['gen']:
        gen(int(sys.argv[2]), int(sys.argv[3], 0))
    elif sys.argv[1:2] == ['deep']:
        deep(int(sys.argv[2]), int(sys.argv[3], 0))
    elif sys.argv[1:2] == ['send']:
        send(sys.argv[2], sys.argv[3])
    elif sys.argv[1:2] == ['selftest']:
        sys.exit(selftest())
    else:
        sys.exit(__doc__)
