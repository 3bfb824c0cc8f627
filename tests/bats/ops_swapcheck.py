#!/usr/bin/env python3
# Checks the swap-under-traffic run of ops_swap.bats: every packet the client sent must
# arrive exactly once, at the backend that its key and the ring state in force when it was
# sent predict.  A packet sent while a transition was being made (between the command's
# start and its end + SLACK) may follow the state before or after it.
#   ops_swapcheck.py SENT TRANSITIONS EXP_A EXP_B RECV...
# SENT: "time key"; TRANSITIONS: "t_start t_end ringA|ringB(slot0) ringA|ringB(slot1)
# active fraction" (the state after the command); EXP_X: "key backend" on ring X;
# RECV_i: the log of backend i ("time key").
import sys, zlib

SLACK = 0.05

def mix32(h):
    h ^= h >> 16; h = (h * 0x85ebca6b) & 0xffffffff
    h ^= h >> 13; h = (h * 0xc2b2ae35) & 0xffffffff
    h ^= h >> 16
    return h

def main():
    sent = [l.split() for l in open(sys.argv[1]) if l.strip()]
    trans = [l.split() for l in open(sys.argv[2]) if l.strip()]
    exp = {}
    for name, f in (("A", sys.argv[3]), ("B", sys.argv[4])):
        exp[name] = dict(l.split() for l in open(f) if l.strip())
    got = {}
    dup = 0
    for i, f in enumerate(sys.argv[5:], 1):
        for l in open(f):
            p = l.split()
            if len(p) != 2:
                continue
            if p[1] in got:
                dup += 1
            got[p[1]] = str(i)
    # state k is in force from trans[k-1] end (+slack) to trans[k] start
    states = [(float(t[0]), float(t[1]), (t[2], t[3], int(t[4]), int(t[5]))) for t in trans]

    def predict(key, st):
        s0, s1, active, frac = st
        slots = (s0, s1)
        slot = active ^ 1 if mix32(zlib.crc32(key.encode()) & 0xffffffff) < frac else active
        return exp[slots[slot]][key]

    lost = misrouted = ambiguous = ok = 0
    k = 0
    for t, key in sent:
        t = float(t)
        while k + 1 < len(states) and states[k + 1][0] <= t:
            k += 1
        cur = states[k][2]
        allowed = {predict(key, cur)}
        if k > 0 and t <= states[k][1] + SLACK:          # during transition k
            allowed.add(predict(key, states[k - 1][2]))
        if k + 1 < len(states) and t >= states[k + 1][0] - 0.0:  # next one started
            allowed.add(predict(key, states[k + 1][2]))
        if key not in got:
            lost += 1
        elif got[key] not in allowed:
            misrouted += 1
            if misrouted <= 5:
                print("# misrouted %s at %.6f: got %s, allowed %s" % (key, t, got[key], allowed))
        else:
            ok += 1
            ambiguous += len(allowed) > 1
    moves = sum(1 for t, key in sent if exp["A"][key] != exp["B"][key])
    print("# %d sent, %d transitions, %d arrived as predicted (%d in a transition window), "
          "%d lost, %d misrouted, %d duplicated; %d keys differ between the rings"
          % (len(sent), len(trans) - 1, ok, ambiguous, lost, misrouted, dup, moves))
    sys.exit(0 if not lost and not misrouted and not dup and len(sent) else 1)

main()
