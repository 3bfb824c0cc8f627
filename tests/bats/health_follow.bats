#!/usr/bin/env bats
# The health checker as a process that runs for months (issue 35; docs/operations.md "Health
# checking"): it follows its instance across unload + load, one runs per instance, it refuses
# another network namespace, its watchdog attaches a detached program again, `check` says
# CRITICAL when it is dead, and flap damping holds a flapping backend down.  3 backends with
# real unbound, keyrouter in native XDP with l2 forwarding; short probe timings (interval 0.2
# s, timeout 0.1 s, rise 2, fall 3); the damping and the watchdog with their defaults.
bats_require_minimum_version 1.5.0
load ../lib/e2e_common
load ../lib/health
# the checker under its unit's capabilities only (the watchdog's attach needs CAP_NET_ADMIN)
# (and a fresh log at each start)
export HEALTH_UNIT_CAPS=1 HEALTH_LOG_FRESH=1

setup_file() {
	e2e_require_keyrouter health || return 0
	e2e_setup_file 3 || return 1
	topo_start_dns || return 1
	e2e_config "$TOPO_DIR/all.json" l2 "1 2 3" dns:dns:53
	jq '.rings |= map(select(.name == "dns4")) | .services |= map(select(.name == "dns4")) |
	    .rings[].health = {"interval": 0.2, "timeout": 0.1, "rise": 2, "fall": 3}' \
		"$TOPO_DIR/all.json" >"$TOPO_DIR/h.json" || return 1
	e2e_load "$TOPO_DIR/h.json" >"$TOPO_DIR/load.log" 2>&1 || { cat "$TOPO_DIR/load.log" >&2; return 1; }
	health_start
}

teardown_file() {
	health_stop
	e2e_teardown_file
}

setup() {
	e2e_setup
}

kr() { topo_kr "$@" --instance "$TOPO_INSTANCE"; }
ns_kr() { nsenter --net="/run/netns/$TOPO_R" -- "$TOPO_KEYROUTER" "$@"; }

# kill -9 the checker and wait until it is gone (its descriptors closed: its token free)
kill_checker() {
	local p
	p=$(cat "$TOPO_DIR/health.pid")
	kill -9 "$p"
	while [ -d "/proc/$p" ] && ! grep -q '^State:.*Z' "/proc/$p/status" 2>/dev/null; do
		sleep 0.01
	done
}

be_field() { kr status --json | jq -r --arg a "$1" ".backends[] | select(.address == \$a) | $2"; }

wait_state() { # ADDR STATE SECONDS
	local n max=$(($3 * 20))
	for ((n = 0; n < max; n++)); do
		[ "$(be_field "$1" .state)" = "$2" ] && return 0
		sleep 0.05
	done
	echo "backend $1 is not $2 after $3 s"
	return 1
}

server_pids() { awk -v ns="${TOPO_B[$1]}" '$2 == ns && $3 == "unbound" { print $1 }' "$TOPO_DIR/pids"; }
kill_unbound() {
	local p
	for p in $(server_pids "$1"); do kill "$p" 2>/dev/null || true; done
	for p in $(server_pids "$1"); do while [ -d "/proc/$p" ]; do sleep 0.01; done; done
}
start_unbound() {
	topo_spawn "${TOPO_B[$1]}" "$TOPO_DIR/dns-b$1/unbound.log" unbound -d -c "$TOPO_DIR/dns-b$1/unbound.conf"
	topo_wait_listen "${TOPO_B[$1]}" udp $TOPO_DNS_PORT
}

@test "health follow: after unload + load the checker reopens the pins and marks the LIVE instance's backend down" {
	local a="${TOPO_B4[2]}:53"
	kr unload "$TOPO_R_IN"
	e2e_load "$TOPO_DIR/h.json" >"$TOPO_DIR/load2.log" 2>&1 || { cat "$TOPO_DIR/load2.log"; false; }
	kill_unbound 2
	wait_state "$a" down 10
	[ "$(be_field "$a" .owner)" = checker ]
	grep -q "^health: instance '$TOPO_INSTANCE' is not loaded any more\|^health: instance '$TOPO_INSTANCE' was loaded again" "$TOPO_DIR/health.log"
	grep -q "^health: checking 3 backends of instance '$TOPO_INSTANCE' again" "$TOPO_DIR/health.log"
	# the checker runs on the live instance (its heartbeat is in the new maps)
	run -0 kr status --json
	[ "$(jq -r '.health_checker.running' <<<"$output")" = true ]
	start_unbound 2
	wait_state "$a" up 10
	# a single outage is not damped
	[ "$(be_field "$a" .health.damping.held)" = false ]
}

@test "health follow: a second checker on the instance is refused, naming the first" {
	run -1 timeout 10 nsenter --net="/run/netns/$TOPO_R" -- "$TOPO_KEYROUTER" health -c "$TOPO_DIR/h.json"
	echo "$output"
	[[ "$output" == *"another health checker runs on instance '$TOPO_INSTANCE' (pid $(cat "$TOPO_DIR/health.pid"))"* ]]
}

@test "health follow: a checker in another network namespace than the instance's is refused" {
	run -1 timeout 10 "$TOPO_KEYROUTER" health -c "$TOPO_DIR/h.json"
	echo "$output"
	[[ "$output" == *"instance '$TOPO_INSTANCE' is in another network namespace"*"nsenter"* ]]
}

@test "health watchdog: a program detached behind keyrouter's back is attached again within the interval (1 s); queries lost counted" {
	local t0 t1 d r0 out sent lost
	r0=$(kr status --json | jq -r '.health_checker.watchdog.reattach_total // 0')
	awk 'BEGIN { for (i = 0; i < 500; i++) print "w" i ".'"$TOPO_DNS_ZONE"' A" }' >"$TOPO_DIR/wd.in"
	topo_exec "$TOPO_C" dnsperf -s "$TOPO_VIP4" -d "$TOPO_DIR/wd.in" -l 4 -Q 400 -q 1000 -t 1 \
		>"$TOPO_DIR/wd.perf" 2>&1 &
	local perf=$!
	sleep 1.5
	t0=$(date +%s.%N)
	ip -n "$TOPO_R" link set dev "$TOPO_R_IN" xdp off
	# attached again: the interface has an XDP program
	for ((d = 0; d < 100; d++)); do
		ip -n "$TOPO_R" -d link show dev "$TOPO_R_IN" | grep -q 'prog/xdp' && break
		sleep 0.02
	done
	t1=$(date +%s.%N)
	wait "$perf" || true
	cat "$TOPO_DIR/wd.perf"
	sent=$(awk '/Queries sent:/ { print $3 }' "$TOPO_DIR/wd.perf")
	lost=$(awk '/Queries lost:/ { print $3 }' "$TOPO_DIR/wd.perf")
	d=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
	echo "# watchdog: re-attached $d s after the detach (interval 1 s); dnsperf sent $sent, lost $lost ($(uptime | sed 's/.*load/load/'))" >&3
	grep -q "^health: watchdog: instance '$TOPO_INSTANCE': its program (id [0-9]*) was not attached to '$TOPO_R_IN' any more" "$TOPO_DIR/health.log"
	[ "$(kr status --json | jq -r '.health_checker.watchdog.reattach_total')" = $((r0 + 1)) ]
	run -0 kr status --prometheus
	grep -q "^keyrouter_reattach_total{keyrouter_instance=\"$TOPO_INSTANCE\"} $((r0 + 1))$" <<<"$output"
	run -0 kr status
	[[ "$output" == *"health watchdog: every 1 s, $((r0 + 1)) re-attaches (last "* ]]
	run -1 kr check
	echo "$output"
	[[ "$output" == "KEYROUTER WARNING - "*"the watchdog re-attached the program"* ]]
	# within the interval (1 s), with 0.5 s for the lock and a busy machine
	awk -v d="$d" 'BEGIN { exit !(d <= 1.5) }'
	# the re-attach ended the loss: no more lost than 400 queries/s sent for 1.5 s (at most
	# 1000 outstanding: every query of that window is counted)
	[ "$sent" -gt 0 ]
	[ "$lost" -le 600 ]
}

@test "health watchdog: TC mode: after an unload and a load with --mode tc, a tc filter del is undone by the watchdog" {
	local n r0
	kr unload "$TOPO_R_IN"
	e2e_load "$TOPO_DIR/h.json" tc >"$TOPO_DIR/load-tc.log" 2>&1 || { cat "$TOPO_DIR/load-tc.log"; false; }
	# the checker follows the new load (its heartbeat in the new maps)
	for ((n = 0; n < 100; n++)); do
		[ "$(kr status --json | jq -r '.health_checker.running // false')" = true ] && break
		sleep 0.05
	done
	r0=$(kr status --json | jq -r '.health_checker.watchdog.reattach_total // 0')
	ip netns exec "$TOPO_R" tc filter del dev "$TOPO_R_IN" ingress
	for ((n = 0; n < 150; n++)); do
		ip netns exec "$TOPO_R" tc filter show dev "$TOPO_R_IN" ingress | grep -q bpf && break
		sleep 0.02
	done
	ip netns exec "$TOPO_R" tc filter show dev "$TOPO_R_IN" ingress | grep -q bpf
	[ "$(kr status --json | jq -r '.health_checker.watchdog.reattach_total')" = $((r0 + 1)) ]
	grep -q "^health: watchdog: .*attached it again (tc mode" "$TOPO_DIR/health.log"
	# back to native XDP for the tests after this one
	kr unload "$TOPO_R_IN"
	e2e_load "$TOPO_DIR/h.json" >"$TOPO_DIR/load3.log" 2>&1 || { cat "$TOPO_DIR/load3.log"; false; }
	for ((n = 0; n < 100; n++)); do
		[ "$(kr status --json | jq -r '.health_checker.running // false')" = true ] && return 0
		sleep 0.05
	done
	false
}

@test "health check: CRITICAL while the configured checker is dead" {
	kill_checker
	sleep 1.6	# 3 heartbeat periods
	run -2 kr check
	echo "$output"
	[[ "$output" == "KEYROUTER CRITICAL - "*"health checker NOT RUNNING (killed or hung"* ]]
	health_start
	sleep 0.6
	run kr check
	echo "$output"
	# OK, or WARNING: the watchdog's re-attach of the test before is within 5 minutes
	[ "$status" -le 1 ]
	[[ "$output" == *"health checker running (pid $(cat "$TOPO_DIR/health.pid"))"* ]]
}

@test "health damping: a 2 s down / 2 s up flapper is held down within a few flaps; its keys stop moving" {
	local k=3 a="${TOPO_B4[3]}:53" tr0 tr n held_at= pid fd0 fd1
	pid=$(cat "$TOPO_DIR/health.pid")
	fd0=$(find "/proc/$pid/fd" -mindepth 1 | wc -l)
	tr0=$(be_field "$a" .health.transitions)
	for ((n = 0; n < 5; n++)); do
		ip -n "${TOPO_B[$k]}" addr del "$TOPO_VIP4/32" dev lo
		sleep 2
		ip -n "${TOPO_B[$k]}" addr add "$TOPO_VIP4/32" dev lo
		sleep 2
		[ -n "$held_at" ] || [ "$(be_field "$a" .health.damping.held)" != true ] ||
			held_at=$(($(be_field "$a" .health.transitions) - tr0))
	done
	tr=$(($(be_field "$a" .health.transitions) - tr0))
	# 20 s of probes, follows and watchdog looks: no descriptor grows (2 for a look in flight)
	fd1=$(find "/proc/$pid/fd" -mindepth 1 | wc -l)
	echo "# the checker's descriptors: $fd0 -> $fd1 over the 20 s" >&3
	[ "$fd1" -le $((fd0 + 2)) ]
	run -0 kr status --json
	jq -c --arg a "$a" '.backends[] | select(.address == $a)' <<<"$output"
	echo "# damping: 5 cycles of 2 s down / 2 s up: $tr transitions (held after ${held_at:-never} of them)" >&3
	# held: down although it answers (up for 2 s = 10 probes > rise), the last transitions
	# a down, none since it was held
	[ "$(be_field "$a" .state)" = down ]
	[ "$(be_field "$a" .health.damping.held)" = true ]
	[ "$(be_field "$a" .health.failing)" = false ]
	[ -n "$held_at" ]
	[ "$tr" = "$held_at" ]
	[ "$tr" -le 6 ]
	grep -q "^health: $a (id [0-9]*, ring dns4): flapping: held down by damping" "$TOPO_DIR/health.log"
	run -0 kr status --prometheus
	grep -q "^keyrouter_health_damped{.*backend=\"${TOPO_B4[3]}:53\".*} 1$" <<<"$output"
	run -0 kr status
	[[ "$output" == *"HELD DOWN by flap damping until about "* ]]
	# a restarted checker resumes the hold (the penalty from kr_health_damp): still down
	# after more than rise answers
	kill_checker
	health_start
	sleep 1
	[ "$(be_field "$a" .state)" = down ]
	[ "$(be_field "$a" .health.damping.held)" = true ]
	[ "$(be_field "$a" .health.transitions)" = $((tr0 + tr)) ]
}

@test "health damping: a backend flapping faster than fall x interval (never 3 failed probes in a row) is held down at its fifth short failure; before, it was never marked down" {
	# the issue's case scaled by one half: at the default interval (2 s, fall 3) a 2 s down /
	# 2 s up flapper fails one probe in two and is never marked down (half of its queries
	# lost); here interval 1 s, timeout 0.5 s and a 1 s / 1 s flapper
	local k=2 a="${TOPO_B4[2]}:53" n held_at=
	# backend 3 is held down by the test before: out of the hold (an operator's up), so
	# that marking backend 2 down is not refused by the panic threshold (2 of 3 stay up)
	kr backend set "${TOPO_B4[3]}:53" up >/dev/null
	wait_state "${TOPO_B4[3]}:53" up 5
	kill_checker
	jq '.rings[].health = {"interval": 1, "timeout": 0.5, "rise": 2, "fall": 3}' \
		"$TOPO_DIR/h.json" > "$TOPO_DIR/h1s.json"
	health_start "$TOPO_DIR/h1s.json"
	wait_state "$a" up 5
	for ((n = 1; n <= 14; n++)); do
		ip -n "${TOPO_B[$k]}" addr del "$TOPO_VIP4/32" dev lo
		sleep 1
		ip -n "${TOPO_B[$k]}" addr add "$TOPO_VIP4/32" dev lo
		sleep 1
		if [ "$(be_field "$a" .health.damping.held)" = true ]; then
			held_at=$n
			break
		fi
	done
	echo "# short failures: 1 s / 1 s flapper at interval 1 s held down after ${held_at:-never} cycles" >&3
	[ -n "$held_at" ]
	[ "$(be_field "$a" .state)" = down ]
	# it was never down by fall: the one transition is the hold
	grep -q "^health: $a (id [0-9]*, ring dns4): flapping faster than fall x interval" "$TOPO_DIR/health.log"
	run -0 grep "^health: $a (id [0-9]*, ring dns4): down after" "$TOPO_DIR/health.log"
	[ "${#lines[@]}" = 1 ]
	[[ "$output" == *"(flapping)" ]]
	# answering on (more than rise probes), it stays held
	sleep 3
	[ "$(be_field "$a" .state)" = down ]
	[ "$(be_field "$a" .health.failing)" = false ]
}
