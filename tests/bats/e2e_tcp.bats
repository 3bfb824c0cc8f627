#!/usr/bin/env bats
# DNS over TCP through keyrouter, end to end (issue 33, first part): real unbound on 3
# backends, real dig on the client, keyrouter in TC mode (the program that routes TCP:
# docs/datapath.md "TCP") with a dns service (udp+tcp by default) forwarded l2.  Each TCP
# query comes from its own source port, so each is a new flow that the ring routes by its
# tuple: it must be answered by the backend `keyrouter lookup` predicts for that address and
# port (`keyrouter lookup --service dnsN --tcp ADDR:PORT`).
# Every segment after the SYN follows the flow table (the counters say so).  Long-lived
# connections (tests/lib/tcp_hold.py) stay on their backend through a drain of it; a backend
# marked down loses exactly its connections.

load ../lib/e2e_common

setup_file() {
	e2e_require_keyrouter || return 0
	e2e_setup_file 3 || return 1
	topo_start_dns || return 1
	e2e_config "$TOPO_DIR/l2.json" l2 "1 2 3" dns:dns:53
	# e2e_config says "udp": a dns service takes udp+tcp by default
	sed -i 's/, "protocol": "udp",/,/' "$TOPO_DIR/l2.json" || return 1
	e2e_load "$TOPO_DIR/l2.json" tc >"$TOPO_DIR/load.log" 2>&1 || { cat "$TOPO_DIR/load.log" >&2; return 1; }
}

teardown_file() { e2e_teardown_file; }
setup() { e2e_setup; }

# tcp_batch CLIENT VIP FIRSTPORT N: N queries over TCP, query i from CLIENT port FIRSTPORT+i;
# prints "CLIENT:PORT BACKEND_INDEX" per answer (the A record 10.250.0.I names backend I).
tcp_batch() {
	local c=$1 vip=$2 p0=$3 n=$4 i
	for ((i = 0; i < n; i++)); do
		printf -- '-b %s#%d @%s +tcp +noall +answer +time=2 +tries=1 t%d.kr.test A\n' "$c" $((p0 + i)) "$vip" $((p0 + i))
	done >"$TOPO_DIR/tcp.batch"
	topo_exec "$TOPO_C" dig +tcp -f "$TOPO_DIR/tcp.batch" 2>/dev/null |
		awk -v c="$c" '$4 == "A" && $5 ~ /^10\.250\.0\./ { split($5, a, "."); n = $1; sub(/^t/, "", n); sub(/\..*/, "", n); print n, a[4] }' |
		while read -r port idx; do
			case $c in *:*) echo "[$c]:$port $idx" ;; *) echo "$c:$port $idx" ;; esac
		done
}

tcp_check() { # CLIENT VIP SERVICE FIRSTPORT N
	local i
	for ((i = 0; i < $5; i++)); do
		case $1 in *:*) echo "[$1]:$(($4 + i))" ;; *) echo "$1:$(($4 + i))" ;; esac
	done >"$TOPO_DIR/tcp.keys"
	e2e_predict "$TOPO_DIR/l2.json" "$3" "$TOPO_DIR/tcp.keys" --tcp >"$TOPO_DIR/pred" || return 1
	tcp_batch "$1" "$2" "$4" "$5" >"$TOPO_DIR/ans"
	e2e_compare "$TOPO_DIR/pred" "$TOPO_DIR/ans"
}

@test "dns over tcp (tc mode), IPv4: 300 queries, each from its own port, answered by the backend lookup predicts for its tuple; segments after the SYN follow the flow table" {
	run tcp_check "$TOPO_CLIENT4" "$TOPO_VIP4" dns4 40000 300
	echo "$output"
	[ "$status" -eq 0 ]
	grep -qx 'keys 300 answered 300 matching 300 lost 0 wrong 0' <<<"$output"
	[ "$(grep -c 'answered [1-9]' <<<"$output")" -ge 4 ]	# all three backends got flows
	# every flow was written once (its SYN), promoted once (its first ACK), then followed
	bpftool map dump pinned "/sys/fs/bpf/keyrouter/$TOPO_INSTANCE/kr_flow_stats" \
		>"$BATS_TEST_TMPDIR/fs.json"
	run python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
t = {}
for e in d:
    for c in e["values"]:
        for k, v in c["value"].items():
            t[k] = t.get(k, 0) + v
print("flow stats", t)
# only the SYNs were routed by the ring, each wrote its embryonic entry, each flow was
# promoted by its ACK, and every later segment followed its entry
assert t["syn_inserts"] == 300 and t["promoted"] == 300 and t["ring"] == 300, t
assert t["hits"] >= 2 * 300 and t["down"] == 0, t' "$BATS_TEST_TMPDIR/fs.json"
	echo "$output"
	[ "$status" -eq 0 ]
	# status says the same: 300 established entries (FIN does not free them), none evicted
	run topo_kr status --json --instance "$TOPO_INSTANCE"
	[ "$status" -eq 0 ]
	run /usr/bin/python3 -c 'import json, sys
f = json.loads(sys.stdin.read())["tcp_flows"]
print(f)
assert f["established"] == 300 and f["inserts"] == 300 and f["evicted"] == 0, f
assert f["embryonic"] == 0 and f["embryonic_inserts"] == 300 and f["embryonic_evicted"] == 0, f' <<<"$output"
	echo "$output"
	[ "$status" -eq 0 ]
	topo_kr status --instance "$TOPO_INSTANCE" | grep -q '^tcp flows: established 300 of 131072 (inserts 300, '
	# and Prometheus (promtool checks the exposition in prometheus.bats)
	run topo_kr status --prometheus --instance "$TOPO_INSTANCE"
	[ "$status" -eq 0 ]
	grep -qx "keyrouter_tcp_flows{keyrouter_instance=\"$TOPO_INSTANCE\",table=\"established\"} 300" <<<"$output"
	grep -qx "keyrouter_tcp_flow_inserts_total{keyrouter_instance=\"$TOPO_INSTANCE\",table=\"embryonic\"} 300" <<<"$output"
	grep -qx "keyrouter_tcp_flow_evictions{keyrouter_instance=\"$TOPO_INSTANCE\",table=\"established\"} 0" <<<"$output"
}

@test "dns over tcp (tc mode), IPv6: 200 queries, each answered by the backend lookup predicts for its tuple" {
	run tcp_check "$TOPO_CLIENT6" "$TOPO_VIP6" dns6 41000 200
	echo "$output"
	[ "$status" -eq 0 ]
	grep -qx 'keys 200 answered 200 matching 200 lost 0 wrong 0' <<<"$output"
}

@test "dns over udp still by name in tc mode (udp+tcp service): dig answers" {
	run topo_exec "$TOPO_C" dig @"$TOPO_VIP4" +noall +answer +time=2 +tries=1 www.kr.test A
	echo "$output"
	[ "$status" -eq 0 ]
	grep -qE 'A[[:space:]]+10\.250\.0\.[123]' <<<"$output"
}

@test "24 long-lived TCP connections (one query every 100 ms each): a drain keeps every one on its backend; a backend marked down moves exactly its connections" {
	local out="$TOPO_DIR/hold" pid
	# 24: unbound serves 10 TCP connections at a time per thread (incoming-num-tcp), so a
	# backend with more would close some itself; these ports put at most 10 on each
	topo_exec "$TOPO_C" /usr/bin/python3 "$BATS_TEST_DIRNAME/../lib/tcp_hold.py" \
		"$TOPO_VIP4" 53 "$TOPO_CLIENT4" 43000 24 6 >"$out" 2>"$TOPO_DIR/hold.err" &
	pid=$!
	sleep 2
	topo_kr backend set "${TOPO_B4[1]}:53" drain --instance "$TOPO_INSTANCE"
	sleep 2
	topo_kr backend set "${TOPO_B4[2]}:53" down --instance "$TOPO_INSTANCE"
	wait "$pid"
	topo_kr backend set "${TOPO_B4[1]}:53" up --instance "$TOPO_INSTANCE"
	topo_kr backend set "${TOPO_B4[2]}:53" up --instance "$TOPO_INSTANCE"
	cat "$TOPO_DIR/hold.err"; awk '$2 !~ /^2/' "$out" | head -30
	# "SPORT BACKENDS ANSWERS BROKEN": the drained backend 1 and backend 3 keep theirs
	# (one backend, never broken); backend 2's connections, marked down, all break
	run -0 awk '{ split($2, s, ","); first = s[1] }
		first == 2 { d++; if ($4 == 1 || $2 != "2") moved++; next }
		{ c++; if ($4 == 0 && $2 !~ /,/ && $3 > 0) kept++; else broken++ }
		first == 1 { drained++ }
		END { printf "connections %d kept %d broken %d (%d on the drained backend); down moved %d of %d\n",
			c, kept, broken + 0, drained, moved + 0, d }' "$out"
	echo "$output"
	[ "$(wc -l <"$out")" -eq 24 ]
	[[ "$output" =~ ^connections\ ([0-9]+)\ kept\ ([0-9]+)\ broken\ 0\ \(([0-9]+)\ on\ the\ drained\ backend\)\;\ down\ moved\ ([0-9]+)\ of\ ([0-9]+)$ ]]
	[ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ]
	[ "${BASH_REMATCH[3]}" -gt 0 ]
	[ "${BASH_REMATCH[4]}" = "${BASH_REMATCH[5]}" ]
	[ "${BASH_REMATCH[5]}" -gt 0 ]
}
