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
# Figures only, no assertion.  Usage: tests/bench/bench_spill.sh [REPEAT] [ROUNDS]
set -eu
cd "$(dirname "$0")/../.."
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
py() { KR_BIN=$B /usr/bin/python3 "$O" bench "$@"; }
echo "# load average: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) CPUs)"
for round in 1 2; do
	kr apply -c "$T/off.json" --instance $P >/dev/null
	for b in $(seq 11 26); do kr backend set 10.55.0.$b:9001 --spill 0 --instance $P >/dev/null; done
	echo -n "off       "; py "$T/off.json" /sys/fs/bpf/keyrouter/$P 64 "$R" "$N" plain
	kr apply -c "$T/on.json" --instance $P >/dev/null
	echo -n "on/plain  "; py "$T/on.json" /sys/fs/bpf/keyrouter/$P 64 "$R" "$N" plain
	echo -n "on/spill  "; py "$T/on.json" /sys/fs/bpf/keyrouter/$P 64 "$R" "$N" spilled
	for b in $(seq 11 26); do kr backend set 10.55.0.$b:9001 --spill 0 --instance $P >/dev/null; done
	kr apply -c "$T/hot.json" --instance $P >/dev/null
	echo -n "hot/plain "; py "$T/hot.json" /sys/fs/bpf/keyrouter/$P 64 "$R" "$N" plain
	echo -n "hot/hot   "; py "$T/hot.json" /sys/fs/bpf/keyrouter/$P 64 "$R" "$N" hot
done
echo "# load average: $(cut -d' ' -f1-3 /proc/loadavg)"
