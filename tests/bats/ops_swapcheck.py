#!/usr/bin/env python3
# Checks the swap-under-load run of ops_swap.bats: every packet the client sent must arrive
# exactly once, at the backend its key and the ring state in force when keyrouter routed it
# predict.  The routing instant of a packet lies between its send time (client log, taken
# just before sendto) and its arrival (backend log); a state may be in force from the start
# of the command that made it to the end of the command that replaced it.  A packet may
# follow any state whose possible time overlaps its own [sent, received] -- measured times
# only, no slack.  Also: every transition (migrate, commit, rollback) changed where keys
# go, as predicted and as seen in the packets routed while its state alone was in force;
# a stage (or an upgrade) changed nothing; every transition started after the first packet and ended
# before the last; the client kept 10000 packets/s on average (the load the test claims).
#   ops_swapcheck.py SENT TRANSITIONS EXP_A EXP_B RECV...
# SENT: "time key"; TRANSITIONS: ops_swapdrive.py's log; EXP_X: "key backend" on ring X;
# RECV_i: backend i's log ("time key").  Prints diagnostics, then exactly one line
#   swap under load: transitions T packets P lost L misrouted M duplicated D
import sys, zlib


def mix32(h):
    h ^= h >> 16; h = (h * 0x85ebca6b) & 0xffffffff
    h ^= h >> 13; h = (h * 0xc2b2ae35) & 0xffffffff
    h ^= h >> 16
    return h


def main():
    sent = [(float(t), k) for t, k in (l.split() for l in open(sys.argv[1]) if l.strip())]
    trans = [l.split() for l in open(sys.argv[2]) if l.strip()]
    exp = {}
    for name, f in (("A", sys.argv[3]), ("B", sys.argv[4])):
        exp[name] = dict(l.split() for l in open(f) if l.strip())
    got, dup = {}, 0
    for i, f in enumerate(sys.argv[5:], 1):
        for l in open(f):
            p = l.split()
            if len(p) != 2:
                continue
            if p[1] in got:
                dup += 1
            got[p[1]] = (str(i), float(p[0]))
    # state k (made by command k) may be in force from t_start[k] to t_end[k + 1]
    st = [(float(t[0]), float(t[1]), t[2], (t[3], t[4], int(t[5]), int(t[6]))) for t in trans]
    n = len(st)
    lo = [s[0] if k else float("-inf") for k, s in enumerate(st)]
    hi = [st[k + 1][1] if k + 1 < n else float("inf") for k in range(n)]
    mixed = {}

    def predict(key, k):
        s0, s1, active, frac = st[k][3]
        if key not in mixed:
            mixed[key] = mix32(zlib.crc32(key.encode()) & 0xffffffff)
        slot = active ^ 1 if mixed[key] < frac else active
        return exp[(s0, s1)[slot]][key]

    lost = misrouted = ambiguous = 0
    seen_change = [0] * n        # packets of state k alone routed unlike state k - 1
    first = 0
    for ts, key in sent:
        if key not in got:
            lost += 1
            continue
        b, tr = got[key]
        while first + 1 < n and hi[first] < ts:
            first += 1
        ks = []
        for k in range(first, n):
            if lo[k] > tr:
                break
            if hi[k] >= ts:
                ks.append(k)
        allowed = {predict(key, k) for k in ks}
        if b not in allowed:
            misrouted += 1
            if misrouted <= 5:
                print("# misrouted %s sent %.6f received %.6f at b%s: states %s allow %s"
                      % (key, ts, tr, b, ks, sorted(allowed)))
            continue
        ambiguous += len(allowed) > 1
        if len(ks) == 1 and ks[0] > 0 and b != predict(key, ks[0] - 1):
            seen_change[ks[0]] += 1
    # a stage, or an in-place upgrade of the program (ops_upgrade.bats): routing unchanged
    keep = ("stage", "upgrade")
    routing = [k for k in range(1, n) if st[k][2] not in keep]
    stages = [k for k in range(1, n) if st[k][2] in keep]
    keys = [k for _, k in sent[::7]]
    no_change = [k for k in routing if all(predict(x, k) == predict(x, k - 1) for x in keys)]
    unseen = [k for k in routing if not seen_change[k]]
    stage_moves = [k for k in stages if any(predict(x, k) != predict(x, k - 1) for x in keys)]
    during = sent and n > 1 and sent[0][0] < st[1][0] and st[-1][1] < sent[-1][0]
    dur = sent[-1][0] - sent[0][0] if len(sent) > 1 else 0
    moves = sum(1 for _, k in sent if exp["A"][k] != exp["B"][k])
    durs = sorted(s[1] - s[0] for s in st[1:])
    print("# %d packets in %.2f s (%.0f/s); %d routing transitions and %d stages from %.3f to "
          "%.3f s, each %.1f..%.1f ms (median %.1f)" %
          (len(sent), dur, len(sent) / dur if dur else 0, len(routing), len(stages),
           st[1][0] - sent[0][0] if n > 1 and sent else 0,
           st[-1][1] - sent[0][0] if n > 1 and sent else 0,
           1e3 * durs[0] if durs else 0, 1e3 * durs[-1] if durs else 0,
           1e3 * durs[len(durs) // 2] if durs else 0))
    print("# keys that differ between the rings: %.1f%%; packets that could follow two states "
          "(sent or in flight during a command): %d; transitions whose own packets show the "
          "change: %d of %d" % (100.0 * moves / max(1, len(sent)), ambiguous,
                                len(routing) - len(unseen), len(routing)))
    ok = True
    if no_change or unseen:
        print("# transitions that changed no routing: predicted %s, seen %s" % (no_change, unseen))
        ok = False
    if stage_moves:
        print("# stages that moved keys: %s" % stage_moves)
        ok = False
    if dur <= 0 or len(sent) < 0.98 * 10000 * dur:
        print("# the load was not reached: %d packets in %.2f s, 10000/s wanted" % (len(sent), dur))
        ok = False
    if not during:
        print("# the transitions did not all happen while the traffic flowed")
        ok = False
    print("swap under load: transitions %d packets %d lost %d misrouted %d duplicated %d"
          % (len(routing), len(sent), lost, misrouted, dup))
    ok = ok and len(sent) > 0 and not (lost or misrouted or dup)
    sys.exit(0 if ok else 1)


main()
