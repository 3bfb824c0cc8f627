#!/bin/bash
# The soak test (make soak DURATION=SECONDS; tests/bats/soak.bats runs it for 180 s):
# docs/operations.md "Soak test".
#   scripts/soak.sh [DURATION]     seconds of events (default $DURATION, else 600)
# A router running keyrouter (native XDP, l2 forwarding) in front of 5 backends, each with
# unbound and memcached, on one L2 segment, a client, all in network namespaces of their
# own (tests/lib/topo.sh, named after this process), and an instance named kr-soak-PID.  Then
# tests/soak/soak.py in the router's network namespace: the long-running processes as
# their units run them, DNS and memcached traffic, the events, the samples, and one line
#   soak: M minutes, E events, S scrapes; fds F0 -> F1, rss R0 -> R1 KiB, kernel progs P0 -> P1, maps M0 -> M1; lost outside bounds L
# Exit status: the driver's (0: every figure back within its bound, nothing lost outside
# the events' bounds).  SOAK_MIN_EVENTS: fewer events fail it (default 0).
# SOAK_KEEP=1 keeps the state directory (logs of every process, samples, queries);
# SOAK_EVENTS=reload,kill-backend cycles only those events (to reproduce a failure).
set -u
cd "$(dirname "$0")/.."
duration=${1:-${DURATION:-600}}
case "$duration" in
''|*[!0-9]*) echo "soak: DURATION must be whole seconds, not '$duration'" >&2; exit 2 ;;
esac
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)

# shellcheck source=../tests/lib/e2e_common.bash
source tests/lib/e2e_common.bash

miss=()
[ "$(id -u)" = 0 ] || miss+=(root)
for t in ip nsenter ethtool unbound memcached nft bpftool jq ss; do
	command -v "$t" >/dev/null 2>&1 || miss+=("$t")
done
[ -x "$TOPO_KEYROUTER" ] || miss+=("$TOPO_KEYROUTER (make)")
[ ${#miss[@]} = 0 ] ||
	{ echo "soak: missing: ${miss[*]} (scripts/deps.sh installs the packages)" >&2; exit 2; }

# Named kr-soak-PID, not kr-e2e-PID: the e2e files' stale cleanup (topo_cleanup_stale) takes
# a name whose PID it cannot see for a dead run's, and a run in another PID namespace (the
# machine is shared) would remove this one's pins and namespaces.  A run holds a lock of its
# own instead: a lock nobody holds is a dead run's, whose namespaces and pins go.
locks=/run/keyrouter-soak
mkdir -p "$locks" || exit 1
for l in "$locks"/kr-soak-*.lock; do
	[ -e "$l" ] && flock -n "$l" true || continue
	p=$(basename "$l" .lock)
	for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^$p-"); do
		topo_kill_ns "$ns"
		ip netns del "$ns" 2>/dev/null
	done
	rm -rf "/sys/fs/bpf/keyrouter/$p" "$l"
done
lock=$locks/kr-soak-$$.lock
exec 9>"$lock" && flock 9 || exit 1

TOPO_QUIET=1 topo_init "kr-soak-$$" 5 || exit 1
[ "${SOAK_KEEP:-0}" = 1 ] && TOPO_KEEP_DIR=1 && echo "soak: state in $TOPO_DIR" >&2
topo_trap
trap 'topo_teardown; rm -f "$lock"' EXIT
topo_create && topo_start_dns && topo_start_memcached || exit 1

# Rings dns4 and mc4 over the 5 backends (the driver starts with the first 4: the 5th joins
# and leaves by apply), IPv4 only; short health timings so that a failure is seen within
# fall x interval + timeout = 0.9 s
e2e_config "$TOPO_DIR/all.json" l2 "1 2 3 4 5" dns:dns:53 mc:memcache:11211
jq '.rings |= map(select(.name | endswith("4"))) |
    .services |= map(select(.name | endswith("4"))) |
    .rings[].health = {"interval": 0.25, "timeout": 0.15, "rise": 2, "fall": 3}' \
	"$TOPO_DIR/all.json" >"$TOPO_DIR/full.json" || exit 1
jq '.rings[].backends |= .[0:4]' "$TOPO_DIR/full.json" >"$TOPO_DIR/soak.json" || exit 1
e2e_load "$TOPO_DIR/soak.json" >"$TOPO_DIR/load.log" 2>&1 ||
	{ cat "$TOPO_DIR/load.log" >&2; exit 1; }

b4=() bns=()
for ((i = 1; i <= TOPO_N; i++)); do b4+=("${TOPO_B4[i]}"); bns+=("${TOPO_B[i]}"); done
up=$TOPO_ROOT/build/tests/progs/kr_upgrade_w16.bpf.o
[ -r "$up" ] || up=
nsenter --net="/run/netns/$TOPO_R" -- "$PY" tests/soak/soak.py --duration "$duration" \
	--min-events "${SOAK_MIN_EVENTS:-0}" --instance "$TOPO_INSTANCE" --iface "$TOPO_R_IN" \
	--config "$TOPO_DIR/full.json" --dir "$TOPO_DIR" --keyrouter "$TOPO_KEYROUTER" \
	--upgrade-object "$up" --client-ns "$TOPO_C" --backend-ns "${bns[@]}" \
	--backend-ip "${b4[@]}" --vip "$TOPO_VIP4" --events "${SOAK_EVENTS:-}"
