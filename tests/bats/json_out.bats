#!/usr/bin/env bats
# What the CLI writes for programs to read is well-formed whatever the names in it:
# status / stats / ring status --json are built with jansson (an interface named q"\z, a
# --pin-dir with quotes, backslashes, < and &), one JSON field per fact; the SVG of
# `plan --plot` escapes the path of --backends.  Parsed by Debian's python (json,
# xml.etree), not matched as text.
bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
load kr_instance

PY=/usr/bin/python3

setup() {
	kr_instance_setup
	D=
}

teardown() {
	if [ -n "${N:-}" ]; then
		nsenter --net="/run/netns/$N" "$KK" unload 'q"\z' --instance "$N" >/dev/null 2>&1
		rm -rf "/sys/fs/bpf/keyrouter/$N"
		ip netns del "$N" 2>/dev/null
	fi
	[ -z "$D" ] || rm -rf "$D"
	return 0
}

config() {
	cat > "$T/c.json" <<'JSON'
{ "rings": [ { "name": "r", "format": "v2", "backends": [ { "address": "10.9.0.2:53" } ] } ],
  "services": [ { "name": "s", "vip": "10.1.0.1", "port": 53, "key": { "type": "dns" },
    "ring": "r", "forward": { "mode": "ipip", "source4": "10.0.0.9" } } ] }
JSON
}

# jget EXPR < JSON: python's json parses standard input (fails on invalid JSON) and prints
# EXPR of it (d: the document)
jget() { $PY -c 'import json, sys; d = json.load(sys.stdin); print(eval("(%s)" % sys.argv[1]))' "$@"; }

@test "status, stats, ring status --json on an interface named q\"\\z: valid JSON, the name as it is" {
	needs_root
	config
	N=kr-json-$$
	ip netns add "$N"
	ip -n "$N" link add 'q"\z' type veth peer name v1
	ip -n "$N" link set 'q"\z' up
	ip -n "$N" link set v1 up
	run -0 nsenter --net="/run/netns/$N" "$KK" -q load 'q"\z' -c "$T/c.json" --mode generic \
		--instance "$N"
	members=$(sed -n '/^struct kr_counters {/,/^};/s/^\t__u64 \([a-z_]*\);.*/\1/p' \
		include/kr_datapath_kern_user.h)
	[ "$(wc -w <<< "$members")" -gt 15 ]
	for cmd in status stats; do
		nsenter --net="/run/netns/$N" "$KK" $cmd --json --instance "$N" > "$T/$cmd.json"
		run -0 jget 'd["instance"]["interface"]' < "$T/$cmd.json"
		assert_output 'q"\z'
		run -0 jget 'd["instance"]["attached"], d["rings"][0]["name"], d["backends"][0]["address"]' \
			< "$T/$cmd.json"
		assert_output "('yes', 'r', '10.9.0.2:53')"
		# the global counters: every member of struct kr_counters but pad, each a number
		run -0 jget 'sorted(d["counters"]) == sorted(sys.argv[2].split()) and
			all(type(v) is int for v in d["counters"].values())' "$members" \
			< "$T/$cmd.json"
		assert_output True
	done
	run -0 jget 'd["services"][0]["name"], d["service_counters"][0]["name"]' < "$T/status.json"
	assert_output "('s', 's')"
	# one field for the one flag of a ring (dedicated subset ring), none named "subset"
	nsenter --net="/run/netns/$N" "$KK" ring status --json --instance "$N" > "$T/ring.json"
	run -0 jget '[(r["dedicated_subset_ring"], "subset" in r) for r in d]' < "$T/ring.json"
	assert_output "[(False, False)]"
}

@test "status and stats --json with a --pin-dir holding a quote, a backslash, < and &: valid JSON" {
	needs_root
	config
	D="/sys/fs/bpf/kr-json-$$-a\"b\\c<&"
	mkdir -p "$D"
	bpftool prog loadall "${OUT:-build}/bpf/keyrouter.bpf.o" "$D/progs" pinmaps "$D"
	run -0 "$KK" apply --pin-dir "$D" -c "$T/c.json"
	for cmd in status stats; do
		"$KK" $cmd --json --pin-dir "$D" > "$T/$cmd.json"
		run -0 jget 'd["instance"]["pin_dir"]' < "$T/$cmd.json"
		assert_output "$D"
	done
	"$KK" ring status --json --pin-dir "$D" > "$T/ring.json"
	run -0 jget '[r["name"] for r in d]' < "$T/ring.json"
	assert_output "['r']"
}

@test "plan --plot: the SVG of a --backends path with <&\"' parses as XML and shows the path" {
	B="$T/b<&\"'.txt"
	printf '10.0.0.%d:443 1\n' 1 2 3 4 > "$B"
	run -0 $K plan --backends "$B" --target-cv 5% --no-measure --no-table --plot "$T/p.svg"
	run -0 $PY -c '
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
print("\n".join("".join(t.itertext()) for t in root.iter("{http://www.w3.org/2000/svg}text")))' \
		"$T/p.svg"
	assert_line "4 servers from $B, total weight 4"
}
