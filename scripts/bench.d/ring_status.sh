#!/bin/bash
# ring status during a migration of an 80M-point ring against a 640-point one (make bench):
# the cost of one call, wall time and peak memory (max RSS), with the moved share ring
# stage noted in the staged image's header, against the same call diffing both images
# (`ring status --recompute`, what every call did before the note), in the same run; and
# what the note costs ring stage.  Maps from `bpftool prog loadall ... pinmaps` (not
# attached).  Figures and ratios only, no assertion.
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-build}
KR=$OUT/keyrouter
OBJ=$OUT/bpf/keyrouter.bpf.o
PM=${KR_BENCH_RS_PM:-4000000}	# x 20 backends = 80M points
[ "$(id -u)" = 0 ] || { echo "ring_status bench: needs root, skipped"; exit 0; }
[ -x "$KR" ] && [ -f "$OBJ" ] || { echo "ring_status bench: build first (make)"; exit 1; }
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf || exit 1
dir=/sys/fs/bpf/kr-bench-rs-$$
tmp=$(mktemp -d /tmp/kr-bench-rs.XXXXXX)
cleanup() { rm -rf "$dir" "$tmp"; echo "load average after: $(cat /proc/loadavg)"; }
trap cleanup EXIT
echo "load average before: $(cat /proc/loadavg)"
mkdir -p "$dir"
bpftool prog loadall "$OBJ" "$dir/progs" pinmaps "$dir" || exit 1

ring() { # file point_multiple backends
	{
		printf '{ "rings": [ { "name": "big", "format": "v2", "point_multiple": %s, "backends": [' "$2"
		for ((i = 1; i <= $3; i++)); do
			[ $i -gt 1 ] && printf ','
			printf '{ "address": "10.9.0.%d:53", "mac": "02:00:00:00:09:%02x" }' $i $i
		done
		printf '] } ], "services": [ { "name": "s", "vip": "10.9.1.1", "port": 53, '
		printf '"key": { "type": "dns" }, "ring": "big", "forward": { "mode": "l2" } } ] }\n'
	} >"$1"
}
ring "$tmp/old.json" 160 4
ring "$tmp/new.json" "$PM" 20
# TIME FILE cmd...: wall seconds and max RSS (KiB) into FILE
timed() { local f=$1; shift; /usr/bin/time -f '%e %M' -o "$f" "$@" >/dev/null; }
"$KR" -q apply --pin-dir "$dir" -c "$tmp/old.json" >/dev/null || exit 1
timed "$tmp/stage" "$KR" -q ring stage big -c "$tmp/new.json" --pin-dir "$dir" 2>/dev/null || exit 1
"$KR" -q ring migrate big --percent 10 --pin-dir "$dir" >/dev/null || exit 1
points=$("$KR" ring status big --pin-dir "$dir" --json | jq '[.[0].slots[].points] | add')
# medians of 5 calls each, alternated
for r in 1 2 3 4 5; do
	timed "$tmp/n$r" "$KR" ring status big --pin-dir "$dir"
	timed "$tmp/d$r" "$KR" ring status big --pin-dir "$dir" --recompute
done
med() { cat "$@" | sort -n -k"$K" | awk -v k="$K" '{ v[NR] = $k } END { print v[int((NR + 1) / 2)] }'; }
K=1 nt=$(med "$tmp"/n?); K=2 nm=$(med "$tmp"/n?)
K=1 dt=$(med "$tmp"/d?); K=2 dm=$(med "$tmp"/d?)
a=$("$KR" ring status big --pin-dir "$dir" --json | jq -r '.[0].moved_share')
b=$("$KR" ring status big --pin-dir "$dir" --json --recompute | jq -r '.[0].moved_share')
echo "ring status, $points points in two slots (80M against 640 by default), median of 5 calls:"
awk -v nt="$nt" -v nm="$nm" -v dt="$dt" -v dm="$dm" 'BEGIN {
	printf "  with the stage'"'"'s note: %.0f ms, %.1f MB max RSS\n", nt * 1000, nm / 1024
	printf "  diffing both images (--recompute, every call before): %.0f ms, %.1f MB\n", dt * 1000, dm / 1024
	printf "  ratio: %.1fx less time, %.0fx less memory\n", (nt > 0 ? dt / nt : 0), dm / nm }'
echo "  moved share: noted $a, recomputed $b"
read -r st sm <"$tmp/stage"
echo "ring stage of the new ring (the note's diff included): $st s, $(awk -v m="$sm" 'BEGIN { printf "%.0f", m / 1024 }') MB max RSS"
"$KR" -q ring rollback big --pin-dir "$dir" >/dev/null
