#!/usr/bin/env python3
# Drives the ring transitions of ops_swap.bats while traffic flows, and logs each command
# with its start and end time (CLOCK_REALTIME, the clock of the client's log):
#   ops_swapdrive.py NETNS INSTANCE DIR MIN_TRANSITIONS SEED
# DIR holds A.json and B.json (ring "web" as two different rings of the same backends);
# ring A is loaded and active in slot 0.  Cycles of: stage the other ring into the standby
# slot (routing unchanged), migrate three increasing fractions, then commit or rollback
# (alternately).  Every migrate, commit and rollback changes where keys go (a commit is
# made below 100%), and fractions are multiples of 6.25% (exact in 2^-32 units).  Stops
# after MIN_TRANSITIONS routing transitions.  Writes DIR/trans: one line per command,
#   "t_start t_end kind slot0 slot1 active fraction"
# (the state after it, fraction in 2^-32 units), the first line being the initial state.
import random, subprocess, sys, time

netns, inst, d, need, seed = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
kr_bin = sys.argv[6]
rng = random.Random(seed)
UNIT = 1 << 32
log = open(d + "/trans", "w", buffering=1)
slots, act, frac = ["A", "-"], 0, 0
t = time.time()
log.write("%.6f %.6f init %s %s %d %d\n" % (t, t, slots[0], slots[1], act, frac))


def run(kind, *args):
    t0 = time.time()
    p = subprocess.run(["nsenter", "--net=/run/netns/" + netns, kr_bin, "-q"] + list(args) +
                       ["--instance", inst], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    t1 = time.time()
    if p.returncode:
        sys.exit("ops_swapdrive: %s failed: %s" % (" ".join(args), p.stderr.decode()))
    log.write("%.6f %.6f %s %s %s %d %d\n" % (t0, t1, kind, slots[0], slots[1], act, frac))
    time.sleep(0.03)


done, cycle = 0, 0
while done < need:
    new = "B" if slots[act] == "A" else "A"
    slots[act ^ 1] = new
    frac = 0
    run("stage", "ring", "stage", "web", "-c", "%s/%s.json" % (d, new))
    steps = sorted(rng.sample(range(1, 16), 3))
    for k in steps:
        frac = k * UNIT // 16
        run("migrate", "ring", "migrate", "web", "--percent", "%g" % (k * 6.25))
        done += 1
    if cycle % 2 == 0:
        act, frac = act ^ 1, 0
        run("commit", "ring", "commit", "web")
    else:
        frac = 0
        run("rollback", "ring", "rollback", "web")
    done += 1
    cycle += 1
