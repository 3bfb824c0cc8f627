#!/bin/bash
# `make demo`: keyrouter steering real DNS traffic between real servers, in network
# namespaces, then cleaning up after itself.  (`make demo` runs scripts/deps.sh and builds
# first.)  Needs root.  Takes about a minute; leaves no namespaces, links, pins or processes.
set -u
cd "$(dirname "$0")/.."
# shellcheck source=../tests/lib/e2e_common.bash
source tests/lib/e2e_common.bash
keyrouter() { "$TOPO_KEYROUTER" "$@"; }

T0=$(date +%s)
BPFFS_BEFORE=$(find /sys/fs/bpf 2>/dev/null | sort)
NAMES=3000
KR=$TOPO_KEYROUTER

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
run() { printf '  $ %s\n' "$*"; "$@" 2>&1 | sed 's/^/    /'; return "${PIPESTATUS[0]}"; }
# keyrouter in the router's network namespace, shown as the operator would type it there
kr() { printf '  [router]$ keyrouter %s\n' "$*"; topo_kr "$@" 2>&1 | sed 's/^/    /'; return "${PIPESTATUS[0]}"; }
fail() { echo "demo: $*" >&2; exit 1; }

miss=$(e2e_missing)
[ -z "$miss" ] || fail "missing: $miss (run as root; scripts/deps.sh installs the packages)"

export TOPO_QUIET=1
topo_init "kr-demo-$$" 4 || fail "topology variables"
topo_trap

say "1. Topology (network namespaces ${TOPO_PREFIX}-*)"
cat <<EOF
  client $TOPO_CLIENT4 --- router [r0: keyrouter, native XDP] r1 --- bridge --- b1..b4
  VIP $TOPO_VIP4 / $TOPO_VIP6 on every backend's loopback (direct server return);
  each backend runs unbound: any name under $TOPO_DNS_ZONE answers A 10.250.0.I, TXT "bI".
EOF
topo_create || fail "could not create the topology"
topo_start_dns || fail "could not start unbound"
e2e_config "$TOPO_DIR/dns.json" l2 "1 2 3" dns:dns:53
e2e_config "$TOPO_DIR/dns-next.json" l2 "1 2 3 4" dns:dns:53
cd "$TOPO_DIR" || fail "no state directory"   # so the commands below show short file names
echo "  config: ring dns4 = b1 b2 b3 (v2, 160 points each), service dns4 = $TOPO_VIP4:53/udp, key dns, l2"

say "2. Load keyrouter on the router's ingress interface"
printf '  [router]$ keyrouter load %s -c dns.json --mode native --instance %s\n' "$TOPO_R_IN" "$TOPO_INSTANCE"
topo_kr load "$TOPO_R_IN" -c "$TOPO_DIR/dns.json" --mode native --instance "$TOPO_INSTANCE" \
	>"$TOPO_DIR/load.log" 2>&1 || { sed 's/^/    /' "$TOPO_DIR/load.log"; fail "keyrouter load failed"; }
# libbpf/libxdp explain at length that this kernel refuses libxdp's dispatcher (the program
# is then attached alone); one line is enough here
grep -vE '^lib(bpf|xdp):' "$TOPO_DIR/load.log" | sed 's/^/    /'
n=$(grep -cE '^lib(bpf|xdp):' "$TOPO_DIR/load.log")
[ "$n" = 0 ] || echo "    ($n libbpf/libxdp lines omitted: $(grep -m1 -o 'Falling back.*' "$TOPO_DIR/load.log"))"
topo_vip_route blackhole   # what keyrouter does not route is dropped, not served

say "3. Where does a name go?  (no traffic: keyrouter lookup)"
run keyrouter lookup -c dns.json --service dns4 --addr www.example.kr.test
printf '  $ dig @%s www.example.kr.test TXT   (from the client, through the router)\n' "$TOPO_VIP4"
printf '    answered by %s\n' "$(topo_exec "$TOPO_C" dig +short +time=2 +tries=1 @$TOPO_VIP4 www.example.kr.test TXT)"

RUNS=34
say "4. Real traffic: $NAMES names with dig, then $RUNS x $NAMES = $((RUNS * NAMES)) queries with dnsperf"
e2e_names $NAMES demo >"$TOPO_DIR/names"
e2e_predict "$TOPO_DIR/dns.json" dns4 "$TOPO_DIR/names" >"$TOPO_DIR/pred" || fail "lookup failed"
echo www.example.kr.test >"$TOPO_DIR/example"
ex=$(e2e_predict "$TOPO_DIR/dns.json" dns4 "$TOPO_DIR/example" | awk '{ print $2 }')
e2e_dns_batch "$TOPO_VIP4" "$TOPO_DIR/names" >"$TOPO_DIR/ans"
e2e_dnsperf "$TOPO_VIP4" "$TOPO_DIR/names" $RUNS >"$TOPO_DIR/perf.txt"
"$KR" analyze -c "$TOPO_DIR/dns.json" --ring dns4 --json >"$TOPO_DIR/analyze.json"
topo_kr stats --json --instance "$TOPO_INSTANCE" >"$TOPO_DIR/stats.json" 2>/dev/null
echo "  per backend: the ring's share of the key space; of the $NAMES names, where lookup says"
echo "  they go and who answered dig; keyrouter's packet counter against what lookup implies"
echo "  for all the queries sent (each name once by dig, $RUNS times by dnsperf, plus the example):"
printf '  %-4s %-12s %10s %12s %12s %14s %14s\n' "" address "ring share" "lookup says" "dig answers" "kernel packets" "expected"
for i in 1 2 3; do
	a=${TOPO_B4[i]}:53
	share=$(jq -r --arg a "$a" '.per_backend[] | select(.address == $a) | .share' "$TOPO_DIR/analyze.json")
	pkts=$(jq -r --arg a "$a" '[.backends[]? | select(.address == $a) | .packets] | add // "?"' "$TOPO_DIR/stats.json" 2>/dev/null)
	pred=$(awk -v i=$i '$2 == i' "$TOPO_DIR/pred" | wc -l)
	printf '  %-4s %-12s %9.2f%% %12d %12d %14s %14d\n' "b$i" "${TOPO_B4[i]}" \
		"$(awk -v s="$share" 'BEGIN { print s * 100 }')" "$pred" \
		"$(awk -v i=$i '$2 == i' "$TOPO_DIR/ans" | wc -l)" "${pkts:-?}" \
		$((pred * (RUNS + 1) + (ex == i ? 1 : 0)))
done
echo "  dig: $(e2e_compare "$TOPO_DIR/pred" "$TOPO_DIR/ans" | tail -1)"
echo "  dnsperf: $(grep -m1 'Queries per second' "$TOPO_DIR/perf.txt" | sed 's/.*: *//') queries/s, $(tail -1 "$TOPO_DIR/perf.txt")"
echo "  keyrouter: $(jq -r '.counters | "seen \(.seen), routed \(.routed), dropped \(.dropped), passed \(.passed)"' "$TOPO_DIR/stats.json" 2>/dev/null)"

say "5. Migration: ring dns4 gets a 4th backend, half of the keys go to the new version"
f=$("$KR" diff --old-config "$TOPO_DIR/dns.json" --new-config "$TOPO_DIR/dns-next.json" --ring dns4 --json | jq -r .moved)
run keyrouter diff --old-config dns.json --new-config dns-next.json --ring dns4 --top 0
kr ring stage dns4 -c dns-next.json --instance "$TOPO_INSTANCE"
kr ring migrate dns4 --percent 50 --instance "$TOPO_INSTANCE"
e2e_dns_batch "$TOPO_VIP4" "$TOPO_DIR/names" >"$TOPO_DIR/ans50"
paste -d' ' "$TOPO_DIR/ans" "$TOPO_DIR/ans50" | awk -v f="$f" -v n=$NAMES '
	{ a++; if ($2 != $4) m++; to[$4] += ($2 != $4) }
	END {
		p = f / 2; b = 4 * sqrt(p * (1 - p) / n)
		printf "  answered %d of %d names; %d changed backend = %.2f%%\n", a, n, m, 100 * m / n
		printf "  predicted: 50%% of diff'"'"'s %.2f%% = %.2f%% (+-%.2f%%, 4 sigma for %d names)  %s\n",
			100 * f, 100 * p, 100 * b, n, ((m / n - p) ^ 2 <= b * b) ? "OK" : "OUTSIDE THE BOUND"
		for (i = 1; i <= 9; i++) if (to[i]) printf "  moved to b%s: %d%s\n", i, to[i], (to[i] == m && i == 4) ? " (all of them: only the new backend gains keys)" : ""
	}'
kr ring status --instance "$TOPO_INSTANCE"
kr ring rollback dns4 --instance "$TOPO_INSTANCE"
e2e_dns_batch "$TOPO_VIP4" "$TOPO_DIR/names" >"$TOPO_DIR/ansrb"
echo "  after the rollback: $(paste -d' ' "$TOPO_DIR/ans" "$TOPO_DIR/ansrb" | awk '$2 == $4' | wc -l) of $NAMES names answered by their original backend again"

say "6. Clean up"
cd /
topo_kr unload "$TOPO_R_IN" --instance "$TOPO_INSTANCE" >/dev/null 2>&1
prefix=$TOPO_PREFIX inst=$TOPO_INSTANCE
topo_teardown
trap - EXIT INT TERM HUP
left=$(ip netns list | grep -c "^$prefix" || true)
pins=$(comm -13 <(echo "$BPFFS_BEFORE") <(find /sys/fs/bpf 2>/dev/null | sort) | wc -l)
procs=$(pgrep -f "$prefix" | wc -l)
echo "  namespaces left: $left (links lived only inside them), new bpffs entries: $pins, processes: $procs"
echo "  demo took $(( $(date +%s) - T0 )) s"
[ "$left" = 0 ] && [ "$pins" = 0 ] && [ "$procs" = 0 ]
