#!/bin/bash
# The data path's cost per packet with spill and hot keys off and on (issue 28): the real
# XDP program loaded by `keyrouter load` on a veth in a network namespace, timed by the
# kernel through BPF_PROG_TEST_RUN (tests/oracle/kr_spill_oracle.py bench: mean ns per
# repetition, best of the rounds), for 64 keys each of:
#   off       spill 0 everywhere, no hot keys (today's path)
#   on/plain  spill 0.3 on every other backend, keys that do not spill (the spill test)
#   on/spill  the same ring, keys that spill (the walk on to the next backend)
#   hot/plain the ring has hot keys (its control word's bit): other keys pay the lookup
#   hot/hot   the hot keys themselves (replica walk, 3 replicas)
# Figures only, no assertion; the last line gives each path's best ns and its ratio to
# `off` of the same run.  Usage: scripts/bench.d/spill.sh [REPEAT] [ROUNDS] (make bench runs it)
set -eu
cd "$(dirname "$0")/../.."
[ "$(id -u)" = 0 ] || { echo "spill bench: needs root, skipped"; exit 0; }
B=$PWD/${OUT:-build}/keyrouter
O=$PWD/tests/oracle/kr_spill_oracle.py
R=${1:-20000} N=${2:-5} P=kr-bs-$$
T=$(mktemp -d /tmp/kr-bs.XXXXXX)
trap 'nsenter --net=/run/netns/$P "$B" unload bsveth0 --instance $P >/dev/null 2>&1; ip netns del $P; rm -rf "$T" /sys/fs/bpf/keyrouter/$P' EXIT
ip netns add $P
ip -n $P link add bsveth0 type veth peer name bsveth1
ip -n $P link set bsveth0 up; ip -n $P link set bsveth1 up; ip -n $P link set lo up
cfg() { # FILE SPILL HOTKEYS
	{
		echo '{ "rings": [ { "name": "web", "format": "v2", "point_multiple": 160,'
		echo "  \"hot_keys\": $3, \"backends\": ["
		for i in $(seq 1 16); do
			printf '%s { "address": "10.55.0.%d:9001", "mac": "02:55:00:00:00:%02x"%s }\n' \
				"$([ "$i" = 1 ] || echo ,)" $((10 + i)) "$i" \
				"$([ "$2" != 0 ] && [ $((i % 2)) = 1 ] && echo ", \"spill\": $2")"
		done
		echo '] } ], "services": [ { "name": "kv", "vip": "10.55.0.1", "port": 9001,'
		echo '  "ring": "web", "key": { "type": "payload" }, "forward": { "mode": "l2" } } ] }'
	} > "$1"
}
kr() { nsenter --net=/run/netns/$P "$B" "$@"; }
cfg "$T/off.json" 0 '[]'
cfg "$T/on.json" 0.3 '[]'
cfg "$T/hot.json" 0 '[{"key": "hot-a", "replicas": 3}, {"key": "hot-b", "replicas": 3}]'
kr load bsveth0 -c "$T/off.json" --instance $P >/dev/null
declare -A best
# run LABEL CONFIG KIND: one measurement, printed; the best ns per LABEL kept
run() {
	local out ns
	out=$(KR_BIN=$B /usr/bin/python3 "$O" bench "$2" /sys/fs/bpf/keyrouter/$P "$([ "$3" = hot ] && echo 2 || echo 64)" "$R" "$N" "$3")
	printf '%-9s %s\n' "$1" "$out"
	ns=$(sed -nE 's/.*: ([0-9.]+) ns\/packet.*/\1/p' <<<"$out")
	[ -n "$ns" ] || return 0
	if [ -z "${best[$1]:-}" ] || awk -v a="$ns" -v b="${best[$1]}" 'BEGIN { exit !(a < b) }'; then
		best[$1]=$ns
	fi
}
echo "# load average: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) CPUs)"
for round in 1 2; do
	kr apply -c "$T/off.json" --instance $P >/dev/null
	for b in $(seq 11 26); do kr backend set 10.55.0.$b:9001 --spill 0 --instance $P >/dev/null; done
	run off "$T/off.json" plain
	kr apply -c "$T/on.json" --instance $P >/dev/null
	run on/plain "$T/on.json" plain
	run on/spill "$T/on.json" spilled
	for b in $(seq 11 26); do kr backend set 10.55.0.$b:9001 --spill 0 --instance $P >/dev/null; done
	kr apply -c "$T/hot.json" --instance $P >/dev/null
	run hot/plain "$T/hot.json" plain
	run hot/hot "$T/hot.json" hot
done
echo "# load average: $(cut -d' ' -f1-3 /proc/loadavg)"
line="spill: off ${best[off]:-?} ns"
for l in on/plain on/spill hot/plain hot/hot; do
	line+="; $l ${best[$l]:-?} ns ($(awk -v a="${best[$l]:-0}" -v b="${best[off]:-0}" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else printf "?" }'))"
done
echo "$line"
