#!/bin/bash
# Peer benchmark (make bench): keyrouter against what an operator would deploy instead, in
# the same run, on the same topology and backends (tests/lib/peers.bash says how each one
# is set up): direct (no router), keyrouter (dns key, l2, native XDP), keyrouter-tuple,
# dnsdist 1.7 (chashed), nginx 1.22 stream (hash $remote_addr$remote_port consistent; with
# and without proxy_responses 1) and nftables (jhash DNAT).  Four unbound backends (one
# thread each) answer every name of the zone, each naming itself.
#
#  1. Consistency, with real queries: which backend answers each of 10,000 keys (query
#     names for keyrouter and dnsdist, client source ports for the tuple hashes), then the
#     same after a fifth backend is added: the share of keys that moved (ideal 1/5), and
#     how many went anywhere but to the new backend (ideal 0).  Whether the answers came
#     from the backends `keyrouter lookup` predicts, and whether nginx and keyrouter's
#     tuple key send each client port to the same backend.
#  2. Speed: dnsperf from the client (PEERS_SOCKETS sockets on consecutive ports,
#     PEERS_THREADS threads, 256 queries in flight, 20,000 names) for PEERS_SECONDS per
#     system, the systems alternated over PEERS_ROUNDS rounds (order rotated each round);
#     then every query's latency (average and 99th percentile) for 2 s at 1,000 queries/s
#     from one socket (about one in flight) and for 2 s at PEERS_LAT_QPS queries/s from
#     all of them (a load every system carries).  CPU per
#     query completed: user + system of the parties (dnsperf, the unbound processes, the
#     proxy's processes, the kernel's softirq threads; the kernel's packet work - veths,
#     forwarding, XDP, NAT - is charged to the process it interrupts, mostly the sender);
#     the router's cost is that minus direct's.  Beside it /proc/stat's user + system +
#     softirq per query, and the share of the machine the parties did not take (other
#     sessions' load).  The bottleneck: the party that took the most CPU per query when
#     the cores were busy.  Medians over rounds.
# The machine's CPU may be shared with whatever else runs on it (the load average is
# printed before and after): compare only figures of one run.
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=../../tests/lib/peers.bash
source tests/lib/peers.bash

ROUNDS=${PEERS_ROUNDS:-3}
SECONDS_RUN=${PEERS_SECONDS:-10}
LAT_QPS=${PEERS_LAT_QPS:-5000}
KEYS=${PEERS_KEYS:-10000}
NAMES=20000
SYSTEMS=${PEERS_ONLY:-$PEERS_SYSTEMS}

[ "$(id -u)" = 0 ] || { echo "peers bench: needs root, skipped"; exit 0; }
scripts/deps.sh || exit 1
miss=$(peers_missing)
[ -z "$miss" ] || { echo "peers bench: missing: $miss (make deps)"; exit 1; }

export TOPO_QUIET=1
echo "load average before: $(cat /proc/loadavg)"
peers_setup "kr-e2e-$$" || { echo "peers bench: could not build the topology"; exit 1; }
topo_trap
trap 'topo_teardown; echo "load average after: $(cat /proc/loadavg)"' EXIT
R=$TOPO_DIR/results
: >"$R"
has() { [[ " $SYSTEMS " == *" $1 "* ]]; }

echo "topology: client -> router -> bridge -> 4 unbound backends (+1 for the consistency check), in network namespaces"
echo "  direct, keyrouter: the backends answer from the VIP straight to the client (direct server return, through the router's kernel forwarding)"
echo "  dnsdist, nginx: proxies on the VIP in the router; they receive every query and every reply (L7 / L4 proxies)"
echo "  nftables: DNAT in the router's kernel with conntrack; replies come back through the router and are un-NATed"

# ---- 1. consistency ------------------------------------------------------------------
echo
echo "consistency: $KEYS keys, backends 1-4, then a fifth added (ideal: 1/5 move, all to the new one)"
printf '  %-16s %-8s %8s %8s %10s %8s\n' system key answered moved "moved %" "not to 5"
for sys in keyrouter keyrouter-tuple dnsdist nginx nftables; do
	has "$sys" || continue
	line=$(peers_consistency "$sys" "$KEYS") || { echo "  $sys: consistency pass failed"; continue; }
	read -r _ k _ m _ t _ <<<"$line"
	printf '  %-16s %-8s %8d %8d %9.1f%% %8d\n' "$sys" "$(peers_kind "$sys")" "$k" "$m" \
		"$(awk -v m="$m" -v k="$k" 'BEGIN { print k ? 100 * m / k : 0 }')" $((m - t))
	echo "$sys moved $m $k" >>"$R"
done
echo "  (direct has no hash: nothing to move)"

echo "answers against predictions ($KEYS keys each):"
if has keyrouter; then
	peers_predict "$TOPO_DIR/keyrouter4.json" dns4 dns "$TOPO_DIR/keys.names" >"$TOPO_DIR/kr.pred"
	echo "  keyrouter (dns):         $(peers_agree "$TOPO_DIR/kr.pred" "$TOPO_DIR/keyrouter.4") answered by the backend keyrouter lookup predicts"
fi
peers_nginx_keys 20000 "$KEYS" >"$TOPO_DIR/nginx.keys"
if has keyrouter-tuple; then
	awk '{ print $1 }' "$TOPO_DIR/nginx.keys" >"$TOPO_DIR/tuple.keys"
	peers_predict "$TOPO_DIR/keyrouter-tuple4.json" tup4 tuple "$TOPO_DIR/tuple.keys" >"$TOPO_DIR/krt.pred"
	echo "  keyrouter (tuple, v1):   $(peers_agree "$TOPO_DIR/krt.pred" "$TOPO_DIR/keyrouter-tuple.4") answered by the predicted backend"
fi
if has nginx; then
	peers_predict "$TOPO_DIR/keyrouter-tuple4.json" tup4 payload "$TOPO_DIR/nginx.keys" >"$TOPO_DIR/nginx.pred"
	echo "  nginx:                   $(peers_agree "$TOPO_DIR/nginx.pred" "$TOPO_DIR/nginx.4") answered where keyrouter's v1 ring puts nginx's key (the text \$remote_addr\$remote_port)"
fi
if has nginx && has keyrouter-tuple; then
	echo "  nginx vs keyrouter tuple: $(peers_agree "$TOPO_DIR/nginx.4" "$TOPO_DIR/keyrouter-tuple.4") client ports sent to the same backend"
	echo "    (the rings are the same; the keys are not: nginx hashes the text \"10.201.0.220000\","
	echo "    keyrouter's tuple key the 6 bytes of address and port: about 1 in 4 agree by chance)"
fi

# ---- 2. speed --------------------------------------------------------------------------
awk '{ print $1 " A" }' <(e2e_names $NAMES q) >"$TOPO_DIR/dnsperf.in"
# busy (user + system + softirq), idle (+ iowait), softirq, all (every field but guest)
cpu_line() { awk '/^cpu / { print $2 + $4 + $8, $5 + $6, $8, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9; exit }' /proc/stat; }
# the kernel's softirq threads: packet work that did not run in some process's context
KSOFTIRQD=()
for f in /proc/[0-9]*/comm; do
	[[ $(cat "$f" 2>/dev/null) == ksoftirqd/* ]] && { d=${f%/comm}; KSOFTIRQD+=("${d#/proc/}"); }
done
pid_ticks() { # PID...
	local p t=0
	for p in "$@"; do
		t=$((t + $(awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$p/stat" 2>/dev/null || echo 0)))
	done
	echo $t
}
ns_ticks() { # NS...: utime + stime of the namespaces' processes, clock ticks
	local ns
	# shellcheck disable=SC2046
	pid_ticks $(for ns in "$@"; do ip netns pids "$ns" 2>/dev/null; done)
}
tx_counts() { ip netns exec "$TOPO_SW" cat /sys/class/net/s{1,2,3,4}/statistics/tx_packets | paste -sd' '; }
hz=$(getconf CLK_TCK)

latency() { # dnsperf options: "AVG P99" of the answered queries' latencies, in us
	topo_exec "$TOPO_C" dnsperf -s "$TOPO_VIP4" -d "$TOPO_DIR/dnsperf.in" -x "$PEERS_PORT0" -v "$@" 2>/dev/null |
		awk '/^> NOERROR/ { print $NF * 1e6 }' | sort -n |
		awk '{ v[NR] = $1; s += $1 }
		     END { k = int(NR * 0.99 + 0.5); if (k < 1) k = 1; if (NR) printf "%.0f %.0f", s / NR, v[k]; else print "- -" }'
}

measure() { # SYSTEM ROUND
	local sys=$1 round=$2 c0 c1 b0 b1 r0 r1 k0 k1 x0 x1 out tm lat
	peers_up "$sys" 4 >/dev/null || { echo "  $sys: could not start"; return 1; }
	read -r -a c0 < <(cpu_line); b0=$(ns_ticks "${TOPO_B[@]}"); r0=$(ns_ticks "$TOPO_R"); k0=$(pid_ticks "${KSOFTIRQD[@]}"); x0=$(tx_counts)
	TIMEFORMAT='%U %S'
	tm=$( { time topo_exec "$TOPO_C" dnsperf -s "$TOPO_VIP4" -d "$TOPO_DIR/dnsperf.in" \
		-c "$PEERS_SOCKETS" -T "$PEERS_THREADS" -q 256 -l "$SECONDS_RUN" -x "$PEERS_PORT0" \
		>"$TOPO_DIR/perf.out" 2>&1; } 2>&1 )
	read -r -a c1 < <(cpu_line); b1=$(ns_ticks "${TOPO_B[@]}"); r1=$(ns_ticks "$TOPO_R"); k1=$(pid_ticks "${KSOFTIRQD[@]}"); x1=$(tx_counts)
	out=$TOPO_DIR/perf.out
	# latency, each query's own time: 1,000 queries/s from one socket (about one in flight:
	# the path, no queueing; dnsperf -q 1 is paced by its own wake-ups, not the answers),
	# and at a load every system carries
	lat=$(latency -c 1 -T 1 -q 8 -Q 1000 -l 2)
	lat="$lat $(latency -c "$PEERS_SOCKETS" -T "$PEERS_THREADS" -q 64 -Q "$LAT_QPS" -l 2)"
	peers_down "$sys" >/dev/null
	awk -v sys="$sys" -v round="$round" -v hz="$hz" -v tm="$tm" -v lat="$lat" \
	    -v c="${c1[0]} ${c0[0]} ${c1[1]} ${c0[1]} ${c1[2]} ${c0[2]} ${c1[3]} ${c0[3]}" \
	    -v bt="$((b1 - b0))" -v rt="$((r1 - r0))" -v kt="$((k1 - k0))" -v x="$x0 $x1" '
		/Queries completed:/ { done = $3 } /Queries lost:/ { lost = $3 } /Queries sent:/ { sent = $3 }
		/Queries per second:/ { qps = $4 } /Average Latency/ { avg = $4 * 1e6 }
		END {
			split(c, v, " "); busy = v[1] - v[2]; idle = v[3] - v[4]; soft = v[5] - v[6]; tot = v[7] - v[8]
			split(tm, t, " "); cl = (t[1] + t[2]) * hz
			split(x, p, " "); mn = 1e18; mx = 0; sum = 0
			for (i = 1; i <= 4; i++) { d = p[i + 4] - p[i]; sum += d; if (d < mn) mn = d; if (d > mx) mx = d }
			split(lat, l, " ")
			# the parties: their processes (a softirq that runs in the context of a process is
			# charged to it) and the softirq threads
			ours = cl + bt + rt + kt
			# 1 system 2 round 3 qps 4 lost% 5 avg_us(saturated) 6 machine us/query
			# 7 parties us/query, of which 8 client 9 backends 10 proxy 11 softirq threads
			# 12 other% (busy, not the parties) 13 idle% 14 min% 15 max%
			# 16 17 latency avg, p99 at 1k/s from one socket 18 19 the same at LAT_QPS
			u = done ? 1e6 / hz / done : 0
			printf "%s %d %.0f %.3f %.0f %.2f %.2f %.2f %.2f %.2f %.2f %.1f %.1f %.1f %.1f %s %s %s %s\n", sys, round, qps,
				sent ? 100 * lost / sent : 0, avg, busy * u, ours * u, cl * u, bt * u, rt * u, kt * u,
				100 * (busy - ours) / tot, 100 * idle / tot,
				sum ? 100 * mn / sum : 0, sum ? 100 * mx / sum : 0, l[1], l[2], l[3], l[4]
		}' "$out" >>"$R.speed"
}

echo
echo "speed: dnsperf -c $PEERS_SOCKETS -T $PEERS_THREADS -q 256 -l $SECONDS_RUN, $NAMES names, $ROUNDS rounds (systems alternated)"
: >"$R.speed"
read -r -a order <<<"$SYSTEMS"
for ((round = 1; round <= ROUNDS; round++)); do
	n=${#order[@]}
	for ((j = 0; j < n; j++)); do
		sys=${order[(j + round - 1) % n]}
		measure "$sys" "$round"
		tail -1 "$R.speed" | awk '{
			w = "client"; v = $8
			if ($9 > v) { w = "backends"; v = $9 }
			if ($10 > v) { w = "router (proxy)"; v = $10 }
			printf "  round %d %-16s %7.0f qps, lost %.3f%%, CPU per query %.2f us (machine %.2f), other load %.0f%%, idle %.0f%%; most CPU: %s %.2f us/query\n",
				$2, $1, $3, $4, $7, $6, $12, $13, w, v }'
	done
done

# ---- 3. table and summary ----------------------------------------------------------------
echo
echo "medians over $ROUNDS rounds ($(nproc) cores):"
sort -k1,1 -k3,3n "$R.speed" | awk -v cores="$(nproc)" -v rounds="$ROUNDS" -v order="$SYSTEMS" -v moved="$(cat "$R")" '
	function med(sys, col,   a, k, j, x, n) {
		n = 0
		for (k = 1; k <= nrow; k++) if (row[k, 1] == sys && row[k, col] != "-") {
			x = row[k, col] + 0
			for (j = ++n; j > 1 && a[j - 1] > x; j--) a[j] = a[j - 1]
			a[j] = x
		}
		if (!n) return ""
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	{ nrow++; for (i = 1; i <= NF; i++) row[nrow, i] = $i }
	END {
		nm = split(moved, mv, "\n")
		for (i = 1; i <= nm; i++) { split(mv[i], f, " "); if (f[4]) share[f[1]] = sprintf("%.1f%%", 100 * f[3] / f[4]) }
		share["nftables"] = share["nftables"] ? share["nftables"] : "-"
		base = med("direct", 7)
		printf "  %-15s %7s %7s %6s %6s %6s %6s %6s %6s %7s %6s %6s %6s %6s %6s %5s %5s %11s %6s  %s\n", "system", "qps",
			"lost", "1k/s", "1k/s", "load", "load", "CPU", "router", "qps", "client", "backs", "proxy", "ksoft", "mach.",
			"other", "idle", "backends", "moved", "bottleneck"
		printf "  %-15s %7s %7s %6s %6s %6s %6s %6s %6s %7s %6s %6s %6s %6s %6s %5s %5s %11s %6s\n", "", "", "",
			"avg us", "p99 us", "avg us", "p99 us", "us/q", "us/q", "by CPU", "us/q", "us/q", "us/q", "us/q", "us/q", "%", "%", "min-max %", "by +1"
		n = split(order, sy, " ")
		for (i = 1; i <= n; i++) {
			s = sy[i]; q = med(s, 3); if (q == "") continue
			c = med(s, 7); cl = med(s, 8); bk = med(s, 9); px = med(s, 10); id = med(s, 13)
			# the bottleneck: with the cores busy, the party that took the most CPU per query
			# (packet work of the kernel in softirq is charged to the process it interrupts:
			# mostly the senders)
			who = "the client"; w = cl
			if (bk > w) { who = "the backends"; w = bk }
			if (px > w) { who = "the router (proxy)"; w = px }
			bn = id < 10 ? sprintf("CPU; most of it: %s", who) : sprintf("not the CPU (idle %.0f%%)", id)
			printf "  %-15s %7.0f %6.3f%% %6s %6s %6s %6s %6.2f %6s %7.0f %6.2f %6.2f %6.2f %6.2f %6.2f %5.1f %5.1f %5.1f-%-5.1f %6s  %s\n",
				s, q, med(s, 4), med(s, 16), med(s, 17), med(s, 18), med(s, 19), c, s == "direct" ? "-" : sprintf("%.2f", c - base),
				(c > 0) ? cores * 1e6 / c : 0, cl, bk, px, med(s, 11), med(s, 6), med(s, 12), id, med(s, 14), med(s, 15), (s in share) ? share[s] : "-", bn
			Q[s] = q; C[s] = c - base
		}
		if ("direct" in Q) {
			printf "\n  ratios against direct (qps): "
			for (i = 1; i <= n; i++) if (sy[i] != "direct" && (sy[i] in Q)) printf "%s %.2f  ", sy[i], Q[sy[i]] / Q["direct"]
			printf "\n  ratios against direct (CPU per query): "
			for (i = 1; i <= n; i++) if (sy[i] != "direct" && (sy[i] in Q)) printf "%s %.2f  ", sy[i], (C[sy[i]] + base) / base
			printf "\n"
		}
		printf "\npeers: keyrouter %.0f qps %.1f us/query; dnsdist %.0f qps %.1f us/query; nginx %.0f qps %.1f us/query; nftables %.0f qps %.1f us/query; direct %.0f qps\n",
			Q["keyrouter"], C["keyrouter"], Q["dnsdist"], C["dnsdist"], Q["nginx"], C["nginx"], Q["nftables"], C["nftables"], Q["direct"]
	}'
cat <<EOF
  1k/s avg/p99: every query's latency at 1,000 queries/s from one socket (about one in
  flight: the path, no queueing); load avg/p99: the same at $LAT_QPS queries/s from
  $PEERS_SOCKETS sockets.  Both carry the machine's scheduling delays when it is shared
  (other % above 0).  qps by CPU: what the machine's $(nproc) cores would serve at
  that CPU per query if the parties had them to themselves (qps itself falls with
  whatever else runs).  CPU us/q: the CPU the parties took per query completed:
  user + system of dnsperf (client), of the unbound processes (backs), of the proxy's
  processes (proxy) and of the kernel's softirq threads (ksoft); the kernel's packet work
  (veths, forwarding, XDP, NAT) is charged to the process it runs in, mostly the sender.
  mach. us/q: /proc/stat's user + system + softirq per query, whatever else ran on the
  machine included (other %: that part of the machine; when it is not ~0 the machine was
  shared and mach. is not the router's).  router us/q = CPU us/q minus direct's: what the
  router costs; below zero when it does less work than the router kernel's own
  forwarding.  In the summary line, us/query is the router cost.
EOF
