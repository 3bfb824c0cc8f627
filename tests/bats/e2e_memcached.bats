#!/usr/bin/env bats
# memcached over UDP through keyrouter, end to end: real memcached (TCP and UDP) on 3
# backends, the `memcache` key extractor (first key of get/set/...), native XDP.  Sets go
# through the router over UDP; then every backend is asked directly over TCP (its own
# address, not the VIP: keyrouter only handles the UDP service) which keys it holds.  Each
# key must be on exactly the backend `keyrouter lookup` predicts, and UDP gets through the
# router must find every value again.

load ../lib/e2e_common

setup_file() {
	e2e_require_keyrouter || return 0
	e2e_setup_file 3 || return 1
	topo_start_memcached && topo_decap || return 1
	e2e_config "$TOPO_DIR/l2.json" l2 "1 2 3" mc:memcache:11211
	e2e_config "$TOPO_DIR/ipip.json" ipip "1 2 3" mc:memcache:11211
	e2e_load "$TOPO_DIR/l2.json" >"$TOPO_DIR/load.log" 2>&1 || { cat "$TOPO_DIR/load.log" >&2; return 1; }
}

teardown_file() { e2e_teardown_file; }
setup() { e2e_setup; }

mc_check() { # VIP SERVICE CONFIG PREFIX N
	local vip=$1 svc=$2 cfg=$3 prefix=$4 n=$5
	topo_exec "$TOPO_C" python3 "$E2E_LIB/mc.py" udp "$vip" $TOPO_MC_PORT set "$prefix" "$n" || return 1
	seq -f "$prefix-%g" 0 $((n - 1)) >"$TOPO_DIR/mc.keys"
	e2e_predict "$cfg" "$svc" "$TOPO_DIR/mc.keys" >"$TOPO_DIR/mc.pred" || return 1
	topo_exec "$TOPO_C" python3 "$E2E_LIB/mc.py" locate $TOPO_MC_PORT "$prefix" "$n" \
		"${TOPO_B4[@]}" >"$TOPO_DIR/mc.where" || return 1
	# exactly one copy of each key
	[ "$(awk '{ print $1 }' "$TOPO_DIR/mc.where" | sort | uniq -d | wc -l)" = 0 ] ||
		{ echo "keys stored on several backends"; return 1; }
	e2e_compare "$TOPO_DIR/mc.pred" "$TOPO_DIR/mc.where" || return 1
	local got
	got=$(topo_exec "$TOPO_C" python3 "$E2E_LIB/mc.py" udp "$vip" $TOPO_MC_PORT get "$prefix" "$n") || return 1
	echo "gets through the router: $(tail -1 <<<"$got")"
	[ "$(grep -c "^$prefix-[0-9]* $prefix-[0-9]*\$" <<<"$got")" = "$n" ]
}

@test "memcached l2 IPv4: 300 UDP sets each stored on the predicted backend only (asked over TCP), UDP gets find all" {
	run mc_check "$TOPO_VIP4" mc4 "$TOPO_DIR/l2.json" a 300
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "memcached ipip IPv6: 300 UDP sets each stored on the predicted backend only, UDP gets find all" {
	run topo_kr apply -c "$TOPO_DIR/ipip.json" --instance "$TOPO_INSTANCE"
	echo "$output"
	[ "$status" -eq 0 ]
	run mc_check "$TOPO_VIP6" mc6 "$TOPO_DIR/ipip.json" b 300
	echo "$output"
	[ "$status" -eq 0 ]
}
