#!/usr/bin/env bats
# Routers that join and leave the fleet by themselves (issue 34): three keyrouter routers,
# each with BIRD 2 (the shipped dist/bird/keyrouter-router.conf, BFD 100 ms x 3) and
# `keyrouter announce`, announce the VIP over BGP to an upstream BIRD that merges the paths
# into one multipath route in its kernel (fib_multipath_hash_policy 1); a client behind the
# upstream; four unbound backends on one L2 segment answering straight to the client (DSR)
# (tests/lib/bgp_topo.bash draws it).  What the upstream's kernel holds is the oracle: the
# next hops of the VIP's route, read with `ip route`.
#
# 1. Start: three next hops; 1000 names answered by the backends `lookup` predicts.
# 2. The program detached on router 1 behind keyrouter's back: the upstream drops router 1
#    within D s (D <= 2, the issue's bound); apply attaches it again: announced again; an
#    upgrade in place withdraws nothing.
# 3. Every backend of router 2 marked down: withdrawn (B s); up again: announced.
# 4. Router 3 drained under dnsperf load: the upstream first holds its path with local
#    preference 0 (GRACEFUL_SHUTDOWN), then it is withdrawn; 0 queries lost; undrained.
#    The announcer killed -9: the routes stay; status and check say it does not run.
# 5. Router 1 goes silent (nft drops everything its kernel sees): BFD drops it in T s (T <= 1).
# 6. Router 2 unloaded and loaded again with an older configuration: not announced (status
#    says "not converged") until apply made it current.
# 7. Router 3 unloaded under load: withdrawn first, 0 queries lost.
# Prints one line:
#   bgp: routers 3; detach withdrawn in D s; backends down withdrawn in B s; drain lost L of Q; silent death detected in T s lost X; unload lost U

bats_require_minimum_version 1.5.0
load ../lib/e2e_common
load ../lib/bgp_topo

N=1000
QPS=1500

setup_file() {
	e2e_require_keyrouter announce || return 0
	local miss k
	miss=$(e2e_missing)
	for k in bird birdc nft chrt; do command -v $k >/dev/null || miss+=" $k"; done
	PROMTOOL=$("$E2E_ROOT"/scripts/promtool.sh) || miss+=" promtool (scripts/promtool.sh)"
	export PROMTOOL
	[ -z "$miss" ] || { echo "e2e: missing: $miss (scripts/deps.sh installs the packages)" >&2; return 1; }
	TOPO_QUIET=1 topo_init "kr-e2e-$$" 4 || return 1
	bgp_create || return 1
	topo_start_dns || return 1
	e2e_config "$TOPO_DIR/all.tmp" l2 "1 2 3 4" dns:dns:53
	e2e_config "$TOPO_DIR/old.tmp" l2 "1 2 3" dns:dns:53
	# one configuration for every router, IPv4 only (the sessions are IPv4); each router
	# names its own instance
	for k in all old; do
		jq 'del(.instance) | .services |= map(select(.name == "dns4")) |
		    .rings |= map(select(.name == "dns4"))' "$TOPO_DIR/$k.tmp" >"$TOPO_DIR/$k.json" || return 1
	done
	mv "$TOPO_DIR/all.json" "$TOPO_DIR/fleet.json"
	e2e_names $N e >"$TOPO_DIR/names"
	for k in 1 2 3; do
		bgp_kr $k load r0 -c "$TOPO_DIR/fleet.json" --mode native --instance "$TOPO_INSTANCE-$k" \
			>>"$TOPO_DIR/load.log" 2>&1 || { cat "$TOPO_DIR/load.log" >&2; return 1; }
	done
	bgp_bird_start || return 1
	for k in 1 2 3; do bgp_announce_start $k "$TOPO_DIR/fleet.json"; done
	bgp_wait_nexthops "$(bgp_hops 1 2 3)" 20 >"$TOPO_DIR/fig.start" || {
		bgp_birdc upstream show protocols >&2; tail -n 5 "$TOPO_DIR"/announce-*.log >&2; return 1; }
}

teardown_file() {
	[ "${BGP_KEEP:-0}" = 1 ] && { echo "# kept: TOPO_PREFIX=$TOPO_PREFIX TOPO_DIR=$TOPO_DIR" >&3; return 0; }
	if [ -n "${TOPO_PREFIX:-}" ] && [ -d "${TOPO_DIR:-}" ]; then
		topo_attach && bgp_teardown
	fi
	return 0
}

setup() { e2e_setup; }

kr_of() { local k=$1; shift; bgp_kr "$k" "$@" --instance "$TOPO_INSTANCE-$k"; }

routed() { kr_of "$1" stats --json | jq .counters.routed; }
# until router K has routed more than N packets (the load reaches it), at most ~3 s
routed_past() {
	for _ in $(seq 30); do [ "$(routed "$1")" -gt "$2" ] && return 0; sleep 0.1; done
	return 1
}

# load_start S K: dnsperf from the client in the background for S seconds; returns once the
# load reaches router K.  32 clients: 32 source ports, so 32 flows over the upstream's hash
# (with 4, a router got none in one run of 5).  Up to 2000 queries in flight: a lost query
# must not stall the sender, or the losses would be capped by that window.  load_wait waits
# for it and prints "sent S lost L" (called in the test's shell: a $(...) subshell cannot
# wait).
load_start() {
	local r0
	r0=$(routed "$2")
	awk '{ print $1 " A" }' "$TOPO_DIR/names" >"$TOPO_DIR/dnsperf.in"
	ip netns exec "$(bgp_cl)" dnsperf -s "$TOPO_VIP4" -d "$TOPO_DIR/dnsperf.in" -l "$1" \
		-Q $QPS -c 32 -q 2000 -t 1 >"$TOPO_DIR/dnsperf.out" 2>&1 3>&- &
	echo $! >"$TOPO_DIR/dnsperf.pid"
	# the load reaches router K before its failure (else 0 lost would say nothing)
	routed_past "$2" "$r0" || {
		echo "router $2 routed nothing of the load (before $r0, now $(routed "$2")); next hops:" \
			"$(bgp_nexthops | tr '\n' ' ')" >&2
		bgp_birdc upstream show protocols >&2
		cat "$TOPO_DIR/dnsperf.out" >&2
		return 1
	}
}
load_wait() {
	wait "$(cat "$TOPO_DIR/dnsperf.pid")" 2>/dev/null || :
	awk '/Queries sent:/ { s = $3 } /Queries lost:/ { l = $3 } END { print "sent", s + 0, "lost", l + 0 }' \
		"$TOPO_DIR/dnsperf.out" >"$TOPO_DIR/load.res"
	cat "$TOPO_DIR/load.res"
}
fig() { echo "$2" >"$TOPO_DIR/fig.$1"; }

# the VIP's route and reason in router K's status --json
vip_json() { kr_of "$1" status --json | jq -r '.announce.vips[0] | "\(.route) \(.reason)"'; }

@test "bgp: three routers announce the VIP; the upstream has three next hops and every name is answered by the backend lookup predicts" {
	[ "$(bgp_nexthops | wc -l)" = 3 ]
	e2e_predict "$TOPO_DIR/fleet.json" dns4 "$TOPO_DIR/names" >"$TOPO_DIR/pred"
	TOPO_C=$(bgp_cl) e2e_dns_batch "$TOPO_VIP4" "$TOPO_DIR/names" >"$TOPO_DIR/ans"
	run e2e_compare "$TOPO_DIR/pred" "$TOPO_DIR/ans"
	echo "# start: $output" >&3
	[ "$status" = 0 ]
	# every router carried some of them
	for k in 1 2 3; do
		[ "$(routed $k)" -gt 0 ]
		[ "$(vip_json $k)" = "announced ok" ]
	done
}

@test "bgp: the program detached on router 1 behind keyrouter's back is withdrawn within 2 s; apply attaches it again and it is announced" {
	local d r n t0
	load_start 3 1
	t0=$(date +%s.%N)
	ip -n "$TOPO_R" link set dev r0 xdp off
	d=$(bgp_wait_nexthops "$(bgp_hops 2 3)" 10 "$t0")
	[ "$(vip_json 1)" = "withdrawn not attached" ]
	load_wait >/dev/null
	r=$(cat "$TOPO_DIR/load.res")
	echo "# detach: withdrawn in $d s; $r" >&3
	fig detach "$d"
	awk -v d="$d" 'BEGIN { exit !(d <= 2) }'
	kr_of 1 apply -c "$TOPO_DIR/fleet.json"
	bgp_wait_nexthops "$(bgp_hops 1 2 3)" 10
	[ "$(vip_json 1)" = "announced ok" ]
	# an upgrade in place never withdraws: two rounds later nothing was withdrawn
	n=$(grep -c withdrawn "$TOPO_DIR/announce-1.log")
	kr_of 1 upgrade r0 >/dev/null
	sleep 2.2
	[ "$(grep -c withdrawn "$TOPO_DIR/announce-1.log")" = "$n" ]
	[ "$(vip_json 1)" = "announced ok" ]
	[ "$(bgp_nexthops | wc -l)" = 3 ]
}

@test "bgp: every backend of router 2 down withdraws it; back up, it is announced again" {
	local b i t0 r
	load_start 3 2
	t0=$(date +%s.%N)
	for i in 1 2 3 4; do kr_of 2 backend set "${TOPO_B4[i]}" down >/dev/null; done
	b=$(bgp_wait_nexthops "$(bgp_hops 1 3)" 10 "$t0")
	[ "$(vip_json 2)" = "withdrawn backends down" ]
	load_wait >/dev/null
	r=$(cat "$TOPO_DIR/load.res")
	kr_of 2 status --prometheus >"$TOPO_DIR/prom"
	"$PROMTOOL" check metrics <"$TOPO_DIR/prom"
	grep -Fx "keyrouter_vip_announced{keyrouter_instance=\"$TOPO_INSTANCE-2\",vip=\"$TOPO_VIP4\"} 0" "$TOPO_DIR/prom"
	grep -Fx "keyrouter_vip_reason{keyrouter_instance=\"$TOPO_INSTANCE-2\",vip=\"$TOPO_VIP4\",reason=\"backends_down\"} 1" "$TOPO_DIR/prom"
	grep -Fx "keyrouter_bgp_session_up{keyrouter_instance=\"$TOPO_INSTANCE-2\",session=\"upstream1\"} 1" "$TOPO_DIR/prom"
	run kr_of 2 check
	echo "# backends down: withdrawn in $b s (from the first backend set); $r; check: $output" >&3
	[ "$status" != 0 ]
	[[ $output == *"announce: VIP $TOPO_VIP4 withdrawn (backends down)"* ]]
	fig backends "$b"
	for i in 1 2 3 4; do kr_of 2 backend set "${TOPO_B4[i]}" up >/dev/null; done
	bgp_wait_nexthops "$(bgp_hops 1 2 3)" 10
	[ "$(vip_json 2)" = "announced ok" ]
}

@test "bgp: router 3 drained under load: GRACEFUL_SHUTDOWN first, then withdrawn, 0 queries lost; undrained, announced" {
	local r gs=0 dpid
	load_start 5 3
	kr_of 3 announce --drain --wait 20 >"$TOPO_DIR/drain.out" 2>&1 &
	dpid=$!
	# the upstream keeps router 3's path with local preference 0, out of the multipath route
	for _ in $(seq 100); do
		if bgp_birdc upstream show route "$TOPO_VIP4/32" protocol router3 all 2>/dev/null |
			grep -q 'BGP.local_pref: 0'; then gs=1; break; fi
		sleep 0.02
	done
	wait $dpid
	load_wait >/dev/null
	r=$(cat "$TOPO_DIR/load.res")
	echo "# drain: GRACEFUL_SHUTDOWN seen at the upstream $gs; $r; $(tr '\n' ' ' <"$TOPO_DIR/drain.out")" >&3
	[ "$gs" = 1 ]
	grep -Fx "announce: VIP $TOPO_VIP4 withdrawn (drained)" "$TOPO_DIR/drain.out"
	[ "$(bgp_nexthops)" = "$(bgp_hops 1 2 | tr ' ' '\n' | grep . | sort)" ]
	[ -z "$(bgp_birdc upstream show route "$TOPO_VIP4/32" protocol router3 | grep via)" ]
	fig drain "$r"
	[[ $r == *" lost 0" ]]
	# a drain is no warning
	kr_of 3 check
	kr_of 3 announce --undrain
	bgp_wait_nexthops "$(bgp_hops 1 2 3)" 10
}

@test "bgp: the announcer killed leaves the routes as they are; status and check say it does not run; restarted, the same" {
	kill -9 "$(cat "$TOPO_DIR/announce-3.pid")"
	# stale after 3 rounds + 1 s
	sleep 4.5
	[ "$(bgp_nexthops | wc -l)" = 3 ]
	run -0 kr_of 3 status
	[[ $output == *"announce: NOT RUNNING (no heartbeat: killed or hung"* ]]
	run kr_of 3 check
	[ "$status" = 1 ]
	[[ $output == *"announce: announcer not running"* ]]
	bgp_announce_start 3 "$TOPO_DIR/fleet.json"
	for _ in $(seq 50); do [ "$(vip_json 3)" = "announced ok" ] && break; sleep 0.1; done
	[ "$(vip_json 3)" = "announced ok" ]
	[ "$(bgp_nexthops | wc -l)" = 3 ]
	kr_of 3 check
}

@test "bgp: router 1 goes silent (nft drops everything): BFD withdraws it within 1 s" {
	local t r t0
	load_start 3 1
	# from before the rule is loaded (it takes effect during the command): an upper bound
	t0=$(date +%s.%N)
	ip netns exec "$TOPO_R" nft -f - <<-'EOF'
	table inet krsilent {
		chain kin { type filter hook input priority -300; policy drop; }
		chain kout { type filter hook output priority -300; policy drop; }
		chain kfwd { type filter hook forward priority -300; policy drop; }
	}
	EOF
	t=$(bgp_wait_nexthops "$(bgp_hops 2 3)" 10 "$t0")
	load_wait >/dev/null
	r=$(cat "$TOPO_DIR/load.res")
	echo "# silent death: detected in $t s; $r (the XDP program still forwards what reaches it)" >&3
	fig silent "$t"
	fig silent_lost "$(awk '{ print $4 }' <<<"$r")"
	bgp_birdc upstream show protocols router1 | grep -q 'BFD session down'
	awk -v t="$t" 'BEGIN { exit !(t <= 1) }'
}

@test "bgp: router 2 joining with an older configuration is not announced until apply made it current" {
	kr_of 2 unload r0
	bgp_wait_nexthops "$(bgp_hops 3)" 5
	kr_of 2 load r0 -c "$TOPO_DIR/old.json" --mode native >/dev/null 2>&1
	# two rounds of the announcer later: still withdrawn, and why
	sleep 2.5
	[ "$(vip_json 2)" = "withdrawn not converged" ]
	[ "$(bgp_nexthops)" = "$(bgp_r_addr 3)" ]
	kr_of 2 apply -c "$TOPO_DIR/fleet.json" >/dev/null
	bgp_wait_nexthops "$(bgp_hops 2 3)" 10
	[ "$(vip_json 2)" = "announced ok" ]
}

@test "bgp: unload of router 3 under load withdraws first: 0 queries lost" {
	local r
	load_start 5 3
	kr_of 3 unload r0 2>"$TOPO_DIR/unload.err"
	grep -q 'the announcer withdrew every VIP' "$TOPO_DIR/unload.err"
	[ "$(bgp_nexthops)" = "$(bgp_r_addr 2)" ]
	load_wait >/dev/null
	r=$(cat "$TOPO_DIR/load.res")
	echo "# unload: $r" >&3
	fig unload "$(awk '{ print $4 }' <<<"$r")"
	read -r _ q _ l < "$TOPO_DIR/fig.drain"
	echo "# bgp: routers 3; detach withdrawn in $(cat "$TOPO_DIR/fig.detach") s; backends down withdrawn in $(cat "$TOPO_DIR/fig.backends") s; drain lost $l of $q; silent death detected in $(cat "$TOPO_DIR/fig.silent") s lost $(cat "$TOPO_DIR/fig.silent_lost"); unload lost $(cat "$TOPO_DIR/fig.unload")" >&3
	[[ $r == *" lost 0" ]]
}
