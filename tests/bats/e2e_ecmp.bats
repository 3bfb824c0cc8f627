#!/usr/bin/env bats
# Scale-out behind ECMP: two keyrouter routers, each in its own namespace, share nothing but
# one configuration file.  The client reaches the VIP over an ECMP route through both
# (net.ipv4.fib_multipath_hash_policy = 1: the next hop is chosen by the 5-tuple, so each
# dig query -- its own source port -- may take either router).  Real unbound on 4
# backends behind both routers (one L2 segment), l2 forwarding (direct server return).
#
#   client (10.209.0.2 on lo)  cA -- r0 router A r1 --\
#                              cB -- r0 router B r1 ---+-- bridge -- backends 1..4
#
# 1. The same config (backends 1 2 3) applied to both: for 1000 names, every answer comes
#    from the backend `keyrouter lookup` predicts, whichever router carried the query (and
#    both routers carried some: their routed counters add up to the names asked).
# 2. The same migration step on both, one after the other: ring stage (backends 1 2 3 4),
#    then `ring migrate --percent 50` on A, and only then on B.  While A is at 50 % and B
#    at 0 %, every answer is the old or the 50 % prediction.  Once both are at 50 %, every
#    name agrees again with the 50 % prediction, computed here from the rule the docs state
#    (a key is routed by the staged version when mix32(crc32(key)) < 50 % of 2^32; mix32 =
#    murmur3's finalizer, written here in Python from its definition), crc32 and both
#    backends from `keyrouter lookup` on the old and the new configuration.
# 3. Each router runs its own health checker (`keyrouter health`, the same file with a
#    "health" section): unbound is killed on one backend; each router marks it down by
#    itself within fall x interval + timeout, and then both answer every name from the
#    backend `lookup` predicts with that backend down (at the 50 % step); started again, it
#    is back up on both.  Between the two detections the routers disagree only on that
#    backend's keys (docs/operations.md "Health checking": a fleet).
# Prints one line: ecmp: routers 2 names N agree N; after migrate N agree N

load ../lib/e2e_common

N=1000

# A second router next to topo.sh's one: namespace $TOPO_PREFIX-r2 with the same device
# names (r0 ingress, r1 LAN) so one configuration serves both.
R2_MAC_IN=02:00:00:00:00:11
R2_MAC_LAN=02:00:00:00:01:02
C_MAC_B=02:00:00:00:00:12
CLIENT=10.209.0.2

ecmp_create() {
	local pid=${TOPO_PREFIX//[^0-9]/} i r2=$TOPO_PREFIX-r2
	topo_create || return 1
	ip netns add "$r2" || return 1
	ip link add r0 netns "$r2" index $((1100000 + pid % 1000000)) address $R2_MAC_IN type veth \
		peer name cB address $C_MAC_B netns "$TOPO_C" || return 1
	ip link add r1 netns "$r2" address $R2_MAC_LAN type veth peer name sr2 netns "$TOPO_SW" || return 1
	ip -n "$TOPO_SW" link set sr2 master br0 up || return 1
	ip netns exec "$TOPO_SW" ethtool -K sr2 gro on >/dev/null || return 1
	topo_sysctl "$r2" net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0 \
		net.ipv4.ip_forward=1 || return 1
	{
		echo "link set lo up"
		echo "addr add 10.203.0.1/24 dev r0"
		echo "addr add 10.202.0.2/24 dev r1"
		echo "link set r0 up"
		echo "link set r1 up"
		echo "neigh replace 10.203.0.2 lladdr $C_MAC_B dev r0 nud permanent"
		echo "route add $CLIENT/32 via 10.203.0.2 dev r0"
		for ((i = 1; i <= TOPO_N; i++)); do
			echo "neigh replace ${TOPO_B4[i]} lladdr ${TOPO_BMAC[i]} dev r1 nud permanent"
		done
		echo "route add blackhole $TOPO_VIP4/32"
	} | ip -n "$r2" -batch - || return 1
	# router A: the client's address behind its ingress; VIP packets it does not route die
	ip -n "$TOPO_R" route add $CLIENT/32 via $TOPO_CLIENT4 dev r0 || return 1
	topo_vip_route blackhole || return 1
	# the client: its address on lo, the second link, the ECMP route, L4 hashing
	ip netns exec "$TOPO_C" ethtool -K cB gro on tx off >/dev/null || return 1
	topo_sysctl "$TOPO_C" net.ipv4.fib_multipath_hash_policy=1 net.ipv4.conf.cB.rp_filter=0 || return 1
	ip -n "$TOPO_C" -batch - <<-EOF || return 1
	addr add $CLIENT/32 dev lo
	addr add 10.203.0.2/24 dev cB
	link set cB up
	neigh replace 10.203.0.1 lladdr $R2_MAC_IN dev cB nud permanent
	route add $TOPO_VIP4/32 src $CLIENT nexthop via $TOPO_R_IN4 dev c0 nexthop via 10.203.0.1 dev cB
	EOF
}

setup_file() {
	e2e_require_keyrouter "ring stage" "ring migrate" || return 0
	local miss
	miss=$(e2e_missing)
	[ -z "$miss" ] || { echo "e2e: missing: $miss" >&2; return 1; }
	TOPO_QUIET=1 topo_init "kr-e2e-$$" 4 || return 1
	ecmp_create || return 1
	topo_start_dns || return 1
	# one configuration for both routers: no "instance" in it (each router names its own)
	e2e_config "$TOPO_DIR/old.tmp" l2 "1 2 3" dns:dns:53
	e2e_config "$TOPO_DIR/new.tmp" l2 "1 2 3 4" dns:dns:53
	jq 'del(.instance)' "$TOPO_DIR/old.tmp" >"$TOPO_DIR/old.json" &&
		jq 'del(.instance)' "$TOPO_DIR/new.tmp" >"$TOPO_DIR/new.json" || return 1
	e2e_names $N e >"$TOPO_DIR/names"
	kr_a load r0 -c "$TOPO_DIR/old.json" --mode native >"$TOPO_DIR/load.log" 2>&1 &&
		kr_b load r0 -c "$TOPO_DIR/old.json" --mode native >>"$TOPO_DIR/load.log" 2>&1 ||
		{ cat "$TOPO_DIR/load.log" >&2; return 1; }
}

teardown_file() {
	if [ -n "${TOPO_PREFIX:-}" ] && [ -d "${TOPO_DIR:-}" ]; then
		topo_attach
		for p in $(cat "$TOPO_DIR"/health-*.pid 2>/dev/null); do kill "$p" 2>/dev/null; done
		nsenter --net="/run/netns/$TOPO_PREFIX-r2" "$TOPO_KEYROUTER" unload r0 \
			--instance "$TOPO_INSTANCE-b" >/dev/null 2>&1
		topo_kr unload r0 --instance "$TOPO_INSTANCE-a" >/dev/null 2>&1
		rm -rf "/sys/fs/bpf/keyrouter/$TOPO_INSTANCE-a" "/sys/fs/bpf/keyrouter/$TOPO_INSTANCE-b"
		ip netns del "$TOPO_PREFIX-r2" 2>/dev/null
		topo_teardown
	fi
	return 0
}

setup() { e2e_setup; }

kr_a() { topo_kr "$@" --instance "$TOPO_INSTANCE-a"; }
kr_b() { topo_netexec "$TOPO_PREFIX-r2" "$TOPO_KEYROUTER" "$@" --instance "$TOPO_INSTANCE-b"; }

routed() { "$@" stats --json | jq -r .counters.routed; }

# predict CONFIG > "NAME CRC BACKEND_INDEX" per name
predict() {
	local out
	out=$("$TOPO_KEYROUTER" lookup -c "$1" --service dns4 --addr --keys-file "$TOPO_DIR/names") || return 1
	# the routed backend's address: the field after "route <index>"
	paste -d' ' "$TOPO_DIR/names" <(awk '{ for (i = 1; i < NF; i++) if ($i == "route") a = $(i + 2)
		sub(/:[0-9]+$/, "", a); split(a, o, "."); print $2, o[4] - 10 }' <<<"$out")
}

# Expected backend per name at migration fraction 50 %: "NAME I" (old/new: predict output)
predict_half() {
	/usr/bin/python3 - "$1" "$2" <<-'EOF'
	import sys
	def fmix32(h):
	    h ^= h >> 16
	    h = (h * 0x85ebca6b) & 0xffffffff
	    h ^= h >> 13
	    h = (h * 0xc2b2ae35) & 0xffffffff
	    h ^= h >> 16
	    return h
	old = [l.split() for l in open(sys.argv[1])]
	new = [l.split() for l in open(sys.argv[2])]
	for (name, crc, bo), (name2, crc2, bn) in zip(old, new):
	    assert name == name2 and crc == crc2
	    print(name, bn if fmix32(int(crc, 16)) < (1 << 31) else bo)
	EOF
}

# ask: every name once from the client; "NAME I" per answer
ask() { e2e_dns_batch "$TOPO_VIP4" "$TOPO_DIR/names"; }

# agree PRED ANS: names whose answer came from the predicted backend
agree() { awk 'NR == FNR { p[$1] = $2; next } ($1 in p) && p[$1] == $2 { n++ } END { print n + 0 }' "$1" "$2"; }

@test "ecmp: two routers, one config: every name answered by the predicted backend whichever router carried it, before and after the same migration step on both" {
	local a0 b0 a1 b1 agree1 agree2
	predict "$TOPO_DIR/old.json" >"$TOPO_DIR/p.old"
	predict "$TOPO_DIR/new.json" >"$TOPO_DIR/p.new"
	awk '{ print $1, $3 }' "$TOPO_DIR/p.old" >"$TOPO_DIR/pred.old"
	[ "$(wc -l <"$TOPO_DIR/pred.old")" = $N ]

	a0=$(routed kr_a) b0=$(routed kr_b)
	ask >"$TOPO_DIR/ans1"
	a1=$(routed kr_a) b1=$(routed kr_b)
	agree1=$(agree "$TOPO_DIR/pred.old" "$TOPO_DIR/ans1")
	echo "# before: router A routed $((a1 - a0)), router B $((b1 - b0)); answered $(wc -l <"$TOPO_DIR/ans1"), agree $agree1" >&3
	[ "$agree1" = $N ]
	# both routers carried queries, and between them every one
	[ $((a1 - a0)) -gt 0 ]
	[ $((b1 - b0)) -gt 0 ]
	[ $((a1 - a0 + b1 - b0)) = $N ]

	# the same step on both, one after the other
	kr_a ring stage dns4 -c "$TOPO_DIR/new.json" && kr_b ring stage dns4 -c "$TOPO_DIR/new.json"
	predict_half "$TOPO_DIR/p.old" "$TOPO_DIR/p.new" >"$TOPO_DIR/pred.half"
	kr_a ring migrate dns4 --percent 50
	# A at 50 %, B at 0 %: each answer is one of the two predictions
	ask >"$TOPO_DIR/ans.mid"
	run awk 'FILENAME ~ /old$/ { o[$1] = $2; next } FILENAME ~ /half$/ { h[$1] = $2; next }
		{ n++; if ($2 == o[$1] || $2 == h[$1]) ok++ } END { print n, ok + 0; exit !(n == ok) }' \
		"$TOPO_DIR/pred.old" "$TOPO_DIR/pred.half" "$TOPO_DIR/ans.mid"
	echo "# A at 50 %, B at 0 %: answered, old-or-new $output" >&3
	[ "$status" = 0 ]
	kr_b ring migrate dns4 --percent 50
	for r in kr_a kr_b; do
		$r status --prometheus | grep -Fx "keyrouter_ring_migration_ratio{instance=\"$TOPO_INSTANCE-${r#kr_}\",ring=\"dns4\"} 0.5"
	done
	# the names that move at 50 % (a share of those the new ring moves): not none
	[ "$(awk 'NR == FNR { o[$1] = $2; next } $2 != o[$1] { m++ } END { print m + 0 }' \
		"$TOPO_DIR/pred.old" "$TOPO_DIR/pred.half")" -gt 0 ]

	a0=$(routed kr_a) b0=$(routed kr_b)
	ask >"$TOPO_DIR/ans2"
	a1=$(routed kr_a) b1=$(routed kr_b)
	agree2=$(agree "$TOPO_DIR/pred.half" "$TOPO_DIR/ans2")
	echo "# after: router A routed $((a1 - a0)), router B $((b1 - b0)); answered $(wc -l <"$TOPO_DIR/ans2"), agree $agree2" >&3
	[ $((a1 - a0)) -gt 0 ]
	[ $((b1 - b0)) -gt 0 ]
	echo "# ecmp: routers 2 names $N agree $agree1; after migrate $N agree $agree2" >&3
	[ "$agree2" = $N ]
}

# health_run a|b CONFIG: the router's own checker (pid in $TOPO_DIR/health-R.pid)
health_run() {
	local ns=$TOPO_R n
	[ "$1" = b ] && ns=$TOPO_PREFIX-r2
	nsenter --net="/run/netns/$ns" -- "$TOPO_KEYROUTER" health -c "$2" \
		--instance "$TOPO_INSTANCE-$1" </dev/null >"$TOPO_DIR/health-$1.log" 2>&1 3>&- &
	echo $! >"$TOPO_DIR/health-$1.pid"
	for ((n = 0; n < 100; n++)); do
		grep -q '^health: checking' "$TOPO_DIR/health-$1.log" && return 0
		sleep 0.1
	done
	cat "$TOPO_DIR/health-$1.log"
	return 1
}

# be_state ROUTER ADDRESS: "STATE SINCE_UNIX" of the backend in that router's status
be_state() {
	"$1" status --json | jq -r --arg a "$2" '.backends[] | select(.address == $a) | "\(.state) \(.since_unix)"'
}

wait_both() { # ADDRESS STATE
	local n
	for ((n = 0; n < 200; n++)); do
		[ "$(be_state kr_a "$1" | cut -d' ' -f1)" = "$2" ] &&
			[ "$(be_state kr_b "$1" | cut -d' ' -f1)" = "$2" ] && return 0
		sleep 0.05
	done
	echo "not $2 on both: A $(be_state kr_a "$1"), B $(be_state kr_b "$1")"
	return 1
}

@test "ecmp: each router checks by itself; a backend killed is marked down by both within the bound, and both answer every name as predicted with it down" {
	local a="${TOPO_B4[2]}:53" t0 da db bound p
	jq '.rings[].health = {"interval": 0.2, "timeout": 0.1, "rise": 2, "fall": 3}' \
		"$TOPO_DIR/new.json" >"$TOPO_DIR/health.json"
	bound=0.700
	health_run a "$TOPO_DIR/health.json"
	health_run b "$TOPO_DIR/health.json"
	# predictions with backend 2 down (old and new ring, then the 50 % rule)
	for v in old new; do
		jq '(.rings[] | select(.name == "dns4") | .backends[1].state) = "down"' \
			"$TOPO_DIR/$v.json" >"$TOPO_DIR/$v.down.json"
		predict "$TOPO_DIR/$v.down.json" >"$TOPO_DIR/p.$v.down"
	done
	predict_half "$TOPO_DIR/p.old.down" "$TOPO_DIR/p.new.down" >"$TOPO_DIR/pred.half.down"
	[ "$(agree "$TOPO_DIR/pred.half" "$TOPO_DIR/pred.half.down")" -lt $N ]

	for p in $(awk -v ns="${TOPO_B[2]}" '$2 == ns && $3 == "unbound" { print $1 }' "$TOPO_DIR/pids"); do
		kill "$p"
		while [ -d "/proc/$p" ]; do sleep 0.01; done
	done
	t0=$(date +%s.%N)
	wait_both "$a" down
	da=$(awk -v t="$t0" -v s="$(be_state kr_a "$a" | cut -d' ' -f2)" 'BEGIN { printf "%.3f", s - t }')
	db=$(awk -v t="$t0" -v s="$(be_state kr_b "$a" | cut -d' ' -f2)" 'BEGIN { printf "%.3f", s - t }')
	echo "# ecmp health: killed b2; router A detected in $da s, router B in $db s (bound $bound s)" >&3
	awk -v a="$da" -v b="$db" -v B=$bound 'BEGIN { exit !(a <= B && b <= B) }'
	ask >"$TOPO_DIR/ans.down"
	p=$(agree "$TOPO_DIR/pred.half.down" "$TOPO_DIR/ans.down")
	echo "# ecmp health: both routers converged: $p of $N names answered as predicted with b2 down" >&3
	[ "$p" = $N ]

	local d=$TOPO_DIR/dns-b2
	topo_spawn "${TOPO_B[2]}" "$d/unbound.log" unbound -d -c "$d/unbound.conf"
	topo_wait_listen "${TOPO_B[2]}" udp $TOPO_DNS_PORT
	wait_both "$a" up
	ask >"$TOPO_DIR/ans.back"
	[ "$(agree "$TOPO_DIR/pred.half" "$TOPO_DIR/ans.back")" = $N ]
	kill "$(cat "$TOPO_DIR/health-a.pid")" "$(cat "$TOPO_DIR/health-b.pid")"
}
