#!/usr/bin/python3
"""Independent model of spill and hot-key replicas, checked against the running kernel.

A second implementation of the ring stage's spill walk and replica choice, written from
docs/datapath.md ("Spill and hot-key replicas"), sharing no code with bpf/kr_ring.h or
include/: the ring is the published continuum as `keyrouter ring dump` prints it
(index, hash, backend), the backends' states, spill fractions and MACs are read from the
configuration, and keys are hashed with zlib.crc32.  Each key is sent, as an
Ethernet/IPv4/UDP frame to the service, through the pinned XDP program of every instance
given (BPF_PROG_TEST_RUN via the bpf(2) system call, ctypes); the backend a frame went to
is its destination MAC after the program.

  kr_spill_oracle.py check CONFIG DUMP NKEYS SEED PIN_DIR [PIN_DIR...]
      NKEYS random keys (and, for the hot keys of the configuration's ring, 64 clients
      each): prints "spill: keys N agree N spilled N moved-from ... hot: ..." and exits 1
      on any disagreement (listing the first ones).
  kr_spill_oracle.py cmp-lookup CONFIG DUMP LOOKUP_JSON
      `keyrouter lookup --service ... --live --json` lines against the model
  kr_spill_oracle.py bench CONFIG PIN_DIR NKEYS REPEAT ROUNDS plain|spilled|hot
      ns/packet of the pinned program for keys on that path (scripts/bench.d/spill.sh)
  kr_spill_oracle.py moved OLD_CONFIG NEW_CONFIG DUMP NSAMPLES SEED
      the share of NSAMPLES uniform key hashes whose backend differs between the two
      configurations' states and spill fractions (same ring): "moved P stderr E"
  kr_spill_oracle.py route CONFIG DUMP KEY SRC4 SPORT
      the model's backend index and replica of one key for one client
  kr_spill_oracle.py trace CONFIG DUMP TRACE_JSON
      `keyrouter trace --json` events against the model: a routed event of an ordinary key
      says spilled exactly when the model does, and names no replica; one of a hot key
      names a replica below its count (the event has no client, so not which one); prints
      "trace: events N spilled N agree N hot N replicas seen HOT:SEEN/K,..."
  kr_spill_oracle.py selftest
"""
import bisect
import ctypes
import json
import os
import random
import struct
import sys
import zlib

M32 = 0xffffffff
MAX_WALK = 64

# ---- bpf(2) ---------------------------------------------------------------------------
_libc = ctypes.CDLL(None, use_errno=True)
_NR_BPF = 321            # x86_64
BPF_PROG_TEST_RUN, BPF_OBJ_GET = 10, 7


def _bpf(cmd, attr):
    r = _libc.syscall(_NR_BPF, cmd, ctypes.byref(attr), ctypes.sizeof(attr))
    if r < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return r


class _ObjGet(ctypes.Structure):
    _fields_ = [('pathname', ctypes.c_uint64), ('bpf_fd', ctypes.c_uint32),
                ('file_flags', ctypes.c_uint32), ('pad', ctypes.c_uint8 * 64)]


class _TestRun(ctypes.Structure):
    _fields_ = [('prog_fd', ctypes.c_uint32), ('retval', ctypes.c_uint32),
                ('data_size_in', ctypes.c_uint32), ('data_size_out', ctypes.c_uint32),
                ('data_in', ctypes.c_uint64), ('data_out', ctypes.c_uint64),
                ('repeat', ctypes.c_uint32), ('duration', ctypes.c_uint32),
                ('ctx_size_in', ctypes.c_uint32), ('ctx_size_out', ctypes.c_uint32),
                ('ctx_in', ctypes.c_uint64), ('ctx_out', ctypes.c_uint64),
                ('flags', ctypes.c_uint32), ('cpu', ctypes.c_uint32),
                ('batch_size', ctypes.c_uint32), ('pad', ctypes.c_uint8 * 64)]


def prog_open(path):
    p = ctypes.create_string_buffer(path.encode())
    a = _ObjGet(pathname=ctypes.addressof(p))
    return _bpf(BPF_OBJ_GET, a)


def prog_run(fd, frame, repeat=1, timed=False):
    inb = ctypes.create_string_buffer(frame, len(frame))
    outb = ctypes.create_string_buffer(len(frame) + 256)
    a = _TestRun(prog_fd=fd, data_size_in=len(frame), data_size_out=len(outb),
                 data_in=ctypes.addressof(inb), data_out=ctypes.addressof(outb), repeat=repeat)
    _bpf(BPF_PROG_TEST_RUN, a)
    if timed:
        return a.duration
    return a.retval, outb.raw[:a.data_size_out]


def bench(cfg_path, pin, nkeys, repeat, rounds, want):
    """ns per packet of the pinned program (the kernel's mean per repetition), over nkeys
    keys of the configuration's service that the model says take path `want` (plain: no
    spill walk; spilled: walked on past a spilling backend; hot: the hot keys), best of
    `rounds` rounds, mean over the keys."""
    cfg = json.load(open(cfg_path))
    svc = cfg['services'][0]
    vip = bytes(int(x) for x in svc['vip'].split('.'))
    fd = prog_open(os.path.join(pin, 'kr_prog'))
    if want == 'hot':
        keys = [hk['key'].encode() for r in cfg['rings'] for hk in r.get('hot_keys', [])]
    else:
        dump = os.popen('%s ring dump -c %s --ring %s --no-header' % (
            os.environ.get('KR_BIN', 'build/keyrouter'), cfg_path, svc['ring'])).read()
        model = Model(cfg, dump.splitlines(), svc['ring'])
        keys, n = [], 0
        while len(keys) < nkeys and n < 1000000:
            k = ('bench-%d' % n).encode()
            n += 1
            if model.route(zlib.crc32(k) & M32)[1] == (want == 'spilled'):
                keys.append(k)
    best = None
    for _ in range(rounds):
        t = sum(prog_run(fd, frame4([10, 9, 0, 1 + i % 200], 4000 + i, vip, svc['port'], k),
                         repeat, True) for i, k in enumerate(keys)) / len(keys)
        best = t if best is None or t < best else best
    print('%s: %.1f ns/packet (%d keys x %d repetitions, best of %d)' % (
        want, best, len(keys), repeat, rounds))
    return 0


# ---- frames ---------------------------------------------------------------------------
def _csum(b):
    s = sum(struct.unpack('!%dH' % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def frame4(src, sport, dst, dport, payload):
    udp = struct.pack('!HHHH', sport, dport, 8 + len(payload), 0) + payload
    ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(udp), 0, 0x4000, 64, 17, 0,
                     bytes(src), bytes(dst))
    ip = ip[:10] + struct.pack('!H', _csum(ip)) + ip[12:]
    eth = b'\x02\x00\x00\x00\x00\xaa' + b'\x02\x00\x00\x00\x00\xcc' + b'\x08\x00'
    return eth + ip + udp


# ---- the model ------------------------------------------------------------------------
def mix32(h):
    h ^= h >> 16
    h = (h * 0x85ebca6b) & M32
    h ^= h >> 13
    h = (h * 0xc2b2ae35) & M32
    h ^= h >> 16
    return h


def spill_value(key_hash):
    """The key's spill value in 0..65535: the top 16 bits of key_hash * 0x9E3779B1."""
    return ((key_hash * 0x9E3779B1) & M32) >> 16


def replica_pick(src4, sport):
    h = mix32(0x2545f491 ^ int.from_bytes(bytes(src4), 'big'))
    return mix32(h ^ sport)


class Model:
    def __init__(self, cfg, dump_lines, ring_name):
        ring = [r for r in cfg['rings'] if r['name'] == ring_name][0]
        self.be = ring['backends']
        self.up = [b.get('state', 'up') == 'up' for b in self.be]
        self.spill = [int(b.get('spill', 0) * 65536 + 0.5) for b in self.be]
        self.hashes, self.owner = [], []
        for line in dump_lines:
            if not line.strip() or line.startswith('#'):
                continue
            _, h, b = line.split()
            self.hashes.append(int(h, 16))
            self.owner.append(int(b))
        self.hot = {}
        for hk in ring.get('hot_keys', []):
            self.hot[zlib.crc32(hk['key'].encode()) & M32] = hk['replicas']

    def point(self, h):
        i = bisect.bisect_left(self.hashes, h)
        return 0 if i == len(self.hashes) else i

    def walk(self, i):
        """Backends met from point i on, the own point first, consecutive repeats once,
        at most MAX_WALK points past it."""
        n = len(self.hashes)
        last = None
        for step in range(0, min(n - 1, MAX_WALK) + 1):
            b = self.owner[(i + step) % n]
            if b != last:
                yield b
            last = b

    def route(self, key_hash, client=None):
        """-> (backend index or None, spilled, replica or None)"""
        i = self.point(key_hash)
        if key_hash in self.hot and client is not None:
            k = self.hot[key_hash]
            r = replica_pick(*client) % k
            seen = []
            for b in self.walk(i):
                if self.up[b] and b not in seen:
                    seen.append(b)
                    if len(seen) == r + 1:
                        return b, False, r
                    if len(seen) == 16:
                        break
            return (seen[0], False, 0) if seen else (None, False, None)
        v = spill_value(key_hash)
        first = None
        for b in self.walk(i):
            if not self.up[b]:
                continue
            if v < self.spill[b]:
                if first is None:
                    first = b
                continue
            return b, first is not None, None
        return first, False, None


def check(cfg_path, dump_path, nkeys, seed, pins):
    cfg = json.load(open(cfg_path))
    svc = cfg['services'][0]
    model = Model(cfg, open(dump_path).read().splitlines(), svc['ring'])
    macs = {bytes.fromhex(b['mac'].replace(':', '')): i for i, b in enumerate(model.be)}
    vip = bytes(int(x) for x in svc['vip'].split('.'))
    fds = [prog_open(os.path.join(p, 'kr_prog')) for p in pins]
    rnd = random.Random(seed)
    bad, spilled = [], 0
    cases = []
    for n in range(nkeys):
        key = ('k%d-%08x' % (n, rnd.getrandbits(32))).encode()
        cases.append((key, ([10, 9, rnd.randrange(256), rnd.randrange(1, 255)],
                            rnd.randrange(1024, 65536))))
    if os.environ.get('KR_SPILL_KEYS'):     # the keys, one per line, for `lookup`
        with open(os.environ['KR_SPILL_KEYS'], 'w') as f:
            f.write(''.join(k.decode() + '\n' for k, _ in cases))
    hot = [hk['key'].encode() for r in cfg['rings'] for hk in r.get('hot_keys', [])]
    for key in hot:
        for c in range(64):
            cases.append((key, ([10, 8, c // 200, 1 + c % 200], 20000 + c)))
    per_key, unstable = {}, 0
    for key, (src, sport) in cases:
        h = zlib.crc32(key) & M32
        want, sp, rep = model.route(h, (src, sport))
        got = []
        for fd in fds:
            ret, out = prog_run(fd, frame4(src, sport, vip, svc['port'], key))
            got.append(macs.get(out[:6]) if ret in (3, 4) else None)
        if any(g != want for g in got):
            bad.append((key.decode(), src, sport, want, got))
        spilled += sp
        if key in hot:
            per_key.setdefault(key, set()).add(got[0])
            # the same client again: the same replica
            ret, out = prog_run(fds[0], frame4(src, sport, vip, svc['port'], key))
            unstable += macs.get(out[:6]) != got[0]
    nhot = 64 * len(hot)
    k = {hk['key'].encode(): hk['replicas'] for r in cfg['rings'] for hk in r.get('hot_keys', [])}
    nup = sum(model.up)
    fewer = [x.decode() for x in hot if len(per_key.get(x, ())) != min(k[x], nup)]
    print('spill: keys %d instances %d agree %d spilled %d; hot keys %d clients %d replicas '
          'used %s unstable %d' % (len(cases) - nhot, len(fds), len(cases) - len(bad), spilled,
                                   len(hot), nhot,
                                   ','.join('%d/%d' % (len(per_key.get(x, ())), k[x])
                                            for x in hot), unstable))
    if fewer:
        print('hot keys not spread over their replicas: %s' % ' '.join(fewer))
    for b in bad[:10]:
        print('disagree: key %s client %s:%d model %s kernel %s' % b)
    return 1 if bad or unstable or fewer else 0


def trace(cfg_path, dump_path, trace_path):
    cfg = json.load(open(cfg_path))
    model = Model(cfg, open(dump_path).read().splitlines(), cfg['services'][0]['ring'])
    k = {zlib.crc32(hk['key'].encode()) & M32: (hk['key'], hk['replicas'])
         for r in cfg['rings'] for hk in r.get('hot_keys', [])}
    n = agree = spilled = nhot = 0
    seen, bad = {}, []
    for line in open(trace_path):
        o = json.loads(line)
        if 'verdict' not in o or o['verdict'] != 'routed':
            continue            # the summary object, or a packet no ring routed
        n += 1
        h = int(o['hash'], 16)
        if h in k:
            nhot += 1
            ok = o['replica'] is not None and 0 <= o['replica'] < k[h][1] and not o['spilled']
            if o['replica'] is not None:
                seen.setdefault(h, set()).add(o['replica'])
        else:
            _, sp, _ = model.route(h)
            ok = o['spilled'] == sp and o['replica'] is None
            spilled += o['spilled']
        agree += ok
        if not ok:
            bad.append((o['key'], o['hash'], o['spilled'], o['replica']))
    print('trace: events %d spilled %d agree %d hot %d replicas seen %s' %
          (n, spilled, agree, nhot, ','.join('%s:%d/%d' % (k[h][0], len(seen.get(h, ())), k[h][1])
                                             for h in sorted(k))))
    for b in bad[:10]:
        print('disagree: key %s hash %s spilled %s replica %s' % b)
    return 1 if bad or not n else 0


def cmp_lookup(cfg_path, dump_path, lookup_path):
    """`keyrouter lookup --service --live --json` lines (userspace's truth) vs the model."""
    cfg = json.load(open(cfg_path))
    model = Model(cfg, open(dump_path).read().splitlines(), cfg['services'][0]['ring'])
    n = bad = spilled = 0
    for line in open(lookup_path):
        o = json.loads(line)
        key = bytes.fromhex(o['key'])
        want, sp, _ = model.route(zlib.crc32(key) & M32)
        got = o['route']['index'] if o.get('route') else None
        n += 1
        spilled += sp
        if got != want or o['route']['spilled'] != sp:
            bad += 1
            if bad <= 5:
                print('disagree: key %s model %s spilled %s lookup %s' % (key, want, sp,
                                                                          o['route']))
    print('lookup: keys %d agree %d spilled %d' % (n, n - bad, spilled))
    return 1 if bad or not n else 0


def moved(old_path, new_path, dump_path, n, seed):
    dump = open(dump_path).read().splitlines()
    ring = json.load(open(new_path))['services'][0]['ring']
    a = Model(json.load(open(old_path)), dump, ring)
    b = Model(json.load(open(new_path)), dump, ring)
    rnd = random.Random(seed)
    m = 0
    for _ in range(n):
        h = rnd.getrandbits(32)
        m += a.route(h)[0] != b.route(h)[0]
    p = m / n
    print('moved %.6f stderr %.6f' % (p, (p * (1 - p) / n) ** 0.5))
    return 0


def selftest():
    assert spill_value(0) == 0 and spill_value(1) == 0x9E37
    assert mix32(0) == 0 and mix32(1) == 0x514e28b7
    m = Model({'rings': [{'name': 'r', 'backends': [{}, {'spill': 0.5}, {'state': 'down'}]}]},
              ['0 00000010 0', '1 00000020 1', '2 00000030 2', '3 00000040 0'], 'r')
    # hash 0x18 -> point 1 (backend 1, spill 32768): value of 0x18 = 0x8d3f... spills
    assert m.point(0x18) == 1 and m.point(0x41) == 0
    v = spill_value(0x18)
    assert m.route(0x18)[0] == (0 if v < 32768 else 1)
    print('selftest ok')
    return 0


if __name__ == '__main__':
    if sys.argv[1:2] == ['selftest']:
        sys.exit(selftest())
    if sys.argv[1:2] == ['bench'] and len(sys.argv) == 8:
        sys.exit(bench(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]),
                       int(sys.argv[6]), sys.argv[7]))
    if sys.argv[1:2] == ['route'] and len(sys.argv) == 7:   # CONFIG DUMP KEY SRC4 SPORT
        c = json.load(open(sys.argv[2]))
        m = Model(c, open(sys.argv[3]).read().splitlines(), c['services'][0]['ring'])
        b, sp, r = m.route(zlib.crc32(sys.argv[4].encode()) & M32,
                           ([int(x) for x in sys.argv[5].split('.')], int(sys.argv[6])))
        print(b, r)
        sys.exit(0)
    if sys.argv[1:2] == ['moved'] and len(sys.argv) == 7:
        sys.exit(moved(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]),
                       int(sys.argv[6])))
    if sys.argv[1:2] == ['trace'] and len(sys.argv) == 5:
        sys.exit(trace(*sys.argv[2:5]))
    if sys.argv[1:2] == ['cmp-lookup'] and len(sys.argv) == 5:
        sys.exit(cmp_lookup(*sys.argv[2:5]))
    if sys.argv[1:2] == ['check'] and len(sys.argv) >= 7:
        sys.exit(check(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]),
                       sys.argv[6:]))
    sys.exit(__doc__)
