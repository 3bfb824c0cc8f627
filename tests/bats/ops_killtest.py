#!/usr/bin/env python3
# kill -9 of a keyrouter command at many moments, each followed by the command that must
# recover from it (tests/bats/ops_heal.bats):
#   ops_killtest.py load|apply|stage|unload N
# A moment is "on entry to the K-th call of system call S" (bpf, sendto: netlink, mkdir,
# unlink): strace's fault injection sends SIGKILL there, so every state change the command
# makes in the kernel or in the bpf filesystem can be the last one it made.  The moments are
# taken from a traced run of the same command: the first call of every run of the same
# bpf command or system call, and the last call, N of them spread over the whole command.
#
# After each kill, what is left is recorded (pins, the record, the attached program, and the
# ids of every map and program they hold), then:
#   load    the next `load` (even moments) or `unload --instance` (odd moments, then a load)
#           must succeed; the load must route every key to the backend the ring predicts
#           (real UDP packets through the attached program); `unload` must then leave no
#           pin, no attached program, and none of the maps and programs seen
#   apply   (instance loaded) the next apply converges and routes as its config says; at the
#           end one more killed apply is followed directly by `unload`, which leaves nothing
#   stage   `ring stage` of a version into the standby slot: routing stays on the active
#           ring, the next stage converges (then rollback); at the end unload, as apply
#   unload  the next `unload` (even) or `load` (odd, then route, then unload) cleans up
# Environment (tests/bats/ops_helpers.bash): KR_BIN, P, KR_TMP, KR_NB, VIP, PORT; the
# configurations $KR_TMP/heal_a.json and heal_b.json (ring "web") and the expected routes of
# keys h0..h<KR_KEYS-1> in $KR_TMP/exp.heal_a and exp.heal_b ("key backend-index").
# Prints one line per moment and a summary; exit 1 when any moment failed.
import json, os, subprocess, sys, time

BIN = os.environ["KR_BIN"]
P = os.environ["P"]
TMP = os.environ["KR_TMP"]
NB = int(os.environ["KR_NB"])
VIP, PORT = os.environ.get("VIP", "10.77.1.1"), os.environ.get("PORT", "7000")
NKEYS = int(os.environ.get("KR_KEYS", "100"))
INST = P + "-heal"
PIN = "/sys/fs/bpf/keyrouter/" + INST
UDP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ops_udp.py")
PY = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable
SYSCALLS = "bpf,sendto,mkdir,unlink,rmdir"


def ns(name, *cmd, **kw):
    return subprocess.run(["nsenter", "--net=/run/netns/%s-%s" % (P, name)] + list(cmd),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)


def kr(*args):
    r = ns("r", BIN, *args)
    return r.returncode, r.stdout.strip()


def cfg(name):
    return os.path.join(TMP, name + ".json")


def command(mode, conf="heal_a"):
    if mode == "load":
        return ["load", "r0", "-c", cfg(conf), "--mode", "generic", "--instance", INST]
    if mode == "apply":
        # the two configurations differ by more than max_move of the keys: forced
        return ["apply", "--force", "-c", cfg(conf), "--instance", INST]
    if mode == "stage":
        return ["ring", "stage", "web", "-c", cfg(conf), "--instance", INST]
    return ["unload", "r0", "--instance", INST]


def trace(args):
    """The calls of SYSCALLS a run of args makes: [(syscall, run key)]."""
    out = os.path.join(TMP, "trace")
    ns("r", "strace", "-qq", "-o", out, "-e", "trace=" + SYSCALLS, BIN, *args)
    calls = []
    with open(out) as f:
        for line in f:
            sc = line.split("(", 1)[0]
            if sc not in SYSCALLS.split(","):
                continue
            key = line.split(",", 1)[0] if sc == "bpf" else sc
            calls.append((sc, key))
    return calls


WRITES = ("PROG_LOAD", "MAP_CREATE", "MAP_UPDATE", "MAP_DELETE", "MAP_FREEZE", "OBJ_PIN",
          "mkdir", "unlink", "rmdir", "sendto")


def moments(calls, n):
    """About n moments (syscall, k-th call of it, what): the first and the last call, every
    netlink call (the attach, the detach) and the call after it, then moments spread evenly
    over the calls that change something (create, update, freeze, pin, mkdir, unlink: a
    kill before the j-th of them leaves what the first j-1 made): a third over those after
    the last mkdir (a load's apply), a third over those after the attach, the rest over
    all."""
    seen, at = {}, []
    for sc, key in calls:
        seen[sc] = seen.get(sc, 0) + 1
        at.append((sc, seen[sc], key.replace("bpf(BPF_", "")))
    last = len(calls) - 1
    net = [i for i, (sc, _) in enumerate(calls) if sc == "sendto"]
    pick = {0, last} | set(net) | {min(i + 1, last) for i in net}
    writes = [i for i, c in enumerate(at) if c[2].startswith(WRITES)]
    after = [i for i in writes if net and i > net[-1]] or writes
    dirs = [i for i in after if calls[i][0] == "mkdir"]
    apply_ = [i for i in after if dirs and i > dirs[-1]] or after
    k = (n - len(pick)) // 3
    for pool, share in ((apply_, k), (after, k), (writes, n)):
        for j in range(share):
            if len(pick) >= n:
                break
            pick.add(pool[round(j * (len(pool) - 1) / max(share - 1, 1))])
    return [at[i] for i in sorted(pick)]


def killed(args, sc, k):
    r = ns("r", "strace", "-qq", "-o", "/dev/null", "-e", "trace=" + sc,
           "-e", "inject=%s:signal=KILL:when=%d" % (sc, k), BIN, *args)
    return r.returncode


def bpftool(*args):
    r = subprocess.run(["bpftool", "-j"] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, text=True)
    try:
        return json.loads(r.stdout or "null")
    except ValueError:
        return None


def xdp_prog():
    r = subprocess.run(["ip", "-j", "-d", "-n", P + "-r", "link", "show", "r0"],
                       stdout=subprocess.PIPE, text=True)
    x = json.loads(r.stdout)[0].get("xdp")
    return x["prog"]["id"] if x and "prog" in x else 0


def left():
    """What is there now: pins, the record's state, the attached program, and the ids of
    the maps and programs that the pins and the program hold."""
    pins = sorted(os.listdir(PIN)) if os.path.isdir(PIN) else None
    maps, progs = set(), set()
    for m in bpftool("-f", "map", "show") or []:
        if any(p.startswith(PIN + "/") for p in m.get("pinned", [])):
            maps.add(m["id"])
    for p in bpftool("-f", "prog", "show") or []:
        if any(x.startswith(PIN + "/") for x in p.get("pinned", [])):
            progs.add(p["id"])
    att = xdp_prog()
    if att:
        progs.add(att)
    for pid in list(progs):
        info = bpftool("prog", "show", "id", str(pid)) or {}
        maps.update(info.get("map_ids", []))
    if pins and "kr_rings" in pins:
        for e in bpftool("map", "dump", "pinned", PIN + "/kr_rings") or []:
            v = e.get("value")
            if isinstance(v, list):
                maps.add(int.from_bytes(bytes(int(b, 16) for b in v), "little"))
            elif isinstance(v, int):
                maps.add(v)
    record = "none"
    if pins and "kr_ops_meta" in pins:
        d = bpftool("map", "dump", "pinned", PIN + "/kr_ops_meta") or []
        magic = bytes(int(b, 16) for b in d[0]["value"][:4]) if d else b""
        record = {b"PORK": "finished", b"LORK": "loading"}.get(magic, "empty")
    return {"pins": pins, "record": record, "attached": att, "maps": maps, "progs": progs}


def describe(s):
    if s["pins"] is None and not s["attached"]:
        return "nothing"
    return "%s pins, record %s, %s" % (
        len(s["pins"]) if s["pins"] is not None else "no", s["record"],
        "program %d attached" % s["attached"] if s["attached"] else "no program attached")


def gone(maps, progs):
    """None of these map and program ids exist any more (the kernel frees them
    asynchronously: up to 10 s)."""
    for _ in range(100):
        now_m = {m["id"] for m in bpftool("map", "show") or []}
        now_p = {p["id"] for p in bpftool("prog", "show") or []}
        still = (maps & now_m, progs & now_p)
        if not still[0] and not still[1]:
            return None
        time.sleep(0.1)
    return "maps %s programs %s still exist" % (sorted(still[0]), sorted(still[1]))


def clean(seen):
    """After an unload: no pin, no program on r0, none of the ids seen."""
    if os.path.exists(PIN):
        return "pins left: %s" % os.listdir(PIN)
    if xdp_prog():
        return "a program is still attached to r0"
    return gone(seen["maps"], seen["progs"])


def route(exp):
    """Every key at the backend the ring predicts (real packets through r0)."""
    for i in range(1, NB + 1):
        open(os.path.join(TMP, "b%d.log" % i), "w").close()
    ns("c", PY, UDP, "send", VIP, PORT, "h", "0", str(NKEYS))
    want = {}
    with open(os.path.join(TMP, "exp." + exp)) as f:
        for line in f:
            k, b = line.split()
            want[k] = int(b)
    got = {}
    for _ in range(100):
        got = {}
        for i in range(1, NB + 1):
            with open(os.path.join(TMP, "b%d.log" % i)) as f:
                for line in f:
                    k = line.split()[1]
                    if k.startswith("h"):
                        got[k] = i
        if len(got) >= len(want):
            break
        time.sleep(0.1)
    bad = sum(1 for k, b in want.items() if got.get(k) != b)
    return None if not bad else "%d of %d keys not at their backend (%d received)" % (
        bad, len(want), len(got))


def load_ok(seen):
    rc, out = kr(*command("load"))
    if rc:
        return "load failed (%d): %s" % (rc, out.splitlines()[-1:])
    return route("heal_a")


def still_loaded():
    rc, out = kr(*command("load"))
    return None if rc == 1 and "is already loaded on 'r0'" in out else \
        "load of a loaded instance: exit %d: %s" % (rc, out.splitlines()[-1:])


def unload_ok(seen):
    """Unload and check that nothing is left (seen: ids to check, updated first)."""
    now = left()
    seen["maps"] |= now["maps"]
    seen["progs"] |= now["progs"]
    rc, out = kr(*command("unload"))
    if rc and not (now["pins"] is None and not now["attached"] and "not loaded" in out):
        return "unload failed (%d): %s" % (rc, out.splitlines()[-1:])
    return clean(seen)


def first_error(*steps):
    for name, fn in steps:
        err = fn()
        if err:
            return "%s: %s" % (name, err)
    return None


def main():
    mode, n = sys.argv[1], int(sys.argv[2])
    kr(*command("unload"))
    conf = "heal_b"
    if mode != "load":
        rc, out = kr(*command("load"))
        if rc:
            print("setup load failed: " + out)
            return 1
    ref = command(mode, conf)
    if mode in ("load", "unload"):
        ref = command(mode)
    calls = trace(ref)
    if mode == "load":
        kr(*command("unload"))
    elif mode == "apply":
        kr(*command("apply", "heal_a"))
    elif mode == "stage":
        kr("ring", "rollback", "web", "--instance", INST)
    elif mode == "unload":
        kr(*command("load"))
    ms = moments(calls, n)
    print("%s: %d calls of %s in a traced run; %d moments" % (
        " ".join(["keyrouter"] + ref).replace(TMP + "/", ""), len(calls), SYSCALLS, len(ms)))
    failed = 0
    cur = "heal_a"
    for j, (sc, k, what) in enumerate(ms):
        seen = {"maps": set(), "progs": set()}
        nxt = "heal_b" if cur == "heal_a" else "heal_a"
        args = command(mode, nxt if mode in ("apply", "stage") else "heal_a")
        rc = killed(args, sc, k)
        s = left()
        seen["maps"] |= s["maps"]
        seen["progs"] |= s["progs"]
        how = "killed" if rc in (137, -9) else "not killed (exit %d)" % rc
        if mode == "load":
            if j % 2 == 0:
                rec = "load, route, unload"
                err = first_error(("load", lambda: load_ok(seen)),
                                  ("unload", lambda: unload_ok(seen)))
            else:
                rec = "unload, load, route, unload"
                err = first_error(("unload", lambda: unload_ok(seen)),
                                  ("load", lambda: load_ok(seen)),
                                  ("unload", lambda: unload_ok(seen)))
        elif mode == "unload":
            if j % 2 == 0:
                rec = "unload"
                err = first_error(("unload", lambda: unload_ok(seen)))
            elif s["attached"] and s["record"] == "finished":
                # killed before it detached anything: still loaded and routing, which
                # the next load says; the next unload completes it
                rec = "load (refused: still loaded), route, unload"
                err = first_error(("load", lambda: still_loaded()),
                                  ("route", lambda: route("heal_a")),
                                  ("unload", lambda: unload_ok(seen)))
            else:
                rec = "load, route, unload"
                err = first_error(("load", lambda: load_ok(seen)),
                                  ("unload", lambda: unload_ok(seen)))
            kr(*command("load"))
        elif mode == "apply":
            rec = "apply, route"
            rc2, out = kr(*command("apply", nxt))
            err = ("apply failed: " + out) if rc2 else route(nxt)
            cur = nxt
        else:
            # the standby slot is not in use: routing stays on the active ring (heal_a)
            rec = "route, stage, rollback"
            err = route("heal_a")
            if not err:
                rc2, out = kr(*command("stage", nxt))
                err = ("stage failed: " + out) if rc2 else None
                kr("ring", "rollback", "web", "--instance", INST)
        if rc not in (137, -9):
            err = err or "the moment was not reached"
        failed += err is not None
        print("%s at %s call %d (%s): %s; left %s; then %s: %s" % (
            mode, sc, k, what, how, describe(s), rec, err or "ok"))
    if mode in ("apply", "stage"):
        # one more kill, then unload at once
        sc, k, what = ms[len(ms) // 2]
        seen = {"maps": set(), "progs": set()}
        killed(command(mode, "heal_b" if cur == "heal_a" else "heal_a"), sc, k)
        err = unload_ok(seen)
        failed += err is not None
        print("%s at %s call %d (%s), then unload: %s" % (mode, sc, k, what, err or "ok"))
    elif mode == "unload":
        seen = {"maps": set(), "progs": set()}
        err = unload_ok(seen)
        failed += err is not None
    print("kill test %s: moments %d failed %d" % (mode, len(ms), failed))
    return 1 if failed else 0


sys.exit(main())
