#!/bin/bash
# The seeds' scale (make bench): 16, 32 and 64 rings over the 2048 servers of
# tests/data/bench2048.backends.txt, each ring a different ~15/16 subset with its own
# weights (v2 point_multiple 160, ~1.4M points per ring) -- and the same feature
# combinations as subsets of ONE shared ring (tags, kr_subset_members), side by side.
# Per configuration: wall time of the apply that publishes it, of an apply that changes
# nothing (the baseline: builds and compares every ring), kernel memory (memlock as the
# kernel accounts it: ring images + the backend-indexed maps kr_backends, kr_backend_stats,
# kr_subset_members), backend ids in use.  Maps from `bpftool prog loadall ... pinmaps`
# (not attached: the figures are the control plane's and the kernel's memory).
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-build}
KR=$OUT/keyrouter
OBJ=$OUT/bpf/keyrouter.bpf.o
PM=${SCALE_PM:-160}
[ "$(id -u)" = 0 ] || { echo "scale bench: needs root, skipped"; exit 0; }
[ -x "$KR" ] && [ -f "$OBJ" ] || { echo "scale bench: build first (make)"; exit 1; }
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf || exit 1
tmp=$(mktemp -d /tmp/kr-scale-bench.XXXXXX)
dir=
cleanup() { [ -n "$dir" ] && rm -rf "$dir"; rm -rf "$tmp"; }
trap cleanup EXIT
now() { date +%s.%N; }
sec() { echo "$1 $2" | awk '{ printf "%.2f", $2 - $1 }'; }
memlock() { bpftool -j map show pinned "$1" | jq '.bytes_memlock // 0'; }

# one configuration in a fresh set of maps: "apply_s noop_s images_bytes fixed_bytes ids"
measure() { # config
	dir=/sys/fs/bpf/kr-scale-bench-$$
	rm -rf "$dir"; mkdir -p "$dir"
	bpftool prog loadall "$OBJ" "$dir/progs" pinmaps "$dir" || return 1
	local t0 t1 t2 apply noop img fixed ids
	t0=$(now)
	"$KR" -q apply --pin-dir "$dir" -c "$1" >/dev/null || return 1
	t1=$(now)
	"$KR" -q apply --pin-dir "$dir" -c "$1" >/dev/null || return 1
	t2=$(now)
	apply=$(sec "$t0" "$t1"); noop=$(sec "$t1" "$t2")
	img=$("$KR" ring status --json --pin-dir "$dir" | jq '[.[].slots[] | select(.present) | .memlock] | add')
	fixed=$(( $(memlock "$dir/kr_backends") + $(memlock "$dir/kr_backend_stats") + $(memlock "$dir/kr_subset_members") ))
	ids=$("$KR" status --json --pin-dir "$dir" | jq '.backends | length')
	rm -rf "$dir"; dir=
	echo "$apply $noop $img $fixed $ids"
}

echo "v2 point_multiple $PM, 2048 servers, $(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-6s | %-44s | %-44s | %s\n' "" "N rings (one per feature combination)" \
	"N subsets of one shared ring" "rings / subsets"
printf '%-6s | %8s %8s %9s %8s %6s | %8s %8s %9s %8s %6s | %6s %6s\n' N apply_s noop_s \
	images_MiB fixed_MiB ids apply_s noop_s images_MiB fixed_MiB ids apply memory
for n in 16 32 64; do
	/usr/bin/python3 tests/lib/scale_config.py rings "$n" "$PM" "$tmp/r.json" || exit 1
	/usr/bin/python3 tests/lib/scale_config.py subsets "$n" "$PM" "$tmp/s.json" || exit 1
	r=$(measure "$tmp/r.json") || { echo "scale bench: $n rings failed"; exit 1; }
	s=$(measure "$tmp/s.json") || { echo "scale bench: $n subsets failed"; exit 1; }
	# per-ring ids (before one id per server): one id per (ring, server)
	pairs=$(jq '[.rings[].backends | length] | add' "$tmp/r.json")
	echo "$n $r $s $pairs" | awk '{
		printf "%-6s | %8.2f %8.2f %9.1f %8.1f %6d | %8.2f %8.2f %9.1f %8.1f %6d | %6.2f %6.2f\n",
			$1, $2, $3, $4 / 1048576, $5 / 1048576, $6, $7, $8, $9 / 1048576, $10 / 1048576,
			$11, $2 / $7, ($4 + $5) / ($9 + $10)
		pairs[NR] = $12 }
		END { }'
	echo "$n $pairs" >> "$tmp/pairs"
done
echo "ids: one per server; per-ring ids (one per ring and server, before) would need:" \
	$(awk '{ printf "%s rings %d;", $1, $2 }' "$tmp/pairs" | sed 's/;$//; s/;/; /g') \
	"(kr_backends holds 65536)"
echo "fixed_MiB: kr_backends (65536 x 40 B) + kr_backend_stats (65536 x (16 B x CPUs + 8 B))" \
	"+ kr_subset_members (262144 buckets x 16 B, plus its members when subsets share a ring)"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
