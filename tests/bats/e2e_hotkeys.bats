#!/usr/bin/env bats
# Hot keys on real traffic (issue 28): 16 real memcached backends in namespaces, keyrouter
# in native XDP on the router (l2 forwarding), memcached UDP gets from 2,048 client
# sockets (tests/lib/hot_traffic.py): 70 % over 2,000 cold keys, 30 % on 3 planted hot
# keys.  Every cold key is first set through the router, so each backend's memcached holds
# the keys the unspilled ring gives it; a get through the router that misses afterwards
# is a key that moved.
#  - with `keyrouter balance --mode on` the busiest backend ends under C x its fair share
#    (the data path's own per-backend counters, C = 1.25);
#  - no cold key of a backend that was not overloaded moved (every miss belongs to a
#    backend that was above C x its share before);
#  - `--mode off` sends every key back (every get hits again; no spill, no replica left).
# Prints one line: hot keys: backends 16 busiest/fair before X after Y (bound C) keys moved M%

bats_require_minimum_version 1.5.0
load ../lib/e2e_common

TRAFFIC=$E2E_ROOT/tests/lib/hot_traffic.py
NCOLD=2000
BOUND=1.25
PPS=${KR_HOT_PPS:-4000}

setup_file() {
	e2e_require_keyrouter || return 0
	e2e_setup_file 16 || return 1
	topo_start_memcached || return 1
	e2e_config "$TOPO_DIR/l2.json" l2 "$(seq -s ' ' 1 16)" mc:memcache:11211
	e2e_load "$TOPO_DIR/l2.json" >"$TOPO_DIR/load.log" 2>&1 || { cat "$TOPO_DIR/load.log" >&2; return 1; }
}

teardown_file() {
	[ -n "${TOPO_DIR:-}" ] && [ -f "$TOPO_DIR/traffic.pid" ] && kill "$(cat "$TOPO_DIR/traffic.pid")" 2>/dev/null
	e2e_teardown_file
}
setup() { e2e_setup; }

# the program publishes spill and replicas (its hot-key map is pinned with its maps; a
# program without it fails the tests: spill ships)
has_spill() { [ -e "/sys/fs/bpf/keyrouter/$TOPO_INSTANCE/kr_hot_keys" ]; }

# per-backend packets of the data path: "INDEX PACKETS" for backends 1..16 (ring mc4)
packets() {
	local i map=""
	for ((i = 1; i <= TOPO_N; i++)); do map+="${TOPO_B4[i]}:$TOPO_MC_PORT $i "; done
	topo_kr stats --json --instance "$TOPO_INSTANCE" |
		jq -r '.backends[] | "\(.address) \(.packets)"' |
		awk -v map="$map" 'BEGIN { n = split(map, m, " "); for (j = 1; j < n; j += 2) idx[m[j]] = m[j + 1] }
			($1 in idx) { print idx[$1], $2 }' | sort -n
}

# measure SECONDS OUT: traffic running, the per-backend packets of SECONDS into OUT
measure() {
	packets >"$TOPO_DIR/m0" || return 1
	sleep "$1"
	packets >"$TOPO_DIR/m1" || return 1
	join "$TOPO_DIR/m0" "$TOPO_DIR/m1" | awk '{ print $1, $3 - $2 }' >"$2"
}

# busiest / fair of a measure file (equal weights: fair = total / 16)
ratio() { awk '{ t += $2; if ($2 > m) m = $2 } END { printf "%.2f\n", (t ? m * NR / t : 0) }' "$1"; }

traffic_start() {
	topo_spawn "$TOPO_C" "$TOPO_DIR/traffic.log" /usr/bin/python3 "$TRAFFIC" "$TOPO_VIP4" \
		$TOPO_MC_PORT --seconds 0 --pps "$PPS" --cold k $NCOLD --hot hot 3 --hot-share 0.3 --sockets 2048
	sleep 1
	pgrep -f "$TRAFFIC" | head -1 >"$TOPO_DIR/traffic.pid"
}

# cold keys that hit: "KEY" per line
hits() {
	topo_exec "$TOPO_C" /usr/bin/python3 "$E2E_LIB/mc.py" udp "$TOPO_VIP4" $TOPO_MC_PORT get k $NCOLD |
		awk 'NF == 2 && $1 ~ /^k-/ { print $1 }' | sort
}

@test "hot keys: controller on: busiest backend under C x its share, only overloaded backends' keys move" {
	has_spill || { echo "kr_hot_keys is not pinned: the program has no spill"; return 1; }
	# every cold key stored where the unspilled ring sends it
	run topo_exec "$TOPO_C" /usr/bin/python3 "$E2E_LIB/mc.py" udp "$TOPO_VIP4" $TOPO_MC_PORT set k $NCOLD
	[ "$status" -eq 0 ] || { echo "$output"; return 1; }
	seq -f "k-%g" 0 $((NCOLD - 1)) >"$TOPO_DIR/keys"
	e2e_predict "$TOPO_DIR/l2.json" mc4 "$TOPO_DIR/keys" | sort >"$TOPO_DIR/owner"
	[ "$(wc -l <"$TOPO_DIR/owner")" = $NCOLD ]
	hits >"$TOPO_DIR/hits0"
	[ "$(wc -l <"$TOPO_DIR/hits0")" = $NCOLD ] || { echo "only $(wc -l <"$TOPO_DIR/hits0") of $NCOLD keys hit before"; return 1; }

	traffic_start
	measure 4 "$TOPO_DIR/before"
	before=$(ratio "$TOPO_DIR/before")
	cat "$TOPO_DIR/before"
	# the planted keys overload at least one backend
	awk -v b=$BOUND 'BEGIN { r = ARGV[1] + 0; exit !(r > b) }' "$before"
	awk -v b=$BOUND '{ t += $2; v[$1] = $2 } END { for (i in v) if (v[i] > b * t / NR) print i }' \
		"$TOPO_DIR/before" | sort >"$TOPO_DIR/over"
	echo "overloaded before: $(tr '\n' ' ' <"$TOPO_DIR/over")"

	run topo_kr balance --ring mc4 --mode on --bound $BOUND --interval 3 --rounds 4 --sample 10 \
		--instance "$TOPO_INSTANCE"
	echo "$output"
	[ "$status" -eq 0 ]
	echo "$output" | grep -q "published"
	measure 10 "$TOPO_DIR/after"
	after=$(ratio "$TOPO_DIR/after")
	cat "$TOPO_DIR/after"
	kill "$(cat "$TOPO_DIR/traffic.pid")"
	rm -f "$TOPO_DIR/traffic.pid"

	# moved keys: gets that miss now; each must be a key of an overloaded backend
	hits >"$TOPO_DIR/hits1"
	sort "$TOPO_DIR/keys" >"$TOPO_DIR/keys.sorted"
	comm -23 "$TOPO_DIR/keys.sorted" "$TOPO_DIR/hits1" >"$TOPO_DIR/missed"
	join "$TOPO_DIR/missed" "$TOPO_DIR/owner" | awk '{ print $2 }' | sort -u >"$TOPO_DIR/moved_from"
	echo "keys moved from backends: $(tr '\n' ' ' <"$TOPO_DIR/moved_from")"
	bad=$(comm -23 "$TOPO_DIR/moved_from" "$TOPO_DIR/over" | tr '\n' ' ')
	[ -z "$bad" ] || { echo "keys of backends that were not overloaded moved: $bad"; return 1; }
	moved=$(awk -v m="$(wc -l <"$TOPO_DIR/missed")" -v n=$NCOLD 'BEGIN { printf "%.1f", 100 * m / n }')
	echo "# hot keys: backends 16 busiest/fair before $before after $after (bound $BOUND) keys moved $moved%" >&3
	awk -v r="$after" -v b=$BOUND 'BEGIN { exit !(r <= b) }'
	echo "$after" >"$TOPO_DIR/after.ratio"
}

@test "hot keys: controller off sends every key back (no spill, no replica left)" {
	has_spill || { echo "kr_hot_keys is not pinned: the program has no spill"; return 1; }
	run topo_kr balance --ring mc4 --mode off --instance "$TOPO_INSTANCE"
	echo "$output"
	[ "$status" -eq 0 ]
	hits >"$TOPO_DIR/hits2"
	[ "$(wc -l <"$TOPO_DIR/hits2")" = $NCOLD ] || { echo "$(wc -l <"$TOPO_DIR/hits2") of $NCOLD keys hit after off"; return 1; }
	run topo_kr balance --ring mc4 --mode advise --once --no-replicas --min-packets 0 --json \
		--interval 0.2 --instance "$TOPO_INSTANCE"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(jq '[.backends[].spill] | add' <<<"$output")" = 0 ]
	[ "$(jq '[.hot_keys[] | select(.replicas > 0)] | length' <<<"$output")" = 0 ]
}

@test "hot keys: balance refuses bad input with a clear error and changes nothing" {
	run topo_kr balance --mode on --instance "$TOPO_INSTANCE"
	[ "$status" -eq 2 ]
	[[ $output == *"--ring NAME"* ]]
	run topo_kr balance --ring mc4 --mode sometimes --instance "$TOPO_INSTANCE"
	[ "$status" -eq 2 ]
	[[ $output == *"expected off, advise or on"* ]]
	run topo_kr balance --ring mc4 --bound 1 --instance "$TOPO_INSTANCE"
	[ "$status" -eq 2 ]
	[[ $output == *"bound"* ]]
	run topo_kr balance --ring mc4 --hysteresis 0.2 --instance "$TOPO_INSTANCE"
	[ "$status" -eq 2 ]
	[[ $output == *"hysteresis 0.2"* ]]
	run topo_kr balance --ring nosuch --mode on --instance "$TOPO_INSTANCE"
	[ "$status" -eq 1 ]
	[[ $output == *"no ring 'nosuch'"* ]]
	# off with nothing to take back: says so, in JSON
	run topo_kr balance --ring mc4 --mode off --json --instance "$TOPO_INSTANCE"
	[ "$status" -eq 0 ]
	[ "$(jq -r '"\(.mode) \(.spill_reset) \(.replicas_removed)"' <<<"$output")" = "off 0 0" ]
	# nothing was published by any of them
	run topo_kr balance --ring mc4 --mode advise --once --no-replicas --min-packets 0 --json \
		--interval 0.2 --instance "$TOPO_INSTANCE"
	[ "$status" -eq 0 ]
	[ "$(jq '[.backends[].spill] | add' <<<"$output")" = 0 ]
}
