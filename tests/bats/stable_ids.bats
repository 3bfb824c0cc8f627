#!/usr/bin/env bats
# Stable backend ids (issue 23 point 4, docs/operations.md "Backend identity"): the same
# configuration gives every server the same id on any router and after unload + load,
# whatever the order it lists rings and backends in, and after any apply history; the ids
# are the ones tests/bats/backend_ids_ref.py computes from the documented rule on its own
# (homes, and a collision: 10.66.5.14:53, 10.66.9.211:53 and 10.66.10.147:53 share home
# 29112).  Two "routers": two instances on two veths of one namespace, real `load` (generic
# XDP), `status --json`, `unload`.

bats_require_minimum_version 1.5.0

setup_file() {
	load ops_helpers
	kr_prereq
	export P="kr-sid-$$"
	export KR_TMP
	KR_TMP=$(mktemp -d "/tmp/$P.XXXXXX")
	ip netns add "$P-r" || return 1
	ip -n "$P-r" link add sida type veth peer name sidb || return 1
	ip -n "$P-r" link set sida up && ip -n "$P-r" link set sidb up && ip -n "$P-r" link set lo up
}

teardown_file() {
	load ops_helpers
	kr_topo_down
}

setup() {
	load ops_helpers
	kr_prereq
	[ -e "/run/netns/$P-r" ] || skip "no namespace"
	T=$BATS_TEST_TMPDIR
	REF="$KR_PY $BATS_TEST_DIRNAME/backend_ids_ref.py"
}

teardown() {
	kr unload sida --instance "$P-1" >/dev/null 2>&1 || true
	kr unload sidb --instance "$P-2" >/dev/null 2>&1 || true
	return 0
}

# cfg FILE 'RING:LAST,LAST,...' ... : ring RING with backends 10.66.LAST:53 (LAST "x.y"),
# MAC 02:66:00:00:x:y, one l2 service per ring
cfg() {
	local f=$1; shift
	"$KR_PY" - "$f" "$@" <<'PY'
import json, sys
rings, svcs = [], []
for n, spec in enumerate(sys.argv[2:]):
    name, bs = spec.split(":", 1)
    b = []
    for x in bs.split(","):
        c, d = map(int, x.split("."))
        b.append({"address": "10.66.%d.%d:53" % (c, d), "mac": "02:66:00:00:%02x:%02x" % (c, d)})
    rings.append({"name": name, "format": "v2", "point_multiple": 16, "backends": b})
    svcs.append({"name": name, "vip": "10.99.0.1", "port": 7000 + n, "key": {"type": "payload"},
                 "ring": name, "forward": {"mode": "l2"}})
json.dump({"rings": rings, "services": svcs}, open(sys.argv[1], "w"))
PY
}

# "ADDRESS:PORT ID" of every backend of instance $1, sorted by id
ids() {
	kr status --json --instance "$1" |
		jq -r '.backends[] | "\(.address) \(.id)"' | sort -n -k2
}

# the ids the reference gives config $1
ref() { $REF ids "$1"; }

@test "the same config on two routers, listed in another order, and after unload + load: identical ids, the reference's" {
	cfg "$T/a.json" "web:1.1,5.14,9.211,1.2,10.147" "api:1.2,2.7"
	cfg "$T/b.json" "api:2.7,1.2" "web:10.147,9.211,1.2,5.14,1.1"
	run -0 $REF home 10.66.5.14:53
	[ "$output" = 29112 ]
	run -0 kr load sida -c "$T/a.json" --mode generic --instance "$P-1"
	run -0 kr load sidb -c "$T/b.json" --mode generic --instance "$P-2"
	ids "$P-1" > "$T/ids1"
	ids "$P-2" > "$T/ids2"
	[ "$(wc -l < "$T/ids1")" -eq 6 ]
	diff "$T/ids1" "$T/ids2"
	ref "$T/a.json" > "$T/ref"
	diff "$T/ids1" "$T/ref"
	# the collision, resolved by address: 10.66.5.14 29112, 10.66.9.211 29113, 10.66.10.147 29114
	grep -qx '10.66.5.14:53 29112' "$T/ids1"
	grep -qx '10.66.9.211:53 29113' "$T/ids1"
	grep -qx '10.66.10.147:53 29114' "$T/ids1"
	# bpftool sees the same: the kr_backends entry of id 29113 is 10.66.9.211
	bpftool -j map lookup pinned "/sys/fs/bpf/keyrouter/$P-2/kr_backends" key 0xb9 0x71 0 0 |
		jq -e '.value[0:4] == ["0x0a","0x42","0x09","0xd3"]'
	run -0 kr unload sida --instance "$P-1"
	run -0 kr load sida -c "$T/b.json" --mode generic --instance "$P-1"
	ids "$P-1" > "$T/ids3"
	diff "$T/ids1" "$T/ids3"
}

@test "an apply history keeps live ids; unload + load gives the ids of a fresh load" {
	cfg "$T/h0.json" "web:1.1,9.211,1.2"
	cfg "$T/h1.json" "web:1.1,9.211,1.2,5.14" "api:2.7,3.3"
	cfg "$T/h2.json" "web:1.1,5.14,9.211" "api:3.3,4.4,2.7"
	run -0 kr load sida -c "$T/h0.json" --mode generic --instance "$P-1"
	ids "$P-1" > "$T/h0"
	grep -qx '10.66.9.211:53 29112' "$T/h0"	# alone at its home
	# each a membership change of more than max_move of a ring's keys: forced
	run -0 kr apply --force -c "$T/h1.json" --instance "$P-1"
	run -0 kr apply --force -c "$T/h2.json" --instance "$P-1"
	ids "$P-1" > "$T/h2"
	# servers that stayed kept their ids: 10.66.9.211 still holds 29112, so 10.66.5.14
	# (whose canonical id it is) got the next one
	for a in 10.66.1.1:53 10.66.9.211:53; do
		[ "$(grep "^$a " "$T/h0")" = "$(grep "^$a " "$T/h2")" ]
	done
	grep -qx '10.66.5.14:53 29113' "$T/h2"
	[ "$(wc -l < "$T/h2")" -eq 6 ]
	# a fresh load of h2 on the other router: the canonical ids
	run -0 kr load sidb -c "$T/h2.json" --mode generic --instance "$P-2"
	ids "$P-2" > "$T/fresh"
	ref "$T/h2.json" > "$T/ref"
	diff "$T/fresh" "$T/ref"
	grep -qx '10.66.5.14:53 29112' "$T/fresh"
	# the servers the history never made collide have their canonical ids already
	[ "$(grep -v -e '^10.66.5.14:' -e '^10.66.9.211:' "$T/h2")" = \
	  "$(grep -v -e '^10.66.5.14:' -e '^10.66.9.211:' "$T/fresh")" ]
	# unload + load after the history: identical to the fresh load
	run -0 kr unload sida --instance "$P-1"
	run -0 kr load sida -c "$T/h2.json" --mode generic --instance "$P-1"
	ids "$P-1" > "$T/reload"
	diff "$T/reload" "$T/fresh"
}

@test "pinned ids (\"id\"): the pins, the others canonical around them, on both routers; conflicts refused; a new pin moves a live server" {
	cfg "$T/p.json" "web:1.1,5.14,9.211" "api:9.211,2.7"
	# pin 10.66.9.211 to 29112 (10.66.5.14's home) in ring api only, 10.66.1.1 to 7
	jq '.rings[1].backends[0].id = 29112 | .rings[0].backends[0].id = 7' "$T/p.json" > "$T/a.json"
	jq '.rings |= reverse | .rings[].backends |= reverse' "$T/a.json" > "$T/b.json"
	run -0 kr load sida -c "$T/a.json" --mode generic --instance "$P-1"
	run -0 kr load sidb -c "$T/b.json" --mode generic --instance "$P-2"
	ids "$P-1" > "$T/ids1"
	ids "$P-2" > "$T/ids2"
	diff "$T/ids1" "$T/ids2"
	ref "$T/a.json" > "$T/ref"
	diff "$T/ids1" "$T/ref"
	grep -qx '10.66.1.1:53 7' "$T/ids1"
	grep -qx '10.66.9.211:53 29112' "$T/ids1"
	grep -qx '10.66.5.14:53 29113' "$T/ids1"
	# one id for two servers: refused, both places named, nothing changed
	jq '.rings[0].backends[1].id = 7' "$T/a.json" > "$T/dup.json"
	run -1 kr apply -c "$T/dup.json" --instance "$P-1"
	assert_output --partial "rings[0].backends[1].id: id 7 of backend 10.66.5.14:53 is also the id of 10.66.1.1:53 in ring 'web' (rings[0].backends[0])"
	ids "$P-1" > "$T/after"
	diff "$T/ids1" "$T/after"
	# a pin another live server holds: refused with what to do
	jq '.rings[0].backends[0].id = 29113' "$T/a.json" > "$T/busy.json"
	run -1 kr apply -c "$T/busy.json" --instance "$P-1"
	assert_output --partial "\"id\" 29113 is in use by the live backend 10.66.5.14:53"
	assert_output --partial "nothing was changed"
	# a new pin moves 10.66.1.1: 7 -> 100, entry 7 cleared
	jq '.rings[0].backends[0].id = 100' "$T/a.json" > "$T/move.json"
	run -0 kr apply -c "$T/move.json" --instance "$P-1"
	assert_output --partial "backends 1 added, 0 changed, 1 released"
	grep -qx '10.66.1.1:53 100' <(ids "$P-1")
	bpftool -j map lookup pinned "/sys/fs/bpf/keyrouter/$P-1/kr_backends" key 100 0 0 0 |
		jq -e '.value[0:4] == ["0x0a","0x42","0x01","0x01"]'
	bpftool -j map lookup pinned "/sys/fs/bpf/keyrouter/$P-1/kr_backends" key 7 0 0 0 |
		jq -e '.value[18] == "0x00"'
}
