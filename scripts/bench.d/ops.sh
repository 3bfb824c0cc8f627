#!/bin/bash
# Operations benchmark (make bench): apply of a changed 1.5M-point ring until it is
# published, and the publish step alone; kernel memory of 30 subsets as dedicated rings vs
# one shared ring.  Maps come from `bpftool prog loadall ... pinmaps` (not attached: the
# figures are the control plane's).  Figures and ratios against baselines of the same run.
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-build}
KR=$OUT/keyrouter
OBJ=$OUT/bpf/keyrouter.bpf.o
[ "$(id -u)" = 0 ] || { echo "ops bench: needs root, skipped"; exit 0; }
[ -x "$KR" ] && [ -f "$OBJ" ] || { echo "ops bench: build first (make)"; exit 1; }
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf || exit 1
dir=/sys/fs/bpf/kr-bench-$$
tmp=$(mktemp -d /tmp/kr-bench.XXXXXX)
cleanup() { rm -rf "$dir" "$tmp"; echo "load average after: $(cat /proc/loadavg)"; }
trap cleanup EXIT
echo "load average before: $(cat /proc/loadavg)"
mkdir -p "$dir"
bpftool prog loadall "$OBJ" "$dir/progs" pinmaps "$dir" || exit 1

# ring "big": 1000 backends x weight 1 x point_multiple 1500 = 1.5M points (v2)
big() { # file weight-of-backend-0
	python3 - "$1" "$2" <<'PY'
import json, sys
b = [{"address": "10.%d.%d.1:7000" % (i // 250, i % 250), "weight": 1} for i in range(1000)]
b[0]["weight"] = int(sys.argv[2])
json.dump({"rings": [{"name": "big", "format": "v2", "point_multiple": 1500, "backends": b}],
           "services": [{"name": "big", "vip": "10.200.0.1", "port": 7000,
                         "key": {"type": "payload"}, "ring": "big",
                         "forward": {"mode": "ipip", "source4": "192.0.2.1"}}]}, open(sys.argv[1], "w"))
PY
}
big "$tmp/a.json" 1
big "$tmp/b.json" 2
now() { date +%s.%N; }
ms() { echo "$1 $2" | awk '{ printf "%.1f", ($2 - $1) * 1000 }'; }

"$KR" -q apply --pin-dir "$dir" -c "$tmp/a.json" >/dev/null || exit 1
t0=$(now); "$KR" -q apply --pin-dir "$dir" -c "$tmp/a.json" >/dev/null; t1=$(now)
noop=$(ms "$t0" "$t1")
t0=$(now); "$KR" -v apply --pin-dir "$dir" -c "$tmp/b.json" 2> "$tmp/v.log" >/dev/null; t1=$(now)
changed=$(ms "$t0" "$t1")
line=$(grep "ring 'big': .* points; build" "$tmp/v.log")
points=$(echo "$line" | sed -E 's/.*: ([0-9]+) points;.*/\1/')
build=$(echo "$line" | sed -E 's/.*build ([0-9.]+) ms.*/\1/')
encode=$(echo "$line" | sed -E 's/.*encode ([0-9.]+) ms.*/\1/')
publish=$(echo "$line" | sed -E 's/.*\) ([0-9.]+) ms$/\1/')
echo "apply of a changed ring, $points points: ${changed} ms until published (process start to exit)"
echo "  build ${build} ms, encode ${encode} ms, publish (map create+fill+freeze+slot update) ${publish} ms"
echo "  baseline: apply with nothing changed (builds and compares every ring) ${noop} ms"
awk -v c="$changed" -v n="$noop" -v p="$publish" 'BEGIN {
	printf "  ratios: changed/unchanged apply %.2f, publish/whole apply %.3f\n", c / n, p / c }'

# 30 subsets of one ring: backend i carries tag tK for every K != i mod 30 (each subset
# holds 29/30 of the backends: overlapping feature combinations).  Shared: what apply
# publishes (the ring + kr_subset_members).  Baseline: the same 30 subsets as 30 dedicated
# rings (rings "dK" of exactly the subset's backends: what a dedicated subset ring is).
python3 - "$tmp/s.json" "$tmp/d.json" <<'PY'
import json, sys
n = 300
b = [{"address": "10.%d.%d.2:7000" % (i // 250, i % 250), "weight": 1,
      "tags": ["t%d" % k for k in range(30) if k != i % 30]} for i in range(n)]
fwd = {"mode": "ipip", "source4": "192.0.2.1"}
s = [{"name": "s%d" % k, "vip": "10.201.0.%d" % (k + 1), "port": 7000, "key": {"type": "payload"},
      "ring": "pool", "subset": ["t%d" % k], "forward": fwd} for k in range(30)]
s.append({"name": "all", "vip": "10.201.1.1", "port": 7000, "key": {"type": "payload"},
          "ring": "pool", "forward": fwd})
json.dump({"rings": [{"name": "pool", "format": "v2", "point_multiple": 160, "backends": b}],
           "services": s}, open(sys.argv[1], "w"))
d = [{"name": "d%d" % k, "format": "v2", "point_multiple": 160,
      "backends": [x for x in b if "t%d" % k in x["tags"]]} for k in range(30)]
ds = [{"name": "s%d" % k, "vip": "10.201.0.%d" % (k + 1), "port": 7000,
       "key": {"type": "payload"}, "ring": "d%d" % k, "forward": fwd} for k in range(30)]
json.dump({"rings": d, "services": ds}, open(sys.argv[2], "w"))
PY
"$KR" -q apply --pin-dir "$dir" -c "$tmp/d.json" >/dev/null || exit 1
"$KR" ring status --json --pin-dir "$dir" > "$tmp/st.json" || exit 1
jq -r '[.[] | select(.name | startswith("d")) | .slots[] | select(.present) | .memlock] | "\(length) \(add)"' "$tmp/st.json" > "$tmp/sub"
read -r nsub subsets < "$tmp/sub"
"$KR" -q apply --pin-dir "$dir" -c "$tmp/s.json" >/dev/null || exit 1
"$KR" ring status --json --pin-dir "$dir" > "$tmp/st.json" || exit 1
nshared=$(jq -r '[.[] | select(.name | startswith("pool"))] | length' "$tmp/st.json")
whole=$(jq -r '.[] | select(.name == "pool") | .slots[] | select(.present) | .memlock' "$tmp/st.json")
wpts=$(jq -r '.[] | select(.name == "pool") | .slots[] | select(.present) | .points' "$tmp/st.json")
members=$(bpftool map show pinned "$dir/kr_subset_members" -j | jq -r '.bytes_memlock')
nmem=$(bpftool map dump pinned "$dir/kr_subset_members" -j | jq -r 'length')
echo "30 subsets of a ring of 300 backends ($wpts points), each with 29/30 of the backends:"
echo "  baseline: $nsub dedicated rings: $subsets bytes of kernel memory"
echo "  shared (what apply publishes: $nshared ring(s)): the ring $whole bytes + kr_subset_members"
echo "  ($nmem members) $members bytes"
awk -v a="$subsets" -v b="$whole" -v m="$members" 'BEGIN {
	printf "  ratio dedicated/shared: %.1f (shared = ring + members map)\n", a / (b + m) }'
