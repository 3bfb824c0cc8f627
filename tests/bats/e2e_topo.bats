#!/usr/bin/env bats
# The end-to-end topology itself (tests/lib/topo.sh), WITHOUT keyrouter: the router's kernel
# forwards the VIP to one backend by a static route.  If this file fails, the keyrouter
# end-to-end tests cannot tell anything; if it passes, they differ from it only by
# keyrouter.  Real unbound, memcached and gtlsserver on every backend, real dig/kdig,
# dnsperf and gtlsclient on the client.

bats_require_minimum_version 1.5.0
load ../lib/e2e_common

setup_file() {
	e2e_setup_file 3 || return 1
	topo_start_dns && topo_start_memcached && topo_start_quic && topo_decap
}

teardown_file() {
	e2e_teardown_file
}

setup() {
	e2e_setup
}

@test "topo: every backend answers DNS on the VIP over IPv4 and IPv6, routed by the kernel" {
	local i out
	for i in 1 2 3; do
		topo_vip_route backend "$i"
		out=$(topo_exec "$TOPO_C" dig +short +time=2 +tries=1 @$TOPO_VIP4 "x$i.$TOPO_DNS_ZONE" TXT)
		[ "$out" = "\"b$i\"" ] || { echo "IPv4 via b$i: '$out'"; return 1; }
		out=$(topo_exec "$TOPO_C" kdig +short +time=2 +retry=0 @$TOPO_VIP6 "y$i.$TOPO_DNS_ZONE" A)
		[ "$out" = "10.250.0.$i" ] || { echo "IPv6 via b$i: '$out'"; return 1; }
	done
}

@test "topo: dnsperf 20k queries through the router's kernel route, none lost" {
	topo_vip_route backend 2
	e2e_names 1000 q >"$TOPO_DIR/perf.txt"
	run e2e_dnsperf "$TOPO_VIP4" "$TOPO_DIR/perf.txt" 20
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"sent 20000 lost 0"* ]]
}

@test "topo: memcached over UDP through the router lands on the routed backend only (checked over TCP)" {
	# bats 1.8's `run -N` clobbers a caller's $i: another name
	local be
	for be in 3; do
		topo_vip_route backend "$be"
		run topo_exec "$TOPO_C" python3 "$E2E_LIB/mc.py" udp $TOPO_VIP4 $TOPO_MC_PORT set "k$be" 50
		echo "$output"
		[ "$status" -eq 0 ]
		run -0 topo_exec "$TOPO_C" python3 "$E2E_LIB/mc.py" locate $TOPO_MC_PORT "k$be" 50 "${TOPO_B4[@]}"
		awk '{ print "on b" $2 }' <<<"$output" | sort | uniq -c
		[ "$(grep -c " $be\$" <<<"$output")" = 50 ]
		[ "$(wc -l <<<"$output")" = 50 ]
	done
	topo_vip_route backend 3
	run topo_exec "$TOPO_C" python3 "$E2E_LIB/mc.py" udp $TOPO_VIP6 $TOPO_MC_PORT get k3 50
	[ "$status" -eq 0 ]
	[ "$(grep -c '^k3-' <<<"$output")" = 50 ]
}

@test "topo: QUIC handshakes and file transfers from the VIP (IPv4 and IPv6)" {
	topo_vip_route backend 2
	run -0 e2e_quic_many "$TOPO_VIP4" 1
	echo "$output"
	[[ "$output" == "b2 "*" BLOB_OK "* ]]
	run -0 e2e_quic_many "$TOPO_VIP6" 1
	echo "$output"
	[[ "$output" == "b2 "*" BLOB_OK "* ]]
}

@test "topo: backends decapsulate ipip (4in4, 6in4, 4in6, 6in6) and answer the client directly" {
	local i sport=40000 case outer vip src recv=() send=() expect=()
	topo_vip_route blackhole
	for i in 1 2 3; do
		for case in 4:4 4:6 6:4 6:6; do
			outer=${case%:*} vip=${case#*:}
			[ "$outer" = 4 ] && outer=${TOPO_B4[i]} || outer=${TOPO_B6[i]}
			if [ "$vip" = 4 ]; then vip=$TOPO_VIP4 src=$TOPO_CLIENT4; else vip=$TOPO_VIP6 src=$TOPO_CLIENT6; fi
			sport=$((sport + 1))
			recv+=("$src,$sport")
			send+=("$outer,$src,$sport,$vip,d$i.$TOPO_DNS_ZONE")
			expect+=("$sport from $vip: b$i")
		done
	done
	topo_exec "$TOPO_C" python3 "$E2E_LIB/ipip.py" recv "${recv[@]}" >"$TOPO_DIR/ipip.out" &
	local rpid=$! w
	for ((w = 0; w < 200; w++)); do grep -q ready "$TOPO_DIR/ipip.out" && break; sleep 0.05; done
	topo_exec "$TOPO_R" python3 "$E2E_LIB/ipip.py" send "${send[@]}"
	wait $rpid || true
	cat "$TOPO_DIR/ipip.out"
	run -0 cat "$TOPO_DIR/ipip.out"
	[ "$output" = "$(printf '%s\n' ready "${expect[@]}")" ]
}

@test "topo: a script killed with SIGTERM mid-run removes its namespaces, pins and processes" {
	local script=$BATS_TEST_TMPDIR/victim.sh out=$BATS_TEST_TMPDIR/victim.out pid prefix
	cat >"$script" <<-EOS
	source "$E2E_LIB/e2e_common.bash"
	export TOPO_QUIET=1
	topo_init "kr-e2e-\$\$" 2 || exit 1
	topo_trap
	topo_create && topo_start_dns || exit 1
	e2e_config "\$TOPO_DIR/c.json" l2 "1 2" dns:dns:53
	e2e_load "\$TOPO_DIR/c.json" >/dev/null 2>&1 && echo loaded
	echo "ready \$TOPO_PREFIX \$TOPO_INSTANCE"
	while :; do sleep 0.2; done   # (bash runs a trap only once a foreground command ends)
	EOS
	bash "$script" >"$out" 2>&1 3>&- &
	pid=$!
	local w
	for ((w = 0; w < 600; w++)); do grep -q '^ready' "$out" && break; sleep 0.1; done
	cat "$out"
	read -r _ prefix inst < <(grep '^ready' "$out")
	[ -n "$prefix" ]
	[ "$(ip netns list | grep -c "^$prefix-")" = 5 ]   # c r sw b1 b2
	if grep -q loaded "$out"; then [ -d "/sys/fs/bpf/keyrouter/$inst" ]; fi
	kill -TERM $pid
	wait $pid || true
	[ "$(ip netns list | grep -c "^$prefix-")" = 0 ]
	[ ! -e "/sys/fs/bpf/keyrouter/$inst" ]
	! pgrep -f "/tmp/$prefix" >/dev/null
}

@test "topo: teardown removes namespaces, processes and the state directory" {
	local pids dir=$TOPO_DIR prefix=$TOPO_PREFIX
	pids=$(for ns in "${TOPO_B[@]}"; do ip netns pids "$ns"; done)
	[ -n "$pids" ]
	topo_teardown
	run -0 ip netns list
	[[ "$output" != *"$prefix"* ]]
	for p in $pids; do [ ! -d "/proc/$p" ] || { echo "pid $p survived"; return 1; }; done
	[ ! -e "$dir" ]
}
