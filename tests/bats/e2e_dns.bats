#!/usr/bin/env bats
# DNS through keyrouter, end to end: real unbound on 3 backends (each answers any name under
# kr.test with A 10.250.0.I / TXT "bI"), real dig and dnsperf on the client, keyrouter in
# native XDP on the router's ingress interface, `dns` key extractor, forwarding `l2` (direct
# server return) and then `ipip` (the same rings; services re-applied).  Every answer must
# come from the backend `keyrouter lookup` predicts for its name; dnsperf must lose nothing.
# VIP packets keyrouter does not route are dropped by the router's kernel (blackhole route),
# so a packet keyrouter passes shows up as lost, never as served.

load ../lib/e2e_common

setup_file() {
	e2e_require_keyrouter || return 0
	e2e_setup_file 3 || return 1
	topo_start_dns && topo_decap || return 1
	e2e_config "$TOPO_DIR/l2.json" l2 "1 2 3" dns:dns:53
	e2e_config "$TOPO_DIR/ipip.json" ipip "1 2 3" dns:dns:53
	e2e_names 600 n >"$TOPO_DIR/names"
	e2e_load "$TOPO_DIR/l2.json" >"$TOPO_DIR/load.log" 2>&1 || { cat "$TOPO_DIR/load.log" >&2; return 1; }
}

teardown_file() { e2e_teardown_file; }
setup() { e2e_setup; }

dns_check() { # SERVICE VIP CONFIG
	e2e_predict "$3" "$1" "$TOPO_DIR/names" >"$TOPO_DIR/pred" || return 1
	e2e_dns_batch "$2" "$TOPO_DIR/names" >"$TOPO_DIR/ans"
	e2e_compare "$TOPO_DIR/pred" "$TOPO_DIR/ans"
}

@test "dns l2 IPv4: 600 names, every answer from the backend keyrouter lookup predicts" {
	run dns_check dns4 "$TOPO_VIP4" "$TOPO_DIR/l2.json"
	echo "$output"
	[ "$status" -eq 0 ]
	# all three backends got keys (the ring spreads them)
	[ "$(grep -c 'answered [1-9]' <<<"$output")" -ge 4 ]
}

@test "dns l2 IPv6: 600 names, every answer from the predicted backend" {
	run dns_check dns6 "$TOPO_VIP6" "$TOPO_DIR/l2.json"
	echo "$output"
	[ "$status" -eq 0 ]
}

# per-backend packet counters of keyrouter, "ADDRESS PACKETS" lines
kr_backend_packets() {
	topo_kr stats --json --instance "$TOPO_INSTANCE" | jq -r '.backends[] | "\(.address) \(.packets)"'
}

@test "dns l2: dnsperf 100k queries through keyrouter, none lost; keyrouter's per-backend counters rise by exactly the predicted counts" {
	kr_backend_packets >"$TOPO_DIR/stats.before"
	e2e_predict "$TOPO_DIR/l2.json" dns4 "$TOPO_DIR/names" >"$TOPO_DIR/pred"
	run e2e_dnsperf "$TOPO_VIP4" "$TOPO_DIR/names" 167
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(awk '/^sent/ { print $2 }' <<<"$output")" -ge 100000 ]
	kr_backend_packets >"$TOPO_DIR/stats.after"
	run awk -v runs=167 -v b4="${TOPO_B4[*]}" '
		FILENAME ~ /pred$/ { want[$2] += runs; next }
		FILENAME ~ /before$/ { before[$1] = $2; next }
		{ got[$1] = $2 - before[$1] }
		END {
			n = split(b4, a, " ")
			for (i = 1; i <= n; i++) {
				g = got[a[i] ":53"] + 0
				printf "b%d %s: counter +%d, predicted %d\n", i, a[i], g, want[i]
				if (g != want[i]) bad++
			}
			exit bad > 0
		}' "$TOPO_DIR/pred" "$TOPO_DIR/stats.before" "$TOPO_DIR/stats.after"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "dns ipip: apply switches the services to ipip; IPv4 and IPv6 answers from the predicted backends" {
	run topo_kr apply -c "$TOPO_DIR/ipip.json" --instance "$TOPO_INSTANCE"
	echo "$output"
	[ "$status" -eq 0 ]
	run dns_check dns4 "$TOPO_VIP4" "$TOPO_DIR/ipip.json"
	echo "$output"
	[ "$status" -eq 0 ]
	run dns_check dns6 "$TOPO_VIP6" "$TOPO_DIR/ipip.json"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "dns ipip: dnsperf 100k queries over IPv6 (IPv6-in-IPv6), none lost" {
	run e2e_dnsperf "$TOPO_VIP6" "$TOPO_DIR/names" 167
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(awk '/^sent/ { print $2 }' <<<"$output")" -ge 100000 ]
}
