#!/usr/bin/env bats
# Backend identity (docs/operations.md "Backend identity"): one id per server -- address,
# port and forwarding (MAC, device) -- shared by every ring that has it; forwarding
# changes in place; one state and one `backend set` write per server; the config's state
# merged over the rings; and the fixed id space (kr_backends, 65536 entries): a
# configuration with more servers is refused before anything changes.  Maps from plain
# `bpftool prog loadall ... pinmaps` (no interface needed).  The same at the seeds' scale
# (64 rings x 2048 servers, the kernel's routing): tests/bpf/test_scale.c.

bats_require_minimum_version 1.5.0

setup() {
	load ops_helpers
	[ "$(id -u)" = 0 ] || skip "needs root"
	[ -x "$KR_BIN" ] || skip "no $KR_BIN"
	[ -f "$KR_OBJ" ] || skip "no $KR_OBJ"
	D=/sys/fs/bpf/kr-ids-$$-$BATS_TEST_NUMBER
	T=$BATS_TEST_TMPDIR
	mkdir -p "$D"
	bpftool prog loadall "$KR_OBJ" "$D/progs" pinmaps "$D"
}

teardown() {
	rm -rf "$D"
}

# cfg FILE 'RING:ADDR/MAC[/STATE],...' ... : one ring per argument after FILE
cfg() {
	local f=$1; shift
	/usr/bin/python3 - "$f" "$@" <<'PY'
import json, sys
rings = []
for spec in sys.argv[2:]:
    name, bs = spec.split(":", 1)
    b = []
    for x in bs.split(","):
        p = x.split("/")
        e = {"address": p[0] + ":53", "mac": p[1]}
        if len(p) > 2:
            e["state"] = p[2]
        b.append(e)
    rings.append({"name": name, "format": "v2", "point_multiple": 40, "backends": b})
json.dump({"rings": rings}, open(sys.argv[1], "w"))
PY
}

# kr_backends entries in use, as bpftool sees them: "ID ADDRESS:PORT MAC state S".
# bpftool's raw key and value bytes of each of the 65536 entries, picked out of its JSON by
# a pattern: json.load of the whole dump (30 MB with the BTF-formatted copy) took 10 times
# longer.  Every entry must be found, or the pattern no longer fits bpftool's output.
entries() {
	bpftool -j map dump pinned "$D/kr_backends" | /usr/bin/python3 -c '
import re, sys
n = 0
for m in re.finditer(r"\"key\":\[([^]]*)\],\"value\":\[([^]]*)\]", sys.stdin.read()):
    n += 1
    v = m.group(2).split(",")
    if v[18] == "\"0x00\"":
        continue
    k = bytes(int(x.strip("\""), 16) for x in m.group(1).split(","))
    v = bytes(int(x.strip("\""), 16) for x in v)
    print("%d %s:%d %s state %d" % (int.from_bytes(k, "little"), ".".join(map(str, v[0:4])),
          int.from_bytes(v[16:18], "big"), ":".join("%02x" % b for b in v[20:26]), v[19]))
if n != 65536:
    sys.exit("entries: %d entries in bpftool'"'"'s dump of kr_backends, expected 65536" % n)'
}

M1=02:00:00:00:00:01 M2=02:00:00:00:00:02 M3=02:00:00:00:00:03 M4=02:00:00:00:00:04
M9=02:00:00:00:00:99

@test "rings that share servers share their ids; status lists each server once; backend set is one write" {
	cfg "$T/c.json" "a:10.0.0.1/$M1,10.0.0.2/$M2,10.0.0.3/$M3" "b:10.0.0.2/$M2,10.0.0.3/$M3,10.0.0.4/$M4"
	run -0 $KR_BIN apply --pin-dir "$D" -c "$T/c.json"
	assert_output --partial "rings 2 published"
	assert_output --partial "backends 4 added, 0 changed, 0 released, 0 unchanged"
	run -0 entries
	[ "${#lines[@]}" -eq 4 ]
	# 10.0.0.2:53 is in both rings: one entry, listed once, with both rings
	run -0 $KR_BIN status --json --pin-dir "$D"
	jq -e '.backends | length == 4' <<< "$output"
	jq -e '[.backends[] | select(.address == "10.0.0.2:53")] | length == 1' <<< "$output"
	jq -e '.backends[] | select(.address == "10.0.0.2:53") | .rings == ["a", "b"]' <<< "$output"
	jq -e '.backends[] | select(.address == "10.0.0.1:53") | .rings == ["a"]' <<< "$output"
	entries > "$T/before"
	run -0 $KR_BIN backend set 10.0.0.2:53 down --pin-dir "$D"
	# one server line, then what down means
	[ "${#lines[@]}" -eq 2 ]
	assert_line --index 0 --regexp '^backend 10\.0\.0\.2:53 \(id [0-9]+, 2 rings\): down$'
	assert_line --index 1 --partial "(down: the failover walk skips it"
	entries > "$T/after"
	# exactly one entry differs: that server's state
	[ "$(diff "$T/before" "$T/after" | grep -c '^>')" -eq 1 ]
	diff "$T/before" "$T/after" | grep '^>' | grep -q ' 10.0.0.2:53 02:00:00:00:00:02 state 1$'
	# --ring only picks among that ring's backends: 10.0.0.1 is not in b
	run -1 $KR_BIN backend set 10.0.0.1:53 down --ring b --pin-dir "$D"
	assert_output --partial "no backend '10.0.0.1:53' in ring b"
	run -0 $KR_BIN apply --pin-dir "$D" -c "$T/c.json"
	assert_output --partial "apply: nothing changed (2 rings, 0 services, 4 backends up to date)"
}

@test "a server whose forwarding changes keeps its id: one entry rewritten in place, no ring republished" {
	cfg "$T/c.json" "a:10.0.0.1/$M1,10.0.0.2/$M2" "b:10.0.0.2/$M2,10.0.0.3/$M3"
	run -0 $KR_BIN apply --pin-dir "$D" -c "$T/c.json"
	run -0 $KR_BIN backend set 10.0.0.2:53 drain --pin-dir "$D"
	id=$(entries | awk '$2 == "10.0.0.2:53" { print $1 }')
	[ -n "$id" ]
	rings=$(bpftool -j map dump pinned "$D/kr_rings" | md5sum)
	cfg "$T/m.json" "a:10.0.0.1/$M1,10.0.0.2/$M9" "b:10.0.0.2/$M9,10.0.0.3/$M3"
	run -0 $KR_BIN apply --dry-run --pin-dir "$D" -c "$T/m.json"
	assert_line "backend id $id (10.0.0.2:53 of ring 'a', drain): would change its forwarding in place"
	run -0 $KR_BIN apply --pin-dir "$D" -c "$T/m.json"
	assert_output --partial "rings 0 published, 2 unchanged"
	assert_output --partial "backends 0 added, 1 changed, 0 released, 2 unchanged"
	run -0 entries
	[ "${#lines[@]}" -eq 3 ]
	# same id, the new MAC, the runtime state (drain) kept
	assert_line "$id 10.0.0.2:53 02:00:00:00:00:99 state 2"
	[ "$(bpftool -j map dump pinned "$D/kr_rings" | md5sum)" = "$rings" ]
}

@test "the same address with two forwardings is two backends; a server down in one ring's config is down" {
	cfg "$T/c.json" "a:10.0.0.1/$M1,10.0.0.2/$M2,10.0.0.3/$M3/down" "b:10.0.0.1/$M9,10.0.0.3/$M3"
	run -0 $KR_BIN apply --pin-dir "$D" -c "$T/c.json"
	assert_output --partial "backends 4 added"
	run -0 entries
	[ "${#lines[@]}" -eq 4 ]
	[ "$(printf '%s\n' "${lines[@]}" | grep -c ' 10.0.0.1:53 ')" -eq 2 ]
	assert_line --regexp '^[0-9]+ 10\.0\.0\.3:53 02:00:00:00:00:03 state 1$'
	run -0 $KR_BIN backend set 10.0.0.1:53 down --pin-dir "$D"
	[ "${#lines[@]}" -eq 3 ]	# two servers, then what down means
	# a server that leaves every ring is released
	cfg "$T/d.json" "a:10.0.0.1/$M1,10.0.0.2/$M2" "b:10.0.0.1/$M1"
	# ring b loses half of its backends: more than max_move, so forced
	run -0 $KR_BIN apply --force --pin-dir "$D" -c "$T/d.json"
	assert_output --partial "backends 0 added, 0 changed, 2 released, 2 unchanged"
	run -0 entries
	[ "${#lines[@]}" -eq 2 ]
}

@test "more servers than kr_backends holds (65536): the apply is refused before anything changes" {
	cfg "$T/c.json" "a:10.0.0.1/$M1,10.0.0.2/$M2"
	run -0 $KR_BIN apply --pin-dir "$D" -c "$T/c.json"
	[ "$(bpftool -j map show pinned "$D/kr_backends" | jq .max_entries)" = 65536 ]
	/usr/bin/python3 - "$T/big.json" <<'PY'
import json, sys
big = [{"address": "10.%d.%d.%d:1" % (1 + i // 65536, i // 256 % 256, i % 256)} for i in range(65536)]
rings = [{"name": "a", "format": "v2", "point_multiple": 1, "backends": big},
         {"name": "b", "format": "v2", "point_multiple": 1, "backends": [{"address": "10.9.0.1:1"}]}]
json.dump({"rings": rings}, open(sys.argv[1], "w"))
PY
	before=$( (entries; bpftool -j map dump pinned "$D/kr_rings") | md5sum)
	run -1 $KR_BIN apply --pin-dir "$D" -c "$T/big.json"
	assert_output --partial "no free backend ids left"
	assert_output --partial "more than 65536 servers"
	assert_output --partial "nothing was changed"
	[ "$( (entries; bpftool -j map dump pinned "$D/kr_rings") | md5sum)" = "$before" ]
}

@test "a second forwarding of a server, in a ring listed first, takes a new id: the existing entry stays as it is" {
	cfg "$T/c.json" "a:10.0.0.1/$M1,10.0.0.2/$M2"
	run -0 $KR_BIN apply --pin-dir "$D" -c "$T/c.json"
	run -0 entries
	old=$(entries | grep ' 10.0.0.1:53 ')
	cfg "$T/d.json" "b:10.0.0.1/$M9,10.0.0.3/$M3" "a:10.0.0.1/$M1,10.0.0.2/$M2"
	run -0 $KR_BIN apply --pin-dir "$D" -c "$T/d.json"
	assert_output --partial "rings 1 published, 1 unchanged"
	assert_output --partial "backends 2 added, 0 changed, 0 released, 2 unchanged"
	run -0 entries
	assert_line "$old"
	assert_line --regexp '^[0-9]+ 10\.0\.0\.1:53 02:00:00:00:00:99 state 0$'
}
