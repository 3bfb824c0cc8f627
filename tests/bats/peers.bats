#!/usr/bin/env bats
# The peer benchmark's correctness half (scripts/bench.d/peers.sh), without timing: real
# unbound on 5 backends (4 serve, the 5th is added), keyrouter in native XDP and the
# peers an operator would deploy instead (dnsdist chashed, nginx stream hash consistent,
# nftables jhash DNAT) in the router's namespace, real queries from the client
# (tests/lib/peers_probe.py: each answer names its backend).
#  - keyrouter: every name / client port answered by the backend `keyrouter lookup`
#    predicts, with 4 backends and with the fifth added; about 1/5 of the keys move, all
#    to the new backend
#  - nginx: every client port answered where keyrouter's v1 ring puts nginx's key (the text
#    $remote_addr$remote_port), with 4 and 5 backends: the rings are the same; nginx and
#    keyrouter's tuple key agree on exactly the ports for which lookup of the two key
#    forms agrees (the key bytes differ)
#  - dnsdist: about 1/5 of the names move to the fifth backend, none elsewhere
#  - nftables jhash mod N: about 4/5 of the keys move, most to an old backend

load ../lib/peers

PEERS_T_KEYS=3000

setup_file() {
	e2e_require_keyrouter || return 0
	local miss
	miss=$(peers_missing)
	[ -z "$miss" ] || { echo "peers: missing: $miss (scripts/deps.sh installs the packages)" >&2; return 1; }
	TOPO_QUIET=1 peers_setup "kr-e2e-$$" || return 1
	peers_nginx_keys 20000 $PEERS_T_KEYS >"$TOPO_DIR/nginx.keys"
	awk '{ print $1 }' "$TOPO_DIR/nginx.keys" >"$TOPO_DIR/tuple.keys"
}

teardown_file() { e2e_teardown_file; }
setup() { e2e_setup; }

# share_near M K LO HI: M of K keys moved, the share within [LO, HI]
share_near() {
	echo "moved $1 of $2 (share $(awk -v m="$1" -v k="$2" 'BEGIN { printf "%.3f", m / k }'), expected $3 .. $4)"
	awk -v m="$1" -v k="$2" -v lo="$3" -v hi="$4" 'BEGIN { exit !(k > 0 && m / k >= lo && m / k <= hi) }'
}

# moved_check SYSTEM: "keys K moved M to_new T lost L" of SYSTEM.4 -> SYSTEM.5; sets K M T L
moved_check() {
	read -r _ K _ M _ T _ L < <(peers_moved "$TOPO_DIR/$1.4" "$TOPO_DIR/$1.5")
	echo "$1: $K keys answered both times, $M moved, $T of them to the fifth backend, $L unanswered"
}

@test "keyrouter dns: every name answered by the predicted backend, with 4 backends and with a fifth; about 1/5 move, all to it" {
	peers_consistency keyrouter $PEERS_T_KEYS
	for n in 4 5; do
		peers_predict "$TOPO_DIR/keyrouter$n.json" dns4 dns "$TOPO_DIR/keys.names" >"$TOPO_DIR/kr.pred$n"
		run e2e_compare "$TOPO_DIR/kr.pred$n" "$TOPO_DIR/keyrouter.$n"
		echo "$n backends: $output"
		[ "$status" -eq 0 ]
	done
	moved_check keyrouter
	[ "$K" -eq $PEERS_T_KEYS ]
	[ "$L" -eq 0 ]
	[ "$M" -eq "$T" ]
	share_near "$M" "$K" 0.13 0.27
}

@test "keyrouter tuple (v1 ring): every client port answered by the predicted backend, 4 and 5 backends; about 1/5 move, all to the fifth" {
	peers_consistency keyrouter-tuple $PEERS_T_KEYS
	for n in 4 5; do
		peers_predict "$TOPO_DIR/keyrouter-tuple$n.json" tup4 tuple "$TOPO_DIR/tuple.keys" >"$TOPO_DIR/krt.pred$n"
		run e2e_compare "$TOPO_DIR/krt.pred$n" "$TOPO_DIR/keyrouter-tuple.$n"
		echo "$n backends: $output"
		[ "$status" -eq 0 ]
	done
	moved_check keyrouter-tuple
	[ "$K" -eq $PEERS_T_KEYS ]
	[ "$M" -eq "$T" ]
	share_near "$M" "$K" 0.13 0.27
}

@test "nginx hash \$remote_addr\$remote_port consistent: every port answered where keyrouter's v1 ring puts nginx's key, 4 and 5 backends" {
	peers_consistency nginx $PEERS_T_KEYS
	for n in 4 5; do
		peers_predict "$TOPO_DIR/keyrouter-tuple$n.json" tup4 payload "$TOPO_DIR/nginx.keys" >"$TOPO_DIR/nginx.pred$n"
		run e2e_compare "$TOPO_DIR/nginx.pred$n" "$TOPO_DIR/nginx.$n"
		echo "$n backends: $output"
		[ "$status" -eq 0 ]
	done
	moved_check nginx
	[ "$K" -eq $PEERS_T_KEYS ]
	[ "$M" -eq "$T" ]
	share_near "$M" "$K" 0.13 0.27
}

@test "nginx and keyrouter's tuple key: the same backend for exactly the ports where the two key forms look up alike" {
	[ -s "$TOPO_DIR/nginx.4" ] && [ -s "$TOPO_DIR/keyrouter-tuple.4" ] || skip "needs the two tests above"
	read -r _ k _ same < <(peers_agree "$TOPO_DIR/nginx.4" "$TOPO_DIR/keyrouter-tuple.4")
	read -r _ pk _ psame < <(peers_agree "$TOPO_DIR/nginx.pred4" "$TOPO_DIR/krt.pred4")
	echo "answers: $same of $k ports on the same backend; lookup of the two key forms: $psame of $pk"
	[ "$k" -eq $PEERS_T_KEYS ]
	[ "$same" -eq "$psame" ]
	# and the two key forms are not the same bytes: not every port agrees
	[ "$same" -lt "$k" ]
}

@test "dnsdist chashed (fixed server ids): about 1/5 of the names move when a fifth backend is added, all to it" {
	peers_consistency dnsdist $PEERS_T_KEYS
	moved_check dnsdist
	[ "$K" -eq $PEERS_T_KEYS ]
	[ "$L" -eq 0 ]
	[ "$M" -eq "$T" ]
	# every backend got names
	[ "$(awk '{ print $2 }' "$TOPO_DIR/dnsdist.4" | sort -u | wc -l)" -eq 4 ]
	share_near "$M" "$K" 0.13 0.27
}

@test "nftables jhash mod N: about 4/5 of the client ports move when a fifth backend is added, most to an old backend" {
	peers_consistency nftables $PEERS_T_KEYS
	moved_check nftables
	[ "$K" -eq $PEERS_T_KEYS ]
	[ "$L" -eq 0 ]
	[ "$(awk '{ print $2 }' "$TOPO_DIR/nftables.4" | sort -u | wc -l)" -eq 4 ]
	share_near "$M" "$K" 0.7 0.9
	# a key keeps its backend only when h mod 4 = h mod 5: of those that move, 3/4 go to
	# one of the four old backends
	share_near $((M - T)) "$M" 0.6 0.9
}

@test "direct: the VIP routed per source port spreads dnsperf's sockets evenly over the four backends, none lost" {
	peers_up direct 4
	local x0 x1
	x0=$(ip netns exec "$TOPO_SW" cat /sys/class/net/s{1,2,3,4}/statistics/tx_packets | paste -sd' ')
	awk '{ print $1 " A" }' "$TOPO_DIR/keys.names" >"$TOPO_DIR/dnsperf.in"
	# the path answers before dnsperf starts (a query per backend's port range)
	run peers_direct_answer
	echo "$output"
	[ "$status" -eq 0 ]
	# Bounded by dnsperf's own clock: -n alone ends only when every query is answered or
	# has waited -t (5 s), with at most -q in flight: were the answers to stop, the 12,000
	# queries would take 12000 / 64 x 5 s = 16 minutes (the run of 16:17 that "hung").
	# -l 20 stops sending after 20 s (a run takes about 1 s): then at most 5 s more.  The
	# timeout is only a backstop, with SIGINT: dnsperf still prints its statistics.
	run topo_exec "$TOPO_C" timeout -s INT -k 5 60 dnsperf -s "$TOPO_VIP4" -d "$TOPO_DIR/dnsperf.in" \
		-n 4 -l 20 -c "$PEERS_SOCKETS" -T "$PEERS_THREADS" -q 64 -x "$PEERS_PORT0"
	peers_down direct
	x1=$(ip netns exec "$TOPO_SW" cat /sys/class/net/s{1,2,3,4}/statistics/tx_packets | paste -sd' ')
	echo "$output" | grep -E 'Testing complete|Queries (sent|completed|lost)|Run time'
	echo "packets to b1..b4: $(awk -v a="$x0" -v b="$x1" 'BEGIN { split(a, p, " "); split(b, q, " "); for (i = 1; i <= 4; i++) printf "%d ", q[i] - p[i] }')"
	[ "$status" -eq 0 ]
	# every query sent (not stopped by -l), every one answered
	grep -q "Queries sent: *$((4 * PEERS_T_KEYS))\$" <<<"$output"
	grep -q 'Queries lost: *0 ' <<<"$output"
	# each backend's port on the bridge passed the queries of its sockets: a quarter each
	run awk -v a="$x0" -v b="$x1" -v n=$((4 * PEERS_T_KEYS)) 'BEGIN {
		split(a, p, " "); split(b, q, " ")
		for (i = 1; i <= 4; i++) { d = q[i] - p[i]; printf "b%d %d\n", i, d; if (d < n / 4 * 0.9 || d > n / 4 * 1.1 + 100) bad++ }
		exit bad > 0 }'
	echo "$output"
	[ "$status" -eq 0 ]
}
