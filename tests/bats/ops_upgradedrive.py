#!/usr/bin/env python3
# Drives the in-place upgrades of ops_upgrade.bats while traffic flows:
#   ops_upgradedrive.py NETNS INSTANCE DIR UPGRADES KR_BIN OBJECT STATE...
# UPGRADES times `keyrouter upgrade`, alternately to OBJECT (another build of the program)
# and back to the program built into KR_BIN.  STATE is the routing state the instance is
# in and stays in ("slot0 slot1 active fraction", as tests/bats/ops_swapdrive.py logs it).
# Writes DIR/trans for tests/bats/ops_swapcheck.py: the initial state, then one "upgrade"
# line per upgrade with its start and end time (routing must not change).  After each
# upgrade, from `keyrouter status --json`: the recorded program id is the new one and
# attached; the new program's tag is the one of its build (two different tags, one per
# direction); every global, ring slot and backend counter is at least what it was; the
# backends keep their ids, addresses and states (a backend set down stays down); the rings
# keep their slots, digests, points, active slot and migration fraction.  Prints one line
#   upgrades U (D to OBJECT, B back); tags T1 T2; counters never decreased
# and exits non-zero (saying why) at the first check that fails.
import json, re, subprocess, sys, time

netns, inst, d, need, kr_bin, obj = sys.argv[1:7]
state = sys.argv[7:11]
need = int(need)
log = open(d + "/trans", "w", buffering=1)
t = time.time()
log.write("%.6f %.6f init %s\n" % (t, t, " ".join(state)))


def kr(*args):
    return subprocess.run(["nsenter", "--net=/run/netns/" + netns, kr_bin] + list(args),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def status():
    p = kr("status", "--json", "--instance", inst)
    try:
        return json.loads(p.stdout)
    except ValueError:
        sys.exit("ops_upgradedrive: status --json: %r %r" % (p.stdout[:200], p.stderr))


# A ring slot's counters in status --json (the rest of a slot is what an upgrade keeps).
SLOT_COUNTERS = ("packets", "bytes", "failover", "no_ring", "bad_image", "all_down",
                 "walk_limit", "spilled", "replica")


def counters(s):
    """Every counter: global, per ring slot, per backend (name -> value)."""
    c = {"global " + k: v for k, v in s["counters"].items()}
    for r in s["rings"]:
        for sl in r["slots"]:
            for k in SLOT_COUNTERS:
                c["ring %s slot %d %s" % (r["name"], sl["slot"], k)] = sl.get(k, 0)
    for b in s["backends"]:
        c["backend %d packets" % b["id"]] = b["packets"]
        c["backend %d bytes" % b["id"]] = b["bytes"]
    return c


def fixed(s):
    """What an upgrade must not change: backends (id, address, state), rings without their
    counters."""
    rings = []
    for r in s["rings"]:
        r = dict(r)
        r["slots"] = [{k: v for k, v in sl.items() if k not in SLOT_COUNTERS}
                      for sl in r["slots"]]
        rings.append(r)
    return (sorted((b["id"], b["address"], b["state"]) for b in s["backends"]), rings)


def fail(msg):
    sys.exit("ops_upgradedrive: upgrade %d: %s" % (done + 1, msg))


done = 0
s0 = status()
prev, keep = counters(s0), fixed(s0)
tags = {True: set(), False: set()}
if not any(b["state"] == "down" for b in s0["backends"]):
    sys.exit("ops_upgradedrive: no backend is down before the upgrades")
while done < need:
    to_obj = done % 2 == 0
    args = ["upgrade", "--instance", inst] + (["--object", obj] if to_obj else [])
    t0 = time.time()
    p = kr(*args)
    t1 = time.time()
    err = p.stderr.decode()
    if p.returncode:
        fail("%s failed: %s" % (" ".join(args), err))
    log.write("%.6f %.6f upgrade %s\n" % (t0, t1, " ".join(state)))
    m = re.search(r"program (\d+) \(tag (\w+)\) -> (\d+) \(tag (\w+)\)", err)
    if not m:
        fail("no 'program A (tag) -> B (tag)' in: %s" % err)
    tags[to_obj].add(m.group(4))
    s = status()
    if s["instance"]["prog_id"] != int(m.group(3)) or s["instance"]["attached"] != "yes":
        fail("status records program %s (%s), the upgrade said %s" %
             (s["instance"]["prog_id"], s["instance"]["attached"], m.group(3)))
    now = counters(s)
    less = [k for k in prev if now.get(k, -1) < prev[k]]
    if less:
        fail("counters decreased: %s" % ", ".join("%s %d -> %s" % (k, prev[k], now.get(k))
                                                   for k in less[:5]))
    if fixed(s) != keep:
        fail("backends or rings changed:\n%s\n%s" % (keep, fixed(s)))
    prev = now
    done += 1
    time.sleep(0.05)
if len(tags[True]) != 1 or len(tags[False]) != 1 or tags[True] == tags[False]:
    sys.exit("ops_upgradedrive: expected one tag per build, two builds: %s" % tags)
print("upgrades %d (%d to %s, %d back); tags %s %s; counters never decreased; routed %d" %
      (done, (done + 1) // 2, obj.split("/")[-1], done // 2, tags[True].pop(),
       tags[False].pop(), prev.get("global routed", 0)))
