# Helpers of the ops_*.bats tests: a small L2 segment in network namespaces with a router
# running keyrouter, a client and N backends, real UDP packets.
#
#   ns $P-l   the segment: bridge br0
#   ns $P-r   the router: r0 (10.77.0.1, 02:77:00:00:00:01) -- keyrouter attaches here
#   ns $P-c   the client: c0 (10.77.0.2), route to the VIP 10.77.1.1 via the router
#   ns $P-bI  backend I (1..N): b0 (10.77.0.(10+I), 02:77:00:00:00:(10+I)), the VIP on lo
#
# Service: 10.77.1.1:7000/udp, key = the whole payload, ring "web" (l2 forwarding: XDP_TX
# back out of r0 to the backend's MAC).  Each backend runs ops_udp.py recv and logs what
# it receives to $KR_TMP/bI.log.  keyrouter runs in the router's network namespace with
# nsenter --net (not ip netns exec), so the pins in the host's /sys/fs/bpf stay.

bats_require_minimum_version 1.5.0
bats_load_library bats-support
bats_load_library bats-assert

KR_ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
KR_OUT=${OUT:-build}
case "$KR_OUT" in /*) ;; *) KR_OUT="$KR_ROOT/$KR_OUT" ;; esac
KR_BIN=${KR_BIN:-$KR_OUT/keyrouter}
KR_OBJ=${KR_OBJ:-$KR_OUT/bpf/keyrouter.bpf.o}
KR_UDP="$KR_ROOT/tests/bats/ops_udp.py"
KR_PY=/usr/bin/python3
[ -x "$KR_PY" ] || KR_PY=$(command -v python3)
VIP=10.77.1.1
PORT=7000

kr_prereq() {
	[ "$(id -u)" = 0 ] || skip "needs root"
	[ -x "$KR_BIN" ] || skip "no $KR_BIN (run make)"
	[ -f "$KR_OBJ" ] || skip "no $KR_OBJ (the data path is not built)"
	command -v python3 >/dev/null || skip "needs python3"
}

# keyrouter in the router's network namespace
kr() { nsenter --net="/run/netns/$P-r" "$KR_BIN" "$@"; }
kr_ns() { local ns=$1; shift; nsenter --net="/run/netns/$P-$ns" "$@"; }

kr_bmac() { printf '02:77:00:00:00:%02x' $((10 + $1)); }
kr_bip() { echo "10.77.0.$((10 + $1))"; }

kr_topo_up() { # N
	local n=$1 i
	P=${P:-kr-ops-$$}
	KR_TMP=$(mktemp -d "/tmp/$P.XXXXXX")
	KR_NB=$n
	export P KR_TMP KR_NB
	ip netns add "$P-l" && ip netns add "$P-r" && ip netns add "$P-c" || return 1
	ip -n "$P-l" link add br0 type bridge && ip -n "$P-l" link set br0 up || return 1
	ip -n "$P-l" link set lo up
	kr_topo_port r r0 02:77:00:00:00:01 10.77.0.1 || return 1
	kr_topo_port c c0 02:77:00:00:00:02 10.77.0.2 || return 1
	ip -n "$P-c" route add "$VIP/32" via 10.77.0.1 || return 1
	# Complete UDP checksums from the client: a frame XDP sends back out carries what the
	# client's stack left, and a CHECKSUM_PARTIAL one would arrive with a bad checksum.
	ip netns exec "$P-c" ethtool -K c0 tx off >/dev/null || return 1
	# XDP_TX'd frames reach the router's veth peer only when the peer runs NAPI: give it
	# an XDP program (keyrouter's own object, with no service: it passes everything).
	ip -n "$P-l" link set dev l-r xdp obj "$KR_OBJ" sec xdp || return 1
	for i in $(seq 1 "$n"); do
		ip netns add "$P-b$i" || return 1
		kr_topo_port "b$i" b0 "$(kr_bmac "$i")" "$(kr_bip "$i")" || return 1
		ip -n "$P-b$i" addr add "$VIP/32" dev lo || return 1
		ip netns exec "$P-b$i" sysctl -qw net.ipv4.conf.all.rp_filter=0 \
			net.ipv4.conf.b0.rp_filter=0
	done
	# Static neighbours: no ARP needed for the first packets.
	ip -n "$P-c" neigh replace 10.77.0.1 lladdr 02:77:00:00:00:01 dev c0
}

# A veth from namespace $1 (device $2, MAC $3, IP $4) to a port of the segment's bridge.
kr_topo_port() {
	local ns=$1 dev=$2 mac=$3 ip=$4 peer="l-$1"
	ip -n "$P-l" link add "$peer" type veth peer name "$dev" netns "$P-$ns" || return 1
	ip -n "$P-l" link set "$peer" master br0 up || return 1
	ip -n "$P-$ns" link set "$dev" address "$mac" || return 1
	ip -n "$P-$ns" addr add "$ip/24" dev "$dev" || return 1
	ip -n "$P-$ns" link set "$dev" up && ip -n "$P-$ns" link set lo up
}

kr_topo_down() {
	local ns pid
	[ -n "${P:-}" ] || return 0
	for pid in $(cat "$KR_TMP"/*.pid 2>/dev/null); do
		kill "$pid" 2>/dev/null	# a receiver (it wrote its own pid)
	done
	# Whatever a failed test left loaded: unload by instance, then drop the pins.
	for inst in /sys/fs/bpf/keyrouter/$P*; do
		[ -d "$inst" ] && rm -rf "$inst"
	done
	[ -d "/sys/fs/bpf/$P" ] && rm -rf "/sys/fs/bpf/$P"
	for ns in $(ip netns list | awk '{print $1}' | grep "^$P-"); do
		ip netns del "$ns"
	done
	[ -n "${KR_TMP:-}" ] && rm -rf "$KR_TMP"
	return 0
}

# Start the receivers on every backend (logs $KR_TMP/bI.log).
kr_recv_start() {
	local i
	for i in $(seq 1 "$KR_NB"); do
		: > "$KR_TMP/b$i.log"
		nsenter --net="/run/netns/$P-b$i" $KR_PY "$KR_UDP" recv "$PORT" \
			"$KR_TMP/b$i.log" "$KR_TMP/recv$i.pid" >/dev/null 2>&1 3>&- &
	done
	for i in $(seq 1 50); do
		[ "$(cat "$KR_TMP"/recv*.pid 2>/dev/null | wc -l)" = "$KR_NB" ] && break
		sleep 0.1
	done
	sleep 0.2
}

# Send keys PREFIX<first>..PREFIX<first+count-1> from the client.
kr_send() { # prefix first count [pps]
	kr_ns c $KR_PY "$KR_UDP" send "$VIP" "$PORT" "$@"
}

# Wait until the backends together logged at least N lines matching PREFIX (max ~10 s).
kr_wait_recv() { # prefix n
	local t
	for t in $(seq 1 100); do
		[ "$(cat "$KR_TMP"/b*.log | grep -c " $1")" -ge "$2" ] && return 0
		sleep 0.1
	done
	return 1
}

# "key backend-index" for every received line with PREFIX, sorted by key.
kr_received() { # prefix
	local i
	for i in $(seq 1 "$KR_NB"); do
		awk -v b="$i" -v p="$1" 'index($2, p) == 1 { print $2, b }' "$KR_TMP/b$i.log"
	done | sort
}

# The config: ring "web" of the backends given by index (default all), format v2.  The
# backends' port in the ring is KR_BE_PORT (default $PORT): it is part of each point's hash,
# so another port gives another ring of the same backends (packets keep their port).
kr_config() { # file [pm] [indices...]
	local f=$1 pm=${2:-160} i first=1 beport=${KR_BE_PORT:-$PORT}
	shift 2 2>/dev/null || shift $#
	local idx=("$@")
	[ ${#idx[@]} -gt 0 ] || idx=($(seq 1 "$KR_NB"))
	{
		echo '{ "rings": [ { "name": "web", "format": "v2", "point_multiple": '"$pm"','
		echo '    "backends": ['
		for i in "${idx[@]}"; do
			[ $first = 1 ] || echo ','
			first=0
			printf '      { "address": "%s:%s", "weight": 1, "mac": "%s" }' \
				"$(kr_bip "$i")" "$beport" "$(kr_bmac "$i")"
		done
		echo ' ] } ],'
		echo '  "services": [ { "name": "web", "vip": "'$VIP'", "port": '$PORT','
		echo '    "key": { "type": "payload" }, "ring": "web", "forward": { "mode": "l2" } } ] }'
	} > "$f"
}

# Expected "key backend-index" of keys PREFIX<first..first+count-1> on a ring of the given
# backend indices (the engine's userspace lookup; ring port KR_BE_PORT as kr_config).  One
# process per step: bats' debug trap makes every command of a setup function slow.
kr_expected() { # prefix first count pm indices...
	local prefix=$1 first=$2 count=$3 pm=$4 i beport=${KR_BE_PORT:-$PORT}
	shift 4
	: > "$KR_TMP/exp.backends"
	for i in "$@"; do
		echo "$(kr_bip "$i"):$beport 1" >> "$KR_TMP/exp.backends"
	done
	$KR_PY -c 'import sys
p, f, c = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for n in range(f, f + c): print(("%s%d" % (p, n)).encode().hex())' \
		"$prefix" "$first" "$count" > "$KR_TMP/exp.keys"
	"$KR_BIN" lookup --backends "$KR_TMP/exp.backends" --version v2 --point-multiple "$pm" \
		--keys-file "$KR_TMP/exp.keys" |
	$KR_PY -c 'import sys
m = sys.argv[1:]
for l in sys.stdin:
    if l.startswith("#"): continue
    f = l.split()
    print(bytes.fromhex(f[0]).decode(), m[int(f[3])])' "$@" | sort
}
