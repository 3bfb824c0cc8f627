#!/usr/bin/env bats
# keyrouter trace and top on real traffic (issue 24 items 1 and 2): packets from the
# client's sockets (tests/lib/trace_send.py) through keyrouter in native XDP on the
# router, l2 forwarding to 3 backends.  Services of four key types: dns, memcache,
# payload and quic with QUIC-LB (plaintext CIDs carrying the backends' server IDs).
#  - every traced decision (>= 10,000 packets, every key type, a QUIC-LB CID, during a
#    migration at 37 %) names the backend `keyrouter lookup` predicts for its key and slot;
#  - 1 in N sampling gives N/N_sample within 3 sigma; the filters hold;
#  - top with a planted hot key reports it first for its backend, and its shares are
#    the counters' differences;
#  - per-service counters (status, stats --json, Prometheus) count every packet once.

bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
load ../lib/e2e_common

SEND=$E2E_ROOT/tests/lib/trace_send.py

trace_config() { # OUT [extra backend weight of b3]
	local out=$1 w3=${2:-1} i sep=
	{
		printf '{ "instance": "%s", "rings": [\n' "$TOPO_INSTANCE"
		for r in dns:53 mc:11211 pl:7000 qc:4433; do
			printf '%s  { "name": "%s", "format": "v2", "point_multiple": 40, "backends": [\n' "$sep" "${r%%:*}"
			for i in 1 2 3; do
				local w=1
				[ $i = 3 ] && w=$w3
				printf '    { "address": "%s:%s", "weight": %s, "mac": "%s", "dev": "%s"' \
					"${TOPO_B4[i]}" "${r##*:}" "$w" "${TOPO_BMAC[i]}" "$TOPO_R_LAN"
				[ "${r%%:*}" = qc ] && printf ', "quic_lb_server_ids": { "0": "0a0%s" }' "$i"
				printf ' }%s\n' "$([ $i = 3 ] || echo ,)"
			done
			printf '  ] }'
			sep=$',\n'
		done
		printf ' ],\n  "services": [\n'
		printf '  { "name": "dns", "vip": "%s", "port": 53, "key": { "type": "dns" }, "ring": "dns", "forward": { "mode": "l2" } },\n' "$TOPO_VIP4"
		printf '  { "name": "mc", "vip": "%s", "port": 11211, "key": { "type": "memcache" }, "ring": "mc", "forward": { "mode": "l2" },\n' "$TOPO_VIP4"
		printf '    "policy": { "no_key": "drop" } },\n'
		printf '  { "name": "pl", "vip": "%s", "port": 7000, "key": { "type": "payload" }, "ring": "pl", "forward": { "mode": "l2" } },\n' "$TOPO_VIP4"
		printf '  { "name": "qc", "vip": "%s", "port": 4433, "key": { "type": "quic", "cid_length": 9 }, "ring": "qc", "forward": { "mode": "l2" },\n' "$TOPO_VIP4"
		printf '    "quic_lb": [ { "config_rotation": 0, "server_id_length": 2, "nonce_length": 6 } ] } ] }\n'
	} >"$out"
}

setup_file() {
	e2e_require_keyrouter trace top || return 0
	e2e_setup_file 3 || return 1
	trace_config "$TOPO_DIR/c.json"
	trace_config "$TOPO_DIR/new.json" 3
	e2e_load "$TOPO_DIR/c.json" >"$TOPO_DIR/load.log" 2>&1 || { cat "$TOPO_DIR/load.log" >&2; return 1; }
	# keys: DNS names, memcache keys, payload keys, QUIC-LB CIDs (plaintext, server ID 0a0I)
	e2e_names 4000 t >"$TOPO_DIR/dns.keys"
	seq 0 2999 | sed 's/^/user:/' >"$TOPO_DIR/mc.keys"
	seq 0 2999 | sed 's/^/item-/' >"$TOPO_DIR/pl.keys"
	for ((i = 0; i < 600; i++)); do
		"$TOPO_KEYROUTER" quic-lb encode --config-rotation 0 --server-id "0a0$((i % 3 + 1))" \
			--nonce "$(printf '%012x' $((i + 1)))"
	done >"$TOPO_DIR/qc.keys"
}

teardown_file() { e2e_teardown_file; }
setup() { e2e_setup; KI=(--instance "$TOPO_INSTANCE"); }

send() { topo_exec "$TOPO_C" /usr/bin/python3 "$SEND" "$@"; }

# trace_run OUT ARGS...: a trace (JSON) in the background until the caller's traffic is
# done: trace_wait then stops it.
trace_start() {
	local out=$1
	shift
	# nsenter execs keyrouter: $! is the tracer itself (for trace_wait's SIGINT)
	nsenter --net="/run/netns/$TOPO_R" "$TOPO_KEYROUTER" trace "${KI[@]}" --json "$@" >"$out" 2>"$out.err" &
	TRACE_PID=$!
	for _ in $(seq 50); do
		grep -q '"on"' <(topo_kr trace --status "${KI[@]}" | sed 's/trace on/"on"/') && return 0
		sleep 0.1
	done
	echo "trace did not start: $(cat "$out.err")" >&2
	return 1
}
trace_wait() { sleep 0.5; kill -INT "$TRACE_PID"; wait "$TRACE_PID"; }

# predictions "KEYHEX ADDR" of a service for a keys file, by `lookup` on CONFIG
predict() { # CONFIG SERVICE KEYSFILE
	"$TOPO_KEYROUTER" lookup -c "$1" --service "$2" --addr --keys-file "$3" |
		awk '{ for (i = 1; i < NF; i++) if ($i == "route") { print $1, $(i + 2); next } print $1, "?" }'
}

# every event of FILE (JSON lines) against the predictions (PRED files "HEX ADDR"):
# prints "events N checked C wrong W" and fails on any wrong or unknown key
check_events() { # EVENTS PRED...
	local ev=$1
	shift
	jq -r 'select(.key_hex != null) | "\(.key_hex) \(.backend) \(.verdict) \(.service) \(.slot) \(.reason)"' "$ev" |
	awk 'FILENAME != "-" { p[$1] = $2; next }
	     { n++; if (!($1 in p)) { unknown++; if (unknown < 5) print "  unknown key", $0; next }
	       if ($3 != "routed" || p[$1] != $2) { wrong++; if (wrong < 5) print "  wrong:", $0, "predicted", p[$1] } else ok++ }
	     END { printf "events %d checked %d wrong %d unknown %d\n", n, ok, wrong + 0, unknown + 0
	           exit !(n > 0 && ok == n) }' "$@" -
}

@test "trace: 10,600 real packets of four key types (dns, memcache, payload, QUIC-LB CIDs): every decision as lookup predicts" {
	for s in dns mc pl qc; do predict "$TOPO_DIR/c.json" $s "$TOPO_DIR/$s.keys"; done >"$TOPO_DIR/pred"
	grep -c "quic-lb" <("$TOPO_KEYROUTER" lookup -c "$TOPO_DIR/c.json" --service qc --keys-file "$TOPO_DIR/qc.keys") >"$TOPO_DIR/nqlb"
	[ "$(cat "$TOPO_DIR/nqlb")" = 600 ]	# lookup: all 600 CIDs routed by their server ID
	trace_start "$TOPO_DIR/t1.json"
	send dns "$TOPO_VIP4" 53 "$TOPO_DIR/dns.keys"
	send mc "$TOPO_VIP4" 11211 "$TOPO_DIR/mc.keys"
	send payload "$TOPO_VIP4" 7000 "$TOPO_DIR/pl.keys"
	send quic "$TOPO_VIP4" 4433 "$TOPO_DIR/qc.keys"
	trace_wait
	run check_events "$TOPO_DIR/t1.json" "$TOPO_DIR/pred"
	echo "$output"
	[ "$status" -eq 0 ]
	# every packet traced once: 4000 + 3000 + 3000 + 600
	[ "$(grep -c '"key_hex"' "$TOPO_DIR/t1.json")" -eq 10600 ]
	[ "$(jq -r 'select(.reason == "quic_lb") | .key_hex' "$TOPO_DIR/t1.json" | wc -l)" -eq 600 ]
	jq -e 'select(.summary) | .summary.lost == 0 and .summary.sampled == 10600' "$TOPO_DIR/t1.json"
	# the text form: one line per event, tcpdump-like; --count stops it
	nsenter --net="/run/netns/$TOPO_R" "$TOPO_KEYROUTER" trace "${KI[@]}" --count 3 --service dns \
		--duration 20 >"$TOPO_DIR/t1.txt" 2>&1 &
	pid=$!
	sleep 1
	send dns "$TOPO_VIP4" 53 <(head -5 "$TOPO_DIR/dns.keys")
	wait "$pid"
	cat "$TOPO_DIR/t1.txt"
	[ "$(grep -Ec '^[0-9:.]+Z cpu[0-9]+ dns key [a-z0-9.]+ \([0-9a-f]+\) hash [0-9a-f]{8} ring dns slot [01] gen [0-9]+ point [0-9]+ -> [0-9.]+:53 \(id [0-9]+\) walk 0 l2 routed ring$' "$TOPO_DIR/t1.txt")" = 3 ]
	grep -q '^trace: 3 events' "$TOPO_DIR/t1.txt"
}

@test "trace: 2,000 DNS packets during a migration at 37 %: each decision matches lookup of its slot's version" {
	topo_kr ring stage dns -c "$TOPO_DIR/new.json" "${KI[@]}"
	topo_kr ring migrate dns --percent 37 "${KI[@]}"
	predict "$TOPO_DIR/c.json" dns "$TOPO_DIR/dns.keys" >"$TOPO_DIR/pred.old"
	predict "$TOPO_DIR/new.json" dns "$TOPO_DIR/dns.keys" >"$TOPO_DIR/pred.new"
	trace_start "$TOPO_DIR/t2.json" --service dns
	send dns "$TOPO_VIP4" 53 <(head -2000 "$TOPO_DIR/dns.keys")
	trace_wait
	topo_kr ring rollback dns "${KI[@]}"
	act=$(jq -r 'select(.slot != null and .service == "dns") | .slot' "$TOPO_DIR/t2.json" | sort | uniq -c | sort -rn | awk 'NR == 1 { print $2 }')
	# events of the active slot against the old config, of the staged slot against the new
	jq -c "select(.slot == $act)" "$TOPO_DIR/t2.json" >"$TOPO_DIR/t2.old"
	jq -c "select(.key_hex != null and .slot != $act)" "$TOPO_DIR/t2.json" >"$TOPO_DIR/t2.new"
	run check_events "$TOPO_DIR/t2.old" "$TOPO_DIR/pred.old"
	echo "old slot: $output"
	[ "$status" -eq 0 ]
	run check_events "$TOPO_DIR/t2.new" "$TOPO_DIR/pred.new"
	echo "staged slot: $output"
	[ "$status" -eq 0 ]
	n=$(wc -l <"$TOPO_DIR/t2.new")
	# about 37 % of the 2000 keys took the staged slot (3 sigma of a binomial: 65)
	[ "$n" -gt $((740 - 65)) ]
	[ "$n" -lt $((740 + 65)) ]
	# the two slots' generations differ
	[ "$(jq -r 'select(.generation != null and .key_hex != null) | "\(.slot) \(.generation)"' "$TOPO_DIR/t2.json" | sort -u | wc -l)" -eq 2 ]
}

@test "trace: 1 in 10 sampling of 6,000 packets within 3 sigma; filters (service, backend, verdict, key prefix) hold" {
	trace_start "$TOPO_DIR/t3.json" --sample 10 --service mc
	send mc "$TOPO_VIP4" 11211 "$TOPO_DIR/mc.keys" 2
	trace_wait
	n=$(grep -c '"key_hex"' "$TOPO_DIR/t3.json")
	echo "sampled $n of 6000 (expected 600, sigma 23.2)"
	[ "$n" -ge $((600 - 70)) ]
	[ "$n" -le $((600 + 70)) ]
	jq -e --argjson n "$n" 'select(.summary) | .summary.matched == $n and .summary.lost == 0' "$TOPO_DIR/t3.json"
	[ "$(jq -r 'select(.key_hex) | .service' "$TOPO_DIR/t3.json" | sort -u)" = mc ]
	# backend filter: only packets routed to b2
	b2="${TOPO_B4[2]}:53"
	trace_start "$TOPO_DIR/t4.json" --backend "$b2"
	send dns "$TOPO_VIP4" 53 <(head -900 "$TOPO_DIR/dns.keys")
	trace_wait
	[ "$(jq -r 'select(.key_hex) | .backend' "$TOPO_DIR/t4.json" | sort -u)" = "$b2" ]
	predict "$TOPO_DIR/c.json" dns <(head -900 "$TOPO_DIR/dns.keys") | awk -v b="$b2" '$2 == b' | wc -l >"$TOPO_DIR/nb2"
	[ "$(grep -c '"key_hex"' "$TOPO_DIR/t4.json")" -eq "$(cat "$TOPO_DIR/nb2")" ]
	# verdict filter: memcache packets without a key are dropped (policy), the others not traced
	trace_start "$TOPO_DIR/t5.json" --verdict dropped
	send raw "$TOPO_VIP4" 11211 0000000000010000626f67757320636f6d6d616e640d0a 50
	send mc "$TOPO_VIP4" 11211 <(head -200 "$TOPO_DIR/mc.keys")
	trace_wait
	[ "$(jq -r 'select(.key_hex) | "\(.verdict) \(.reason) \(.service)"' "$TOPO_DIR/t5.json" | sort | uniq -c | awk '{ print $1, $2, $3, $4 }')" = "50 dropped no_key mc" ]
	# key prefix: DNS names that start with the label "www"
	trace_start "$TOPO_DIR/t6.json" --service dns --key-prefix www
	send dns "$TOPO_VIP4" 53 <(head -400 "$TOPO_DIR/dns.keys")
	trace_wait
	[ "$(jq -r 'select(.key_hex) | .key' "$TOPO_DIR/t6.json" | grep -vc '^www\.')" = 0 ]
	[ "$(grep -c '"key_hex"' "$TOPO_DIR/t6.json")" -eq "$(head -400 "$TOPO_DIR/dns.keys" | grep -ic '^www\.')" ]
	# no reload: the program id did not change; off again
	topo_kr trace --status "${KI[@]}" | grep -q '^trace off'
}

@test "top: a planted hot key is reported first for its backend; the shares are the counters'" {
	{ head -1500 "$TOPO_DIR/dns.keys"; for _ in $(seq 1500); do echo hot.kr.test.; done; } | shuf >"$TOPO_DIR/hot.keys"
	hotb=$(predict "$TOPO_DIR/c.json" dns <(echo hot.kr.test.) | awk '{ print $2 }')
	topo_kr stats --json "${KI[@]}" >"$TOPO_DIR/s0.json"
	topo_kr top "${KI[@]}" --service dns --sample 5 --interval 6 --rounds 1 --json >"$TOPO_DIR/top.json" &
	pid=$!
	sleep 1.5
	PPS=5000 send dns "$TOPO_VIP4" 53 "$TOPO_DIR/hot.keys"
	wait "$pid"
	topo_kr stats --json "${KI[@]}" >"$TOPO_DIR/s1.json"
	cat "$TOPO_DIR/top.json"
	jq -e --arg b "$hotb" '.services[0].backends[] | select(.backend == $b) | .hot_keys[0].key == "hot.kr.test."' "$TOPO_DIR/top.json"
	# the hot key's estimate: about 1500 packets in the interval (sampled 1 in 5: 300 +- 3 sigma)
	jq -e --arg b "$hotb" '.services[0].backends[] | select(.backend == $b) | .hot_keys[0].sampled > 240 and .hot_keys[0].sampled < 360' "$TOPO_DIR/top.json"
	# traffic shares = the backends' counter differences over their sum
	run jq -rn --slurpfile a "$TOPO_DIR/s0.json" --slurpfile b "$TOPO_DIR/s1.json" --slurpfile t "$TOPO_DIR/top.json" '
		($a[0].backends | map({key: .address, value: .packets}) | from_entries) as $x |
		($b[0].backends | map({key: .address, value: .packets}) | from_entries) as $y |
		($t[0].services[0].backends | map(.backend)) as $bs |
		([$bs[] | $y[.] - $x[.]] | add) as $sum |
		$t[0].services[0].backends[] | "\(.backend) \(.traffic_share) \(($y[.backend] - $x[.backend]) / $sum)"'
	echo "$output"
	[ "$status" -eq 0 ]
	awk '{ d = $2 - $3; if (d < 0) d = -d; if (d > 1e-9) bad++ } END { exit bad }' <<<"$output"
	# traffic CV far above the ring's: hot keys dominate
	jq -e '.services[0].traffic_cv > .services[0].ring_cv and (.services[0].verdict | test("hot keys"))' "$TOPO_DIR/top.json"
	# the text view
	run -0 topo_kr top "${KI[@]}" --interval 0.5 --rounds 1
	assert_line --partial 'service dns'
}

@test "per-service counters: status, stats --json and Prometheus by the service's name, every packet once" {
	topo_kr stats --json "${KI[@]}" >"$TOPO_DIR/c0.json"
	send payload "$TOPO_VIP4" 7000 <(head -1000 "$TOPO_DIR/pl.keys")
	send raw "$TOPO_VIP4" 11211 0000000000010000626f67757320636f6d6d616e640d0a 30
	sleep 0.5
	topo_kr stats --json "${KI[@]}" >"$TOPO_DIR/c1.json"
	d() { jq -rn --slurpfile a "$TOPO_DIR/c0.json" --slurpfile b "$TOPO_DIR/c1.json" \
		"(\$b[0].service_counters[] | select(.name == \"$1\") | .$2) - (\$a[0].service_counters[] | select(.name == \"$1\") | .$2)"; }
	[ "$(d pl packets)" = 1000 ]
	[ "$(d pl routed)" = 1000 ]
	[ "$(d mc dropped)" = 30 ]
	[ "$(d mc dropped_no_key)" = 30 ]
	[ "$(d mc routed)" = 0 ]
	run -0 topo_kr status "${KI[@]}"
	assert_line --regexp '^counters of service pl \([0-9.]+:7000, id [0-9]+\): packets [0-9]+ routed [0-9]+ passed 0 dropped 0'
	assert_line --regexp '^service dns [0-9.]+:53/udp: key dns'
	run -0 topo_kr stats --prometheus "${KI[@]}"
	assert_line --regexp "^keyrouter_service_packets_total\{instance=\"$TOPO_INSTANCE\",service=\"mc\",outcome=\"dropped\"\} [0-9]+"
	p=$(grep "service=\"pl\",outcome=\"routed\"" <<<"$output" | awk '{ print $2 }')
	[ "$p" = "$(jq '.service_counters[] | select(.name == "pl") | .routed' "$TOPO_DIR/c1.json")" ]
	# rates under --watch (from the second round)
	PPS=200 send payload "$TOPO_VIP4" 7000 <(head -600 "$TOPO_DIR/pl.keys") &
	pid=$!
	run timeout 3.5 nsenter --net="/run/netns/$TOPO_R" "$TOPO_KEYROUTER" status "${KI[@]}" --watch 1
	wait "$pid"
	[ "$status" -eq 124 ]	# --watch runs until stopped
	assert_line --regexp '^  per second: packets [0-9.]+ routed'
	# pl received 200 packets/s: a round's rate of pl is near it (one round of the three)
	grep -A1 '^counters of service pl ' <<<"$output" | awk '/per second/ { print $4 }' >"$TOPO_DIR/rates"
	awk '$1 > 100 && $1 < 300 { ok++ } END { exit !ok }' "$TOPO_DIR/rates"
}
