#!/usr/bin/python3
"""The soak test's driver (scripts/soak.sh sets up the namespaces and runs it in the
router's network namespace; docs/operations.md "Soak test" describes it).

It runs the instance's long-running processes as their units would (restarted when they
die), scrapes the exporter every 100 ms, keeps DNS and memcached traffic going from the
client (tests/soak/traffic.py: each query's send time and outcome), and cycles through the
events below for DURATION seconds.  Every 10 s it records each process's descriptors and
RSS and the kernel objects of this instance.  At the end it prints exactly one line

  soak: M minutes, E events, S scrapes; fds F0 -> F1, rss R0 -> R1 KiB, kernel progs P0 -> P1, maps M0 -> M1; lost outside bounds L

(the details before it, on standard error) and exits 0 only when F1 - F0 <= FD_BOUND,
R1 - R0 <= the RSS bound, P1 = P0, M1 = M0, the pins are as many as at the start,
L = 0, no process held what the instance no longer has FOLLOW s after an unload + load
or upgrade, every scrape outside an unload + load said keyrouter_up 1, at least
--min-events events ran and none of their commands failed.
"""
import argparse
import copy
import http.client
import json
import os
import signal
import subprocess
import sys
import threading
import time

FD_BOUND = 5
RSS_BOUND_KIB = 2048	# + 10 % of R0: allocator arenas settle after the first rounds
PRE = 0.3		# a loss window opens this long before its action (queries in flight)
SETTLE = 5.0		# a process's first sample: this long after it started
SAMPLE_EVERY = 10.0
FOLLOW = 10.0		# a process has followed an unload + load or an upgrade by then


def log(msg):
    print("soak: [%7.1f] %s" % (time.time() - T0, msg), file=sys.stderr, flush=True)


T0 = time.time()


def run(argv, timeout=60, check=True, input=None):
    """Run a command; its output and status.  A failure is an error of the soak."""
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=timeout, text=True, input=input,
                           stdin=None if input is not None else subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        ERRORS.append("%s: timed out after %d s" % (" ".join(argv[:3]), timeout))
        return 124, ""
    if check and p.returncode != 0:
        ERRORS.append("%s exited %d: %s" % (" ".join(argv[:4]), p.returncode,
                                             p.stdout.strip().splitlines()[-1:]))
    return p.returncode, p.stdout


ERRORS = []
SETTLES = [0]	# settle points passed (the cycles done, plus the start)


class NoLock:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


NOLOCK = NoLock()


# ---- the long-running processes, as their units run them -----------------------------

class Daemon:
    """One long-running process, restarted as systemd's Restart= would: 'always', or
    'on-failure' (a signal or a non-zero status), RestartSec later."""

    def __init__(self, name, argv, restart, restart_sec, logdir):
        self.name, self.argv, self.restart, self.restart_sec = name, argv, restart, restart_sec
        self.logf = open(os.path.join(logdir, name + ".log"), "a")
        self.proc = None
        self.incarnations = []	# [{"pid", "start", "samples": [(t, fds, rss)]}]
        self.killed = 0		# by the driver (kill -9 events)
        self.deaths = []	# (time, status) of exits the driver did not cause
        self.restart_at = None
        self.lock = threading.Lock()

    def start(self):
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=self.logf,
                                     stderr=subprocess.STDOUT, close_fds=True)
        self.incarnations.append({"pid": self.proc.pid, "start": time.time(), "samples": [],
                                  "settles": SETTLES[0]})
        self.expect_death = False
        self.restart_at = None

    def poll(self):
        with self.lock:
            if self.proc is not None:
                rc = self.proc.poll()
                if rc is None:
                    return
                if not self.expect_death:
                    self.deaths.append((time.time(), rc))
                    log("%s (pid %d) exited with status %d" % (self.name, self.proc.pid, rc))
                self.proc = None
                if self.restart == "always" or rc != 0:
                    self.restart_at = time.time() + self.restart_sec
            if self.restart_at is not None and time.time() >= self.restart_at:
                self.start()

    def kill9(self):
        with self.lock:
            if self.proc is None:
                return False
            self.expect_death = True
            self.killed += 1
            self.proc.kill()
            return True

    def stop(self):
        with self.lock:
            self.restart_at = None
            self.restart = "never"
            if self.proc is not None:
                self.expect_death = True
                self.proc.terminate()
                try:
                    self.proc.wait(5)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
                self.proc = None

    def pid(self):
        p = self.proc
        return p.pid if p is not None and p.poll() is None else None

    def current(self):
        return self.incarnations[-1] if self.incarnations else None


# ---- what a process holds, what the kernel holds of this instance --------------------

def proc_fds(pid):
    """(descriptor count, RSS KiB, prog ids, map ids) of PID, or None when it is gone."""
    try:
        fds = os.listdir("/proc/%d/fd" % pid)
        rss = anon = 0
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1])
                elif line.startswith("RssAnon:"):
                    anon = int(line.split()[1])
        progs, maps = set(), set()
        for fd in fds:
            try:
                with open("/proc/%d/fdinfo/%s" % (pid, fd)) as f:
                    for line in f:
                        if line.startswith("prog_id:"):
                            progs.add(int(line.split()[1]))
                        elif line.startswith("map_id:"):
                            maps.add(int(line.split()[1]))
            except OSError:
                pass
        return len(fds), rss, progs, maps, anon
    except OSError:
        return None


def proc_steady(pid):
    """The process's steady holdings: the least descriptors and RSS of 5 reads 50 ms apart
    and the ids held in every read (a scrape or a round in progress opens the maps for a
    moment; a leak stays)."""
    reads = []
    for i in range(5):
        r = proc_fds(pid)
        if r is None:
            return None
        reads.append(r)
        if i < 4:
            time.sleep(0.05)
    progs = set.intersection(*(r[2] for r in reads))
    maps = set.intersection(*(r[3] for r in reads))
    return (min(r[0] for r in reads), min(r[1] for r in reads), progs, maps,
            min(r[4] for r in reads))


def bpftool(*args):
    rc, out = run(["bpftool", "-j", "-f"] + list(args), check=False)
    try:
        return json.loads(out) if rc == 0 else []
    except ValueError:
        return []


def attached_prog(iface):
    rc, out = run(["ip", "-j", "-d", "link", "show", "dev", iface], check=False)
    try:
        link = json.loads(out)[0]
    except (ValueError, IndexError):
        return None
    xdp = link.get("xdp") or {}
    if "prog" in xdp:
        return xdp["prog"].get("id")
    for a in xdp.get("attached", []):
        if "prog" in a:
            return a["prog"].get("id")
    return None


class Kernel:
    """The BPF objects reachable from this instance only (the machine runs other tests):
    its pins, the program attached to its interface, the objects its processes hold, and
    the maps those programs use."""

    def __init__(self, pin_dir, iface):
        self.pin_dir, self.iface = pin_dir, iface
        self.detail = ""

    def pins(self):
        n = 0
        for _root, _dirs, files in os.walk(self.pin_dir):
            n += len(files)
        return n

    def count(self, held_progs, held_maps):
        """(progs, maps, attached prog id, live progs, live maps): live = what the pins and
        the attached program reach (the instance as it is now); the rest of progs and
        maps is held by the processes only."""
        under = self.pin_dir.rstrip("/") + "/"
        allprogs = bpftool("prog", "show")
        allmaps = bpftool("map", "show")
        live_p, live_m = set(), set()
        a = attached_prog(self.iface)
        if a is not None:
            live_p.add(a)
        for m in allmaps:
            if any(p.startswith(under) for p in m.get("pinned", [])):
                live_m.add(m["id"])
        for p in allprogs:
            if any(x.startswith(under) for x in p.get("pinned", [])):
                live_p.add(p["id"])
        progs = live_p | set(held_progs)
        maps = live_m | set(held_maps)
        self.detail = "pinned maps %d" % len(live_m)
        for p in allprogs:
            if p["id"] in live_p:
                live_m.update(p.get("map_ids", []))
                self.detail += ", prog %d: %d maps (%d not pinned)" % (
                    p["id"], len(p.get("map_ids", [])),
                    len(set(p.get("map_ids", [])) - maps))
            if p["id"] in progs:
                maps.update(p.get("map_ids", []))
        return progs, maps, a, live_p, live_m


# ---- the driver -----------------------------------------------------------------------

class Soak:
    def __init__(self, a):
        self.a = a
        self.kr = a.keyrouter
        self.inst = a.instance
        self.dir = a.dir
        with open(a.config) as f:
            self.full = json.load(f)	# every backend (the last one joins and leaves)
        self.nb = len(a.backend_ns)
        self.cur = self.strip(self.full, self.nb - 1)
        self.cfg = os.path.join(self.dir, "soak.json")
        self.write_cfg()
        h = self.full["rings"][0]["health"]
        self.detect = h["fall"] * h["interval"] + h["timeout"]
        self.events = []	# {"name", "t0", "t1", "windows", "note"}
        self.kernel = Kernel("/sys/fs/bpf/keyrouter/" + self.inst, a.iface)
        self.samples = []	# kernel samples: (t, progs, maps, pins, attached)
        self.scrapes = 0
        self.scrape_lock = threading.Lock()
        self.next_sample = 0
        self.last_change = 0.0	# the end of the last unload + load or upgrade
        self.orphans = []	# (time, process, programs, maps) held of a replaced instance
        self.scrape_fail = 0
        self.scrape_down = []	# times a scrape said keyrouter_up 0 (or nothing)
        self.stop_ev = threading.Event()
        self.rot = 0
        self.staged_n = 0
        self.commit_alt = False
        self.upgrade_alt = False
        self.daemons = self.make_daemons()
        self.servers = []	# the servers this driver restarted

    # configurations
    def strip(self, cfg, n):
        c = copy.deepcopy(cfg)
        for r in c["rings"]:
            r["backends"] = r["backends"][:n]
        return c

    def write_cfg(self, cfg=None, path=None):
        path = path or self.cfg
        with open(path + ".tmp", "w") as f:
            json.dump(cfg or self.cur, f, indent=1)
        os.rename(path + ".tmp", path)

    def make_daemons(self):
        kr, i, d = self.kr, self.inst, self.dir
        port = "127.0.0.1:%d" % self.a.port
        return [
            # keyrouter-health@.service: Restart=always, RestartSec=1
            Daemon("health", [kr, "health", "-c", self.cfg, "--instance", i], "always", 1, d),
            # keyrouter-exporter.service: Restart=on-failure, RestartSec=2s (told which
            # instance: the machine's other instances are other tests')
            Daemon("exporter", [kr, "exporter", "--listen", port, "--instance", i],
                   "on-failure", 2, d),
            # keyrouter-balance@.service: Restart=always, RestartSec=5
            Daemon("balance", [kr, "balance", "--instance", i, "--ring", "dns4", "--mode", "on",
                               "--interval", "2", "--no-replicas"], "always", 5, d),
            # no unit: an operator's terminal, as if restarted by hand a second later
            Daemon("status-watch", [kr, "status", "--watch", "1", "--instance", i],
                   "always", 1, d),
        ]

    def kr_run(self, *args, check=True):
        return run([self.kr] + list(args) + ["--instance", self.inst], check=check)

    # threads: supervision, scrapes, samples
    def supervise(self):
        while not self.stop_ev.is_set():
            for dm in self.daemons:
                dm.poll()
            time.sleep(0.05)

    def scrape(self):
        conn = None
        want = 'keyrouter_up{keyrouter_instance="%s"} 1' % self.inst
        while not self.stop_ev.is_set():
            t = time.time()
            self.scrape_lock.acquire()
            try:
                if conn is None:
                    conn = http.client.HTTPConnection("127.0.0.1", self.a.port, timeout=5)
                conn.request("GET", "/metrics")
                r = conn.getresponse()
                body = r.read().decode(errors="replace")
                if r.status == 200:
                    self.scrapes += 1
                    if want not in body:
                        self.scrape_down.append(t)
                else:
                    self.scrape_fail += 1
            except (OSError, http.client.HTTPException):
                self.scrape_fail += 1
                if conn is not None:
                    conn.close()
                conn = None
            finally:
                self.scrape_lock.release()
            time.sleep(max(0.0, 0.1 - (time.time() - t)))

    def tag(self):
        """What a process's steady descriptors depend on besides leaks: the checker holds a
        socket per backend it checks, and a process following an unload + load or an
        upgrade holds nothing for a moment.  Samples are compared only with samples of the
        same tag: the starting configuration's backends, FOLLOW s after such a change."""
        return (sum(len(r["backends"]) for r in self.cur["rings"]),
                time.time() - self.last_change >= FOLLOW)

    def sample_daemon(self, dm, settle=False):
        inc, pid = dm.current(), dm.pid()
        if inc is None or pid is None or inc["pid"] != pid:
            return None
        # the exporter between two scrapes (one in progress holds every map open)
        with self.scrape_lock if dm.name == "exporter" else NOLOCK:
            r = proc_steady(pid)
        if r is None:
            return None
        inc["samples"].append((time.time(), r[0], r[1], self.tag(), r[4],
                               SETTLES[0] if settle else None))
        return r

    def sample_all(self, settle=False):
        held_p, held_m = set(), set()
        held = {}
        for dm in self.daemons:
            inc = dm.current()
            if inc is None or time.time() - inc["start"] < SETTLE:
                continue
            r = self.sample_daemon(dm, settle)
            if r is not None:
                held_p |= r[2]
                held_m |= r[3]
                held[dm.name] = r
        progs, maps, a, live_p, live_m = self.kernel.count(held_p, held_m)
        self.samples.append((time.time(), len(progs), len(maps), self.kernel.pins(), a))
        # a process holding a program or map the instance no longer has (an unload + load or
        # an upgrade replaced it) once it had the time to follow
        since = time.time() - self.last_change
        stale = []
        for name, r in held.items():
            op, om = r[2] - live_p, r[3] - live_m
            if op or om:
                stale.append("%s holds %d progs, %d maps not the instance's" % (
                    name, len(op), len(om)))
            if (op or om) and since >= FOLLOW:
                self.orphans.append((time.time(), name, len(op), len(om)))
                log("%s holds %d programs and %d maps the instance no longer has (%.0f s after"
                    " the last unload + load or upgrade)" % (name, len(op), len(om), since))
        with open(os.path.join(self.dir, "samples.log"), "a") as f:
            f.write("%.1f progs %s maps %d (%s%s) pins %d attached %s; %s\n" % (
                time.time() - T0, sorted(progs), len(maps), self.kernel.detail,
                "".join("; " + x for x in stale), self.kernel.pins(), a,
                ", ".join("%s %s" % (dm.name, dm.current()["samples"][-1][1:]
                                     if dm.current() and dm.current()["samples"] else "-")
                          for dm in self.daemons)))

    def sample_due(self):
        """Between two events (the instance as an event left it, nothing half done): every
        10 s all of it, and a new incarnation's first sample once it settled."""
        if time.time() >= self.next_sample:
            self.next_sample = time.time() + SAMPLE_EVERY
            self.sample_all()
            return
        for dm in self.daemons:
            inc = dm.current()
            if inc and not inc["samples"] and time.time() - inc["start"] >= SETTLE:
                self.sample_daemon(dm)

    # backends
    def backend_states(self):
        rc, out = self.kr_run("status", "--json", check=False)
        try:
            st = json.loads(out)
        except ValueError:
            return {}
        return {b["address"]: b["state"] for b in st.get("backends", [])}

    def pick_backend(self):
        """The next backend (1..N-1, rotating) whose every service is up, or None."""
        st = self.backend_states()
        n = self.nb - 1
        for k in range(n):
            i = (self.rot + k) % n + 1
            addr = self.a.backend_ip[i - 1]
            mine = [s for a, s in st.items() if a.startswith(addr + ":")]
            if mine and all(s == "up" for s in mine):
                self.rot = i % n
                return i
        return None

    def ns(self, i):
        return self.a.backend_ns[i - 1]

    def start_servers(self, i):
        ns, d, ip = self.ns(i), self.dir, self.a.backend_ip[i - 1]
        vip = self.a.vip
        unbound = ["unbound", "-d", "-c", os.path.join(d, "dns-b%d" % i, "unbound.conf")]
        memcached = ["memcached", "-u", "root", "-m", "16", "-t", "1", "-p", "11211",
                     "-U", "11211", "-l", "%s,%s" % (vip, ip)]
        with open(os.path.join(d, "servers-b%d.log" % i), "a") as lf:
            for argv in (unbound, memcached):
                self.servers.append(subprocess.Popen(
                    ["ip", "netns", "exec", ns] + argv, stdin=subprocess.DEVNULL, stdout=lf,
                    stderr=subprocess.STDOUT))
        for port in ("53", "11211"):
            for _ in range(100):
                rc, out = run(["ip", "netns", "exec", ns, "ss", "-Hlnu", "sport = :" + port],
                              check=False)
                if out.strip():
                    break
                time.sleep(0.1)
            else:
                ERRORS.append("backend %d: nothing listens on udp %s after 10 s" % (i, port))

    def kill_servers(self, i):
        rc, out = run(["ip", "netns", "pids", self.ns(i)], check=False)
        pids = [int(p) for p in out.split()]
        for p in pids:
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for p in pids:
            for _ in range(200):
                if not os.path.exists("/proc/%d" % p):
                    break
                time.sleep(0.01)
        # reap the ones this driver started (the others are the topology's)
        self.servers = [s for s in self.servers if s.poll() is None]

    def nft_drop(self, i, on):
        ns = self.ns(i)
        if on:
            rules = ("table inet kr_soak {\n chain drop_in {\n"
                     "  type filter hook input priority 0; policy accept;\n"
                     "  udp dport { 53, 11211 } drop\n }\n}\n")
            run(["ip", "netns", "exec", ns, "nft", "-f", "-"], input=rules)
        else:
            run(["ip", "netns", "exec", ns, "nft", "delete", "table", "inet", "kr_soak"])

    def wait_up(self, i, limit):
        addr = self.a.backend_ip[i - 1] + ":"
        end = time.time() + limit
        while time.time() < end:
            st = self.backend_states()
            mine = [s for a, s in st.items() if a.startswith(addr)]
            if mine and all(s == "up" for s in mine):
                return True
            time.sleep(0.2)
        return False

    def window(self, t):
        """The loss window of a backend failing at t: until the checker marks it down."""
        return (t - PRE, t + self.detect + self.a.slack)

    # the events
    def ev_kill_backend(self):
        i = self.pick_backend()
        if i is None:
            return None
        t = time.time()
        self.kill_servers(i)
        time.sleep(self.detect + self.a.slack + 0.5)
        self.start_servers(i)
        up = self.wait_up(i, 15)
        return ("kill backend %d" % i, [self.window(t)], "" if up else "not up 15 s after restart")

    def ev_drop(self):
        i = self.pick_backend()
        if i is None:
            return None
        t = time.time()
        self.nft_drop(i, True)
        time.sleep(self.detect + self.a.slack + 0.5)
        self.nft_drop(i, False)
        up = self.wait_up(i, 15)
        return ("silent drop backend %d" % i, [self.window(t)], "" if up else "not up 15 s after")

    def ev_flap(self):
        i = self.pick_backend()
        if i is None:
            return None
        wins = []
        for _ in range(3):
            wins.append(self.window(time.time()))
            self.nft_drop(i, True)
            time.sleep(2)
            self.nft_drop(i, False)
            time.sleep(2)
        # a damped backend may be held down a while: the next events pick others
        return ("flap backend %d (3 x 2 s down / 2 s up)" % i, wins, "")

    def ev_detach(self):
        t = time.time()
        run(["ip", "link", "set", "dev", self.a.iface, "xdp", "off"])
        bound = self.a.watchdog + self.a.slack
        end = t + bound
        while time.time() < end:
            if attached_prog(self.a.iface) is not None:
                break
            time.sleep(0.05)
        note = ""
        back = attached_prog(self.a.iface)
        if back is None:
            # nothing re-attached it: the operator's fix (what is lost from here on is
            # outside every bound)
            self.kr_run("apply", "-c", self.cfg)
            note = "not re-attached within %.1f s: the driver ran apply" % bound
        else:
            note = "re-attached (prog %d) after %.2f s" % (back, time.time() - t)
        return ("detach (xdp off)", [(t - PRE, t + bound)], note)

    def ev_apply_add(self):
        pm = {r["name"]: r.get("point_multiple") for r in self.cur["rings"]}
        self.cur = self.strip(self.full, self.nb)
        for r in self.cur["rings"]:
            r["point_multiple"] = pm[r["name"]]
        self.write_cfg()
        self.kr_run("apply", "-c", self.cfg)
        return ("apply: backend %d added" % self.nb, [], "")

    def ev_apply_reweight(self):
        for r in self.cur["rings"]:
            r["backends"][0]["weight"] = 2
        self.write_cfg()
        self.kr_run("apply", "-c", self.cfg)
        return ("apply: backend 1 weight 2", [], "")

    def ev_apply_remove(self):
        # two applies: both changes at once would move more keys than apply's max_move
        for r in self.cur["rings"]:
            r["backends"][0]["weight"] = 1
        self.write_cfg()
        self.kr_run("apply", "-c", self.cfg)
        for r in self.cur["rings"]:
            r["backends"] = [b for b in r["backends"]
                             if not b["address"].startswith(self.a.backend_ip[-1] + ":")]
        self.write_cfg()
        self.kr_run("apply", "-c", self.cfg)
        return ("apply: backend 1 weight 1, then backend %d removed" % self.nb, [], "")

    def ev_ring(self):
        # a version neither slot holds yet (another point_multiple each time)
        new = copy.deepcopy(self.cur)
        self.staged_n += 1
        for r in new["rings"]:
            r["point_multiple"] = 161 + self.staged_n % 200
        staged = os.path.join(self.dir, "staged.json")
        self.write_cfg(new, staged)
        self.commit_alt = not self.commit_alt
        for r in new["rings"]:
            self.kr_run("ring", "stage", r["name"], "-c", staged)
            self.kr_run("ring", "migrate", r["name"], "--percent", "50")
        time.sleep(1)
        for r in new["rings"]:
            self.kr_run("ring", "commit" if self.commit_alt else "rollback", r["name"])
        if self.commit_alt:
            self.cur = new
            self.write_cfg()
        return ("ring stage, migrate 50 %%, %s" % ("commit" if self.commit_alt else "rollback"),
                [], "")

    def ev_upgrade(self):
        self.upgrade_alt = not self.upgrade_alt
        args = ["upgrade", self.a.iface]
        if self.upgrade_alt and self.a.upgrade_object:
            args += ["--object", self.a.upgrade_object]
        self.kr_run(*args)
        self.last_change = time.time()
        return ("upgrade (%s)" % ("w16 build" if "--object" in args else "built-in"), [], "")

    def ev_reload(self):
        t = time.time()
        self.kr_run("unload", self.a.iface)
        self.kr_run("load", self.a.iface, "-c", self.cfg, "--mode", self.a.mode)
        self.last_change = time.time()
        return ("unload + load", [(t - PRE, time.time() + self.a.slack)], "")

    def ev_kill_daemon(self, dm, parity):
        def ev():
            # every other cycle (health and balance in even ones, the exporter and status
            # --watch in odd ones): each incarnation lives through one whole cycle after
            # its first, which is where its RSS is measured
            if SETTLES[0] % 2 != parity and not self.a.events:
                return "settle"
            # the victim's last sample first: what it grew by counts even though it dies
            self.sample_daemon(dm)
            if not dm.kill9():
                return ("kill -9 %s" % dm.name, [], "was not running")
            return ("kill -9 %s" % dm.name, [], "")
        return ev

    def cycle(self):
        """The events in their order: the configuration changes first and is back to the
        starting one (backend 5 out, weights 1) before the processes are killed, so that
        each incarnation starts and ends in the same configuration."""
        par = {"health": 0, "balance": 0, "exporter": 1, "status-watch": 1}
        dm = {d.name: self.ev_kill_daemon(d, par[d.name]) for d in self.daemons}
        evs = [("apply-add", self.ev_apply_add), ("kill-backend", self.ev_kill_backend),
               ("apply-reweight", self.ev_apply_reweight), ("drop", self.ev_drop),
               ("ring", self.ev_ring), ("detach", self.ev_detach),
               ("apply-remove", self.ev_apply_remove), ("upgrade", self.ev_upgrade),
               ("reload", self.ev_reload), ("flap", self.ev_flap),
               ("kill-health", dm["health"]), ("kill-exporter", dm["exporter"]),
               ("kill-balance", dm["balance"]), ("kill-status-watch", dm["status-watch"]),
               ("settle", self.settle)]
        only = [e for e in self.a.events.split(",") if e]
        unknown = set(only) - {n for n, _ in evs}
        if unknown:
            sys.exit("soak: unknown event(s) %s: %s" % (", ".join(sorted(unknown)),
                                                      " ".join(n for n, _ in evs)))
        return [f for n, f in evs if not only or n in only or n == "settle"]

    def settle(self):
        """Not an event: every process running, past its first sample, FOLLOW s after the
        last unload + load or upgrade, then a sample of everything: so that each
        incarnation has a first sample before the next events change the configuration."""
        end = time.time() + 30
        while time.time() < end:
            if all(dm.pid() and time.time() - dm.current()["start"] >= SETTLE
                   for dm in self.daemons) and time.time() - self.last_change >= FOLLOW:
                break
            time.sleep(0.2)
        self.sample_all(settle=True)
        SETTLES[0] += 1
        self.next_sample = time.time() + SAMPLE_EVERY
        return "settle"

    def run_events(self, end):
        while True:
            for ev in self.cycle():
                if time.time() >= end:
                    return
                t0 = time.time()
                r = ev()
                if r == "settle":	# not an event
                    continue
                if r is None:
                    log("no backend is up on every service: event skipped")
                    time.sleep(1)
                    continue
                name, wins, note = r
                self.events.append({"name": name, "t0": t0, "t1": time.time(), "windows": wins,
                                    "note": note})
                log("event %d: %s (%.1f s)%s" % (len(self.events), name, time.time() - t0,
                                                 "; " + note if note else ""))
                t = time.time()
                self.sample_due()
                time.sleep(max(0.0, self.a.gap - (time.time() - t)))

    # the end: figures
    def growth(self):
        """F0, F1, R0, R1: each process's first sample, plus what each of its
        incarnations grew by: descriptors from its first sample to its last, RSS from
        its sample at the end of its first whole cycle (a process allocates once what its
        first re-attach, upgrade or reload needs: not a leak) to its last."""
        f0 = f1 = r0 = r1 = 0
        for dm in self.daemons:
            for inc in dm.incarnations:
                inc["samples"] = [x for x in inc["samples"] if x[3] == self.base_tag]
            incs = [inc for inc in dm.incarnations if inc["samples"]]
            if not incs:
                ERRORS.append("%s: never sampled" % dm.name)
                continue
            s = incs[0]["samples"][0]
            f0 += s[1]
            r0 += s[2]
            gf = sum(inc["samples"][-1][1] - inc["samples"][0][1] for inc in incs)
            gr = sum(inc["samples"][-1][2] - self.warm(inc)[2] for inc in incs)
            f1 += s[1] + gf
            r1 += s[2] + gr
            log("%s: %d incarnations (%d killed by the driver, %d other exits), fds %s, rss %s"
                " (anonymous %s)" % (
                    dm.name, len(dm.incarnations), dm.killed, len(dm.deaths),
                    " | ".join("%d->%d" % (i["samples"][0][1], i["samples"][-1][1]) for i in incs),
                    " | ".join("%d->%d" % (i["samples"][0][2], i["samples"][-1][2]) for i in incs),
                    " | ".join("%d->%d" % (i["samples"][0][4], i["samples"][-1][4])
                               for i in incs)))
            log("%s: rss from the end of each incarnation's first whole cycle: %s" % (
                dm.name, " | ".join("%d->%d" % (self.warm(i)[2], i["samples"][-1][2])
                                    for i in incs)))
        return f0, f1, r0, r1

    @staticmethod
    def warm(inc):
        """The incarnation's sample at the settle point after its first whole cycle, or
        its last sample (no growth) when it did not live that long."""
        for x in inc["samples"]:
            if x[5] is not None and x[5] >= inc["settles"] + 1:
                return x
        return inc["samples"][-1]

    def losses(self, path):
        sent = lost = 0
        outside = []
        per_event = {}
        wins = [(a, b, k) for k, e in enumerate(self.events) for a, b in e["windows"]]
        with open(path) as f:
            for line in f:
                t, proto, outcome, _be = line.split()
                sent += 1
                if outcome == "ok":
                    continue
                lost += 1
                t = float(t)
                k = next((k for a, b, k in wins if a <= t <= b), None)
                if k is not None:
                    per_event[k] = per_event.get(k, 0) + 1
                    continue
                outside.append((t, proto))
        return sent, lost, outside, per_event

    def last_event_before(self, t):
        """The index of the last event that began before t, or None."""
        prev = None
        for k, e in enumerate(self.events):
            if e["t0"] <= t:
                prev = k
        return prev

    def main(self):
        a = self.a
        traffic_out = os.path.join(self.dir, "queries")
        stop = os.path.join(self.dir, "traffic.stop")
        tr = subprocess.Popen(["ip", "netns", "exec", a.client_ns, sys.executable,
                               os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                            "traffic.py"),
                               a.vip, str(a.dns_rate), str(a.mc_rate), traffic_out, stop],
                              stdin=subprocess.DEVNULL)
        for _ in range(100):
            if os.path.exists(traffic_out + ".started"):
                break
            time.sleep(0.1)
        for dm in self.daemons:
            dm.start()
        threads = [threading.Thread(target=f, daemon=True)
                   for f in (self.supervise, self.scrape)]
        for th in threads:
            th.start()
        time.sleep(SETTLE + 1)
        self.base_tag = self.tag()
        self.sample_all(settle=True)
        SETTLES[0] += 1
        self.next_sample = time.time() + SAMPLE_EVERY
        start = time.time()
        log("traffic %g DNS + %g memcached queries/s; events for %d s" % (
            a.dns_rate, a.mc_rate, a.duration))
        self.run_events(start + a.duration)
        # the starting configuration's backends again (the cycle may have stopped between
        # the apply that adds one and the one that removes it)
        if self.tag()[0] != self.base_tag[0]:
            self.ev_apply_remove()
            log("end: the starting configuration's backends applied again")
        # the last sample, settled as the others
        self.settle()
        minutes = (time.time() - start) / 60
        self.stop_ev.set()
        for th in threads:
            th.join(10)
        for dm in self.daemons:
            dm.stop()
        open(stop, "w").close()
        try:
            tr.wait(30)
        except subprocess.TimeoutExpired:
            tr.kill()
            tr.wait()

        f0, f1, r0, r1 = self.growth()
        k0, k1 = self.samples[0], self.samples[-1]
        sent, lost, outside, per_event = self.losses(traffic_out)
        for k, e in enumerate(self.events):
            if per_event.get(k) or e["note"]:
                log("event %d %s: lost %d within its bound%s" % (
                    k + 1, e["name"], per_event.get(k, 0), "; " + e["note"] if e["note"] else ""))
        # each query lost outside the windows, by the event before it (which one, and how
        # long after it began)
        by = {}
        for t, proto in outside:
            by.setdefault(self.last_event_before(t), []).append(t)
        for k, ts in sorted(by.items(), key=lambda x: -1 if x[0] is None else x[0]):
            if k is None:
                log("lost outside bounds: %d queries before the first event" % len(ts))
                continue
            e = self.events[k]
            log("lost outside bounds: %d queries after event %d (%s, at %.1f s), sent %.1f to"
                " %.1f s after it began" % (len(ts), k + 1, e["name"], e["t0"] - T0,
                                            min(ts) - e["t0"], max(ts) - e["t0"]))
        # between an unload and the next load the instance is down; at any other time a
        # scrape without keyrouter_up 1 is an exporter that lost its instance
        reloads = [(e["t0"] - PRE, e["t1"] + a.slack) for e in self.events
                   if e["name"] == "unload + load"]
        lost_up = [t for t in self.scrape_down if not any(x <= t <= y for x, y in reloads)]
        log("queries sent %d, lost %d (%d within the events' bounds); scrapes %d ok, %d failed,"
            " %d without keyrouter_up 1 (%d of them outside an unload + load)" % (
                sent, lost, lost - len(outside), self.scrapes, self.scrape_fail,
                len(self.scrape_down), len(lost_up)))
        log("kernel: pins %d -> %d, attached prog %s -> %s" % (k0[3], k1[3], k0[4], k1[4]))
        for dm in self.daemons:
            for t, rc in dm.deaths:
                log("%s exited by itself (status %d) at %.1f s" % (dm.name, rc, t - T0))
        print("soak: %d minutes, %d events, %d scrapes; fds %d -> %d, rss %d -> %d KiB, "
              "kernel progs %d -> %d, maps %d -> %d; lost outside bounds %d" % (
                  round(minutes), len(self.events), self.scrapes, f0, f1, r0, r1, k0[1], k1[1],
                  k0[2], k1[2], len(outside)), flush=True)
        bad = list(ERRORS)
        if f1 - f0 > FD_BOUND:
            bad.append("descriptors grew by %d (bound %d)" % (f1 - f0, FD_BOUND))
        if r1 - r0 > RSS_BOUND_KIB + r0 // 10:
            bad.append("RSS grew by %d KiB (bound %d)" % (r1 - r0, RSS_BOUND_KIB + r0 // 10))
        if k1[1] != k0[1] or k1[2] != k0[2] or k1[3] != k0[3]:
            bad.append("kernel objects of the instance: progs %d -> %d, maps %d -> %d, pins %d"
                       " -> %d" % (k0[1], k1[1], k0[2], k1[2], k0[3], k1[3]))
        if outside:
            bad.append("%d queries lost outside every event's bound" % len(outside))
        if len(self.events) < a.min_events:
            bad.append("%d events, fewer than %d" % (len(self.events), a.min_events))
        if self.orphans:
            who = sorted({o[1] for o in self.orphans})
            bad.append("%d samples where a process held programs or maps the instance no longer"
                       " has, %d s or more after the unload + load or upgrade: %s" % (
                           len(self.orphans), FOLLOW, ", ".join(who)))
        if lost_up:
            bad.append("%d scrapes without keyrouter_up 1 outside an unload + load (first at"
                       " %.1f s)" % (len(lost_up), lost_up[0] - T0))
        if tr.returncode != 0:
            bad.append("the client (traffic.py) exited with status %s" % tr.returncode)
        want = 0.5 * (a.dns_rate + a.mc_rate) * minutes * 60
        if sent < want:
            bad.append("only %d queries sent (at least %d expected)" % (sent, want))
        if self.scrapes == 0:
            bad.append("no scrape succeeded")
        for b in bad:
            print("soak: FAIL: %s" % b, file=sys.stderr)
        return 1 if bad else 0


def parse():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--duration", type=float, required=True, help="seconds of events")
    p.add_argument("--min-events", type=int, default=0)
    p.add_argument("--instance", required=True)
    p.add_argument("--iface", required=True, help="the router's ingress (keyrouter's)")
    p.add_argument("--mode", default="native")
    p.add_argument("--config", required=True, help="the configuration with every backend")
    p.add_argument("--dir", required=True, help="the topology's state directory")
    p.add_argument("--keyrouter", required=True)
    p.add_argument("--upgrade-object", default="", help="another build for upgrade")
    p.add_argument("--client-ns", required=True)
    p.add_argument("--backend-ns", nargs="+", required=True)
    p.add_argument("--backend-ip", nargs="+", required=True)
    p.add_argument("--vip", required=True)
    p.add_argument("--port", type=int, default=9437, help="the exporter's")
    p.add_argument("--dns-rate", type=float, default=150)
    p.add_argument("--mc-rate", type=float, default=150)
    p.add_argument("--slack", type=float, default=1.5,
                   help="seconds added to each loss window (a busy machine's delays)")
    p.add_argument("--watchdog", type=float, default=1.0, help="the re-attach bound")
    p.add_argument("--gap", type=float, default=1.0, help="seconds between events")
    p.add_argument("--events", default="", help="cycle only these events (comma-separated"
                   " names, e.g. reload,kill-backend: to reproduce one)")
    return p.parse_args()


if __name__ == "__main__":
    sys.exit(Soak(parse()).main())
