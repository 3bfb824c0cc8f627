#!/usr/bin/env bats
# Shared-ring subsets through apply (maps from plain `bpftool prog loadall ... pinmaps`):
# a subset with a short expected walk shares its ring (service subset id + members in
# kr_subset_members), a small one gets a dedicated ring, apply stays idempotent, stale
# members go.  Routing in the kernel with subsets: tests/bpf/test_ring.c (test_subsets).

bats_require_minimum_version 1.5.0

setup() {
	load ops_helpers
	[ -x "$KR_BIN" ] || skip "no $KR_BIN"
	[ -f "$KR_OBJ" ] || skip "no $KR_OBJ"
	D=/sys/fs/bpf/kr-subset-$$-$BATS_TEST_NUMBER
	mkdir -p "$D"
	bpftool prog loadall "$KR_OBJ" "$D/progs" pinmaps "$D"
	python3 - "$BATS_TEST_TMPDIR/s.json" "$BATS_TEST_TMPDIR/two.json" <<'PY'
import json, sys
n = 300
b = [{"address": "10.%d.%d.2:7000" % (i // 250, i % 250), "weight": 1,
      "tags": ["t%d" % k for k in range(30) if k != i % 30] + (["few"] if i < 10 else [])}
     for i in range(n)]
s = [{"name": "s%d" % k, "vip": "10.201.0.%d" % (k + 1), "port": 7000,
      "key": {"type": "payload"}, "ring": "pool", "subset": ["t%d" % k],
      "forward": {"mode": "ipip", "source4": "192.0.2.1"}} for k in range(30)]
s.append({"name": "few", "vip": "10.201.1.2", "port": 7000, "key": {"type": "payload"},
          "ring": "pool", "subset": ["few"], "forward": {"mode": "ipip", "source4": "192.0.2.1"}})
r = [{"name": "pool", "format": "v2", "point_multiple": 160, "backends": b}]
json.dump({"rings": r, "services": s}, open(sys.argv[1], "w"))
json.dump({"rings": r, "services": s[:2]}, open(sys.argv[2], "w"))
PY
}

teardown() {
	rm -rf "$D"
}

members() {	# subset ids (hex, as bpftool prints the key) and their member counts
	bpftool map dump pinned "$D/kr_subset_members" -j |
		jq -r '[.[].key[0:4] | join(",")] | group_by(.) | map("\(.[0]) \(length)") | .[]'
}

@test "subsets share the ring; a small subset gets a dedicated ring; apply is idempotent" {
	run -0 $KR_BIN apply --pin-dir "$D" -c "$BATS_TEST_TMPDIR/s.json"
	assert_output --partial "rings 2 published"
	run -0 $KR_BIN ring status --json --pin-dir "$D"
	run -0 jq -r '[.[].name] | sort | join(" ")' <<< "$output"
	assert_output "pool pool[few]"
	run -0 members
	[ "${#lines[@]}" -eq 30 ]
	for l in "${lines[@]}"; do [ "${l##* }" -eq 290 ]; done
	# every subset service names one of those ids; "few" (10 of 300) has none
	ids=$(members | cut -d' ' -f1 | sort)
	run -0 bash -c "bpftool map dump pinned '$D/kr_services' -j |
		jq -r '.[].value[36:40] | join(\",\")' | sort -u"
	[ "${#lines[@]}" -eq 31 ]
	assert_line "0x00,0x00,0x00,0x00"
	[ "$(printf '%s\n' "${lines[@]}" | grep -v '^0x00,0x00,0x00,0x00$' | sort)" = "$ids" ]
	run -0 $KR_BIN apply --pin-dir "$D" -c "$BATS_TEST_TMPDIR/s.json"
	assert_output --partial "apply: nothing changed"
	[ "$(members | wc -l)" -eq 30 ]
}

@test "members of subsets the config no longer has are removed" {
	run -0 $KR_BIN apply --pin-dir "$D" -c "$BATS_TEST_TMPDIR/s.json"
	run -0 $KR_BIN apply --pin-dir "$D" -c "$BATS_TEST_TMPDIR/two.json"
	assert_output --partial "1 removed"
	run -0 members
	[ "${#lines[@]}" -eq 2 ]
}
