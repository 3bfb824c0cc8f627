#!/usr/bin/env bats
# The active health checker, end to end (docs/operations.md "Health checking"): 4 backends
# each running unbound (53), memcached (11211) and the QUIC server (4433), keyrouter in
# native XDP with l2 forwarding, `keyrouter health` in the router's network namespace
# probing every backend through the data path's forwarding (a frame to the VIP with the
# backend's MAC).  Short timings (interval 0.2 s, timeout 0.1 s, fall 3, rise 2), so the
# detection bound fall x interval + timeout is 0.7 s.  Real servers are killed, started
# again, lose their VIP, flap; the checker itself is killed with -9; an operator drains.
bats_require_minimum_version 1.5.0
load ../lib/e2e_common
load ../lib/health

INTERVAL=0.2
TIMEOUT=0.1
RISE=2
FALL=3

setup_file() {
	e2e_require_keyrouter health || return 0
	e2e_setup_file 4 || return 1
	topo_start_dns && topo_start_memcached && topo_start_quic || return 1
	e2e_config "$TOPO_DIR/all.json" l2 "1 2 3 4" dns:dns:53 mc:memcache:11211 quic:tuple:4433
	# IPv4 only (fewer probes on a busy machine); the QUIC service keys by tuple, so its
	# connections survive, and asks for the QUIC probe explicitly (tuple has none by default).
	# No flap damping here (the same backends go down and up test after test, and one flaps
	# on purpose): health_follow.bats tests the damping.
	jq --argjson i "$INTERVAL" --argjson t "$TIMEOUT" --argjson r "$RISE" --argjson f "$FALL" '
		.rings |= map(select(.name | endswith("4"))) |
		.services |= map(select(.name | endswith("4"))) |
		.rings[].health = {"interval": $i, "timeout": $t, "rise": $r, "fall": $f,
				   "damp_suppress": 0} |
		(.rings[] | select(.name == "quic4") | .health.probe) = "quic"' \
		"$TOPO_DIR/all.json" >"$TOPO_DIR/h.json" || return 1
	e2e_names 1000 h >"$TOPO_DIR/names"
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

# backend's JSON object in status (ADDRESS:PORT)
be_json() {
	kr status --json | jq -c --arg a "$1" '.backends[] | select(.address == $a)'
}

be_field() { be_json "$1" | jq -r "$2"; }

# wait_state ADDR STATE SECONDS: poll status until the backend has STATE
wait_state() {
	local a=$1 want=$2 n max
	max=$(awk -v s="$3" 'BEGIN { print int(s * 20) }')
	for ((n = 0; n < max; n++)); do
		[ "$(be_field "$a" .state)" = "$want" ] && return 0
		sleep 0.05
	done
	echo "backend $a is not $want after $3 s: $(be_json "$a")"
	return 1
}

# the server processes (pid file of topo.sh): kill_server I NAME [SIG]
server_pids() { awk -v ns="${TOPO_B[$1]}" -v c="$2" '$2 == ns && $3 == c { print $1 }' "$TOPO_DIR/pids"; }
kill_server() {
	local p
	for p in $(server_pids "$1" "$2"); do kill "-${3:-TERM}" "$p" 2>/dev/null || true; done
	for p in $(server_pids "$1" "$2"); do
		while [ -d "/proc/$p" ]; do sleep 0.01; done
	done
}
start_unbound() {
	local d=$TOPO_DIR/dns-b$1
	topo_spawn "${TOPO_B[$1]}" "$d/unbound.log" unbound -d -c "$d/unbound.conf"
	topo_wait_listen "${TOPO_B[$1]}" udp $TOPO_DNS_PORT
}
start_memcached() {
	topo_spawn "${TOPO_B[$1]}" "$TOPO_DIR/memcached-b$1.log" memcached -u root -m 16 -t 1 \
		-p $TOPO_MC_PORT -U $TOPO_MC_PORT \
		-l "$TOPO_VIP4,[$TOPO_VIP6],${TOPO_B4[$1]},[${TOPO_B6[$1]}]"
	topo_wait_listen "${TOPO_B[$1]}" udp $TOPO_MC_PORT
}
start_quic() {
	topo_spawn "${TOPO_B[$1]}" "$TOPO_DIR/quic4-b$1.log" gtlsserver -q -d "$TOPO_DIR/www-b$1" \
		$TOPO_VIP4 $TOPO_QUIC_PORT "$TOPO_DIR/tls/key.pem" "$TOPO_DIR/tls/cert.pem"
	topo_wait_listen "${TOPO_B[$1]}" udp $TOPO_QUIC_PORT
}

# the configuration with backend I of RING down: what lookup predicts once it is detected
down_config() { # RING I OUT
	jq --arg r "$1" --argjson i "$(($2 - 1))" \
		'(.rings[] | select(.name == $r) | .backends[$i].state) = "down"' "$TOPO_DIR/h.json" >"$3"
}

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
BOUND=$(awk -v f=$FALL -v i=$INTERVAL -v t=$TIMEOUT 'BEGIN { printf "%.3f", f * i + t }')

# kill_detect I SERVER ADDR: kill SERVER on backend I; once it is gone, the checker must mark
# ADDR down within the bound; D = the seconds it took (the time the state was written)
kill_detect() {
	local t0
	kill_server "$1" "$2"
	t0=$(now)	# (it is gone: kill_server waits for its exit)
	wait_state "$3" down 10
	[ "$(be_field "$3" .owner)" = checker ]
	D=$(secs "$t0" "$(be_field "$3" .since_unix)")
	echo "$2: detected in $D s (bound $BOUND s)"
	if [ "$2" != unbound ]; then echo "# $2: detected in $D s (bound $BOUND s)" >&3; fi
	awk -v d="$D" -v b="$BOUND" 'BEGIN { exit !(d <= b) }'
}

@test "health: every backend is checked and up, the checker's heartbeat and figures are in status, --json and Prometheus" {
	sleep 1
	run -0 kr status
	echo "$output"
	[[ "$output" == *"health checker: running, pid $(cat "$TOPO_DIR/health.pid"), 12 backends checked"* ]]
	[ "$(grep -c '; dns probes [1-9]' <<<"$output")" = 4 ]
	[ "$(grep -c '; memcached probes [1-9]' <<<"$output")" = 4 ]
	[ "$(grep -c '; quic probes [1-9]' <<<"$output")" = 4 ]
	run -0 kr status --json
	jq -c '.backends[] | [.address, .state, .owner, .health]' <<<"$output"
	[ "$(jq '[.backends[] | select(.state == "up" and .health.probes > 0)] | length' <<<"$output")" = 12 ]
	[ "$(jq -r '.health_checker.running' <<<"$output")" = true ]
	run -0 kr status --prometheus
	"$("$E2E_ROOT"/scripts/promtool.sh)" check metrics <<<"$output"
	grep -q "^keyrouter_health_checker_up{keyrouter_instance=\"$TOPO_INSTANCE\"} 1$" <<<"$output"
	[ "$(grep -c '^keyrouter_health_probes_total{.*} [1-9]' <<<"$output")" = 12 ]
	[ "$(grep -c '^keyrouter_health_panic{.*} 0$' <<<"$output")" = 3 ]
}

@test "health dns: kill 1 of 4 unbound: down within fall x interval + timeout, exactly the predicted keys move, nothing unanswered an interval later, back after rise" {
	local k=2 a="${TOPO_B4[2]}:53" t_det t_up t_start d r m p u tr0
	# before: every name answered by the backend lookup predicts
	e2e_predict "$TOPO_DIR/h.json" dns4 "$TOPO_DIR/names" >"$TOPO_DIR/pred.before"
	e2e_dns_batch "$TOPO_VIP4" "$TOPO_DIR/names" >"$TOPO_DIR/ans.before"
	run e2e_compare "$TOPO_DIR/pred.before" "$TOPO_DIR/ans.before"
	echo "$output"
	[ "$status" = 0 ]
	# predicted with b2 down: the walk's answer for each key
	down_config dns4 $k "$TOPO_DIR/down.json"
	e2e_predict "$TOPO_DIR/down.json" dns4 "$TOPO_DIR/names" >"$TOPO_DIR/pred.down"
	p=$(paste -d' ' "$TOPO_DIR/pred.before" "$TOPO_DIR/pred.down" | awk '$2 != $4' | wc -l)
	[ "$p" -gt 0 ]
	[ "$p" = "$(awk -v k=$k '$2 == k' "$TOPO_DIR/pred.before" | wc -l)" ]
	tr0=$(be_field "$a" .health.transitions)

	kill_detect $k unbound "$a"
	d=$D
	t_det=$(be_field "$a" .since_unix)

	# one interval after detection: every query answered, by the predicted backend
	sleep "$(awk -v t="$t_det" -v i=$INTERVAL -v n="$(now)" 'BEGIN { s = t + i - n; print (s > 0 ? s : 0) }')"
	e2e_dns_batch "$TOPO_VIP4" "$TOPO_DIR/names" >"$TOPO_DIR/ans.down"
	run e2e_compare "$TOPO_DIR/pred.down" "$TOPO_DIR/ans.down"
	echo "$output"
	[ "$status" = 0 ]
	u=$(($(wc -l <"$TOPO_DIR/names") - $(wc -l <"$TOPO_DIR/ans.down")))
	# moved: answered by another backend than before, and by the predicted one
	m=$(paste -d' ' "$TOPO_DIR/ans.before" "$TOPO_DIR/ans.down" "$TOPO_DIR/pred.down" | awk '$2 != $4 && $4 == $6' | wc -l)

	t_start=$(now)
	start_unbound $k
	wait_state "$a" up 10
	t_up=$(be_field "$a" .since_unix)
	r=$(secs "$t_start" "$t_up")
	[ "$(be_field "$a" .health.transitions)" = $((tr0 + 2)) ]
	grep -q "^health: $a (id [0-9]*, ring dns4): up after $RISE answered probes" "$TOPO_DIR/health.log"
	line="health: killed 1 of 4 backends; detected in $d s (bound $BOUND s); moved $m keys of $p predicted; unanswered after detection $u; back after $r s"
	echo "$line"
	echo "# $line ($(uptime | sed 's/.*load/load/'))" >&3
	[ "$m" = "$p" ]
	[ "$u" = 0 ]
	# the host stayed up: its "port unreachable" failed the probes before their timeout
	grep -q "^health: $a (id [0-9]*, ring dns4): down after $FALL failed probes.*port unreachable (ICMP)" "$TOPO_DIR/health.log"
	# back: the keys are where they were
	e2e_dns_batch "$TOPO_VIP4" "$TOPO_DIR/names" >"$TOPO_DIR/ans.back"
	run e2e_compare "$TOPO_DIR/pred.before" "$TOPO_DIR/ans.back"
	echo "$output"
	[ "$status" = 0 ]
}

@test "health memcached: kill one memcached: down within the bound, sets land on the predicted backends only, back after rise" {
	local k=3 a="${TOPO_B4[3]}:11211"
	down_config mc4 $k "$TOPO_DIR/mcdown.json"
	kill_detect $k memcached "$a"
	sleep $INTERVAL
	topo_exec "$TOPO_C" python3 "$E2E_LIB/mc.py" udp "$TOPO_VIP4" $TOPO_MC_PORT set hk 200
	seq -f "hk-%g" 0 199 >"$TOPO_DIR/mc.keys"
	e2e_predict "$TOPO_DIR/mcdown.json" mc4 "$TOPO_DIR/mc.keys" >"$TOPO_DIR/mc.pred"
	[ "$(awk -v k=$k '$2 == k' "$TOPO_DIR/mc.pred" | wc -l)" = 0 ]
	topo_exec "$TOPO_C" python3 "$E2E_LIB/mc.py" locate $TOPO_MC_PORT hk 200 \
		"${TOPO_B4[1]}" "${TOPO_B4[2]}" "${TOPO_B4[4]}" | awk '{ $2 = ($2 == 3 ? 4 : $2); print }' >"$TOPO_DIR/mc.where"
	run e2e_compare "$TOPO_DIR/mc.pred" "$TOPO_DIR/mc.where"
	echo "$output"
	[ "$status" = 0 ]
	start_memcached $k
	wait_state "$a" up 10
}

@test "health quic: kill one QUIC server: down within the bound (Version Negotiation probe), connections go to the predicted backends, back after rise" {
	local k=4 a="${TOPO_B4[4]}:4433"
	down_config quic4 $k "$TOPO_DIR/qdown.json"
	kill_detect $k gtlsserver "$a"
	sleep $INTERVAL
	E2E_QUIC_ID_ONLY=1 e2e_quic_many "$TOPO_VIP4" 12 >"$TOPO_DIR/q.out"
	cat "$TOPO_DIR/q.out"
	[ "$(grep -vc ' ID_OK ' "$TOPO_DIR/q.out")" = 0 ]
	awk -v c="$TOPO_CLIENT4" '{ print c ":" $2 }' "$TOPO_DIR/q.out" >"$TOPO_DIR/q.keys"
	awk -v c="$TOPO_CLIENT4" '{ print c ":" $2, substr($1, 2) }' "$TOPO_DIR/q.out" >"$TOPO_DIR/q.ans"
	e2e_predict "$TOPO_DIR/qdown.json" quic4 "$TOPO_DIR/q.keys" >"$TOPO_DIR/q.pred"
	run e2e_compare "$TOPO_DIR/q.pred" "$TOPO_DIR/q.ans"
	echo "$output"
	[ "$status" = 0 ]
	start_quic $k
	wait_state "$a" up 10
}

@test "health: a backend whose host stays up but whose VIP is removed is detected down (and up when it is back)" {
	local k=1 a="${TOPO_B4[1]}:53"
	ip -n "${TOPO_B[$k]}" addr del "$TOPO_VIP4/32" dev lo
	# the host still answers on its own address
	run -0 topo_exec "$TOPO_C" dig +short +time=1 +tries=1 "@${TOPO_B4[$k]}" "$TOPO_DNS_ZONE" TXT
	[ "$output" = "\"b$k\"" ]
	wait_state "$a" down 10
	ip -n "${TOPO_B[$k]}" addr add "$TOPO_VIP4/32" dev lo
	wait_state "$a" up 10
}

@test "health: a backend flapping every half interval makes no more transitions than rise/fall allow" {
	local k=3 a="${TOPO_B4[3]}:53" tr0 p0 tr p n
	tr0=$(be_field "$a" .health.transitions)
	p0=$(be_field "$a" .health.probes)
	for ((n = 0; n < 15; n++)); do
		ip -n "${TOPO_B[$k]}" addr del "$TOPO_VIP4/32" dev lo
		sleep 0.1
		ip -n "${TOPO_B[$k]}" addr add "$TOPO_VIP4/32" dev lo
		sleep 0.1
	done
	wait_state "$a" up 10
	tr=$(($(be_field "$a" .health.transitions) - tr0))
	p=$(($(be_field "$a" .health.probes) - p0))
	echo "flapping: $p probes, $tr transitions"
	echo "# flapping (VIP removed and added every half interval): $p probes, $tr transitions (at most $(((2 * p) / (RISE + FALL) + 1)))" >&3
	# every down needs fall failures in a row after an up, every up rise successes
	[ "$p" -gt 0 ]
	[ "$tr" -le $(((2 * p) / (RISE + FALL) + 1)) ]
	[ $((tr % 2)) = 0 ]
}

@test "health: the checker killed with -9: routing and states unchanged meanwhile, status says it is not running; restarted, it resumes" {
	local k=2 a="${TOPO_B4[2]}:53" b="${TOPO_B4[4]}:53" pr
	kill_server $k unbound
	wait_state "$a" down 10
	kill -9 "$(cat "$TOPO_DIR/health.pid")"
	pr=$(be_field "$b" .health.probes)
	down_config dns4 $k "$TOPO_DIR/down.json"
	e2e_predict "$TOPO_DIR/down.json" dns4 "$TOPO_DIR/names" >"$TOPO_DIR/pred.down"
	# the dead backend comes back while nobody checks: it stays down, keys stay moved
	start_unbound $k
	sleep 2
	run -0 kr status
	echo "$output"
	[[ "$output" == *"health checker: NOT RUNNING (no heartbeat: killed or hung"* ]]
	[ "$(be_field "$a" .state)" = down ]
	[ "$(be_field "$b" .health.probes)" = "$pr" ]
	e2e_dns_batch "$TOPO_VIP4" "$TOPO_DIR/names" >"$TOPO_DIR/ans.dead"
	run e2e_compare "$TOPO_DIR/pred.down" "$TOPO_DIR/ans.dead"
	echo "$output"
	[ "$status" = 0 ]
	# restarted: the figures go on, the down backend needs rise answers to come back
	health_start
	wait_state "$a" up 10
	[ "$(be_field "$b" .health.probes)" -gt "$pr" ]
	run -0 kr status --json
	[ "$(jq -r '.health_checker.running' <<<"$output")" = true ]
}

@test "health: an operator's drain survives the checker; the panic threshold holds with 3 of 4 dead" {
	local a1="${TOPO_B4[1]}:53" a2="${TOPO_B4[2]}:53" a3="${TOPO_B4[3]}:53" a4="${TOPO_B4[4]}:53"
	run -0 kr backend set "$a1" drain
	sleep 1
	[ "$(be_field "$a1" .state)" = drain ]
	[ "$(be_field "$a1" .owner)" = operator ]
	[ "$(be_field "$a1" .health.left_alone)" = true ]
	run -0 kr status
	grep -q "^  state set by operator since .*left alone by the checker" <<<"$output"
	run -0 kr backend set "$a1" up
	wait_state "$a1" up 5
	# the configuration's drain: owner config, since when, left alone too
	jq '(.rings[] | select(.name == "dns4") | .backends[0].state) = "drain"' "$TOPO_DIR/h.json" >"$TOPO_DIR/drain.json"
	run -0 kr apply -c "$TOPO_DIR/drain.json"
	sleep 1
	[ "$(be_field "$a1" .state)" = drain ]
	[ "$(be_field "$a1" .owner)" = config ]
	[ "$(be_field "$a1" .since_unix)" != null ]
	[ "$(be_field "$a1" .health.left_alone)" = true ]
	run -0 kr backend set "$a1" up
	wait_state "$a1" up 5
	# 3 of 4 dead: at most half of the ring goes down, the rest is held up and said so
	kill_server 2 unbound
	kill_server 3 unbound
	kill_server 4 unbound
	sleep 3
	run -0 kr status --json
	[ "$(jq '[.backends[] | select(.address | endswith(":53")) | select(.state == "down")] | length' <<<"$output")" = 2 ]
	[ "$(jq '[.backends[] | select(.health.held_by_panic)] | length' <<<"$output")" = 1 ]
	[ "$(jq -r '.health_rings[] | select(.ring == "dns4") | .panic' <<<"$output")" = true ]
	run -0 kr status
	echo "$output"
	grep -q "^health: PANIC in ring dns4 since .*: 2 of 4 checked backends up; 1 failing backend kept up by the panic threshold 0.50" <<<"$output"
	run -0 kr status --prometheus
	grep -q "^keyrouter_health_panic{keyrouter_instance=\"$TOPO_INSTANCE\",ring=\"dns4\"} 1$" <<<"$output"
	grep -q "^health: PANIC: ring dns4: marking .* down would leave 1 of 4 backends up, below the panic threshold 0.50" "$TOPO_DIR/health.log"
	start_unbound 2
	start_unbound 3
	start_unbound 4
	wait_state "$a2" up 10
	wait_state "$a3" up 10
	wait_state "$a4" up 10
	run -0 kr status --json
	[ "$(jq -r '.health_rings[] | select(.ring == "dns4") | .panic' <<<"$output")" = false ]
}

@test "health: writers never hang: --wait gives up clearly while the lock is held; the checker's change waits for it and then lands" {
	local a="${TOPO_B4[2]}:53" dir=/sys/fs/bpf/keyrouter/$TOPO_INSTANCE
	flock "$dir" sleep 4 &
	local holder=$!
	sleep 0.3
	run -1 kr backend set "$a" drain --wait 0.5
	echo "$output"
	[[ "$output" == *"gave up after waiting 0.5 s for the lock of instance '$TOPO_INSTANCE' (--wait)"* ]]
	[ "$(be_field "$a" .state)" = up ]
	kill_server 2 unbound
	wait_state "$a" down 10
	wait "$holder"
	start_unbound 2
	wait_state "$a" up 10
	run -2 kr backend set "$a" drain --wait soon
	[[ "$output" == *"bad --wait 'soon'"* ]]
}

@test "health: an apply that changes a ring while the checker runs: it finds the ring's backends again by itself" {
	jq '(.rings[] | select(.name == "dns4") | .backends) |= .[0:3]' "$TOPO_DIR/h.json" >"$TOPO_DIR/three.json"
	run -0 kr apply -c "$TOPO_DIR/three.json"
	local n
	for ((n = 0; n < 100; n++)); do
		[ "$(kr status --json | jq -r .health_checker.backends)" = 11 ] && break
		sleep 0.1
	done
	[ "$(kr status --json | jq -r .health_checker.backends)" = 11 ]
	grep -q '^health: the instance changed (apply): finding its backends again' "$TOPO_DIR/health.log"
	run -0 kr apply -c "$TOPO_DIR/h.json"
	for ((n = 0; n < 100; n++)); do
		[ "$(kr status --json | jq -r .health_checker.backends)" = 12 ] && break
		sleep 0.1
	done
	[ "$(kr status --json | jq -r .health_checker.backends)" = 12 ]
	wait_state "${TOPO_B4[4]}:53" up 5
	[ "$(be_field "${TOPO_B4[4]}:53" .health.probes)" -gt 0 ]
	# SIGHUP (systemctl reload): the file again; a broken one keeps the one read before
	cp "$TOPO_DIR/h.json" "$TOPO_DIR/h.good"
	echo '{' >"$TOPO_DIR/h.json"
	kill -HUP "$(cat "$TOPO_DIR/health.pid")"
	for ((n = 0; n < 50; n++)); do
		grep -q 'is not valid (above): checking on with the configuration read before' "$TOPO_DIR/health.log" && break
		sleep 0.1
	done
	cp "$TOPO_DIR/h.good" "$TOPO_DIR/h.json"
	grep -q '^health: SIGHUP: reading .*h.json again' "$TOPO_DIR/health.log"
	grep -q 'is not valid (above): checking on with the configuration read before' "$TOPO_DIR/health.log"
	sleep 1
	[ "$(kr status --json | jq -r '.health_checker.running, .health_checker.backends' | paste -sd' ')" = "true 12" ]
}
