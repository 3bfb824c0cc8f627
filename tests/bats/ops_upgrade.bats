#!/usr/bin/env bats
# In-place upgrade (`keyrouter upgrade`, docs/operations.md "Upgrading the program"): two
# builds of the data path that differ in their code (the built-in one and
# build/tests/progs/kr_upgrade_w16.bpf.o, the same source with a 16-point lookup window:
# another program tag, the same maps) replace each other on a loaded instance while a client
# streams distinct keys at 10k packets/s through a ring in the middle of a migration, with a
# backend set down.  Every packet must arrive exactly once where the (unchanged) routing
# state predicts (tests/bats/ops_swapcheck.py, measured times only); after each upgrade the
# counters are at least what they were, the backend is still down, the backend ids, rings
# and migration are as they were (tests/bats/ops_upgradedrive.py).  A build whose map layout
# differs (kr_upgrade_layout.bpf.o: kr_backends with 4096 entries) is refused with the reason
# and leaves the running program and its maps untouched, and so is one whose .bss variable
# is renamed (kr_upgrade_btf.bpf.o: the same sizes, seen in the BTF).  TC mode: the filter
# is replaced.

bats_require_minimum_version 1.5.0

setup_file() {
	load ops_helpers
	kr_prereq
	export P="kr-ops-$$-up"
	kr_topo_up 4 || { kr_topo_down; return 1; }
	kr_recv_start
}

teardown_file() {
	load ops_helpers
	kr unload r0 >/dev/null 2>&1
	kr_topo_down
}

setup() {
	load ops_helpers
	kr_prereq
	[ -n "${KR_TMP:-}" ] || skip "no topology"
	OBJ_B=$KR_OUT/tests/progs/kr_upgrade_w16.bpf.o
	OBJ_L=$KR_OUT/tests/progs/kr_upgrade_layout.bpf.o
	OBJ_T=$KR_OUT/tests/progs/kr_upgrade_btf.bpf.o
	[ -f "$OBJ_B" ] && [ -f "$OBJ_L" ] && [ -f "$OBJ_T" ] || skip "no $OBJ_B (run make)"
}

# each test unloads what it loaded, also when it fails
teardown() {
	kr unload r0 >/dev/null 2>&1 || true
}

# "pin map-id" of every pin of instance $1: which maps the pins lead to.
pins_ids() {
	local f
	for f in /sys/fs/bpf/keyrouter/"$1"/*; do
		echo "$(basename "$f") $(bpftool -j map show pinned "$f" | $KR_PY -c \
			'import json, sys; print(json.load(sys.stdin)["id"])')"
	done
}

@test "upgrade under load: 10k packets/s of distinct keys, >= 20 upgrades between two builds, mid-migration, a backend down: none lost or misrouted, counters never decrease" {
	local spid n ups=24 out
	kr_config "$KR_TMP/A.json" 160
	KR_BE_PORT=7001 kr_config "$KR_TMP/B.json" 160
	run -0 kr load r0 -c "$KR_TMP/A.json" --instance "$P"
	# ring B staged and half migrated (kr_ring_ctl, both slots), backend 3 down in both
	run -0 kr ring stage web -c "$KR_TMP/B.json" --instance "$P"
	run -0 kr ring migrate web --percent 50 --instance "$P"
	run -0 kr backend set "$(kr_bip 3)" down --instance "$P"
	for i in 1 2 3 4; do : > "$KR_TMP/b$i.log"; done
	kr_ns c $KR_PY "$KR_UDP" pace "$VIP" "$PORT" u 10000 "$KR_TMP/sent" "$KR_TMP/stop" \
		3>&- &
	spid=$!
	for n in $(seq 1 100); do [ -e "$KR_TMP/sent.started" ] && break; sleep 0.05; done
	[ -e "$KR_TMP/sent.started" ]
	sleep 0.2
	run $KR_PY "$KR_ROOT/tests/bats/ops_upgradedrive.py" "$P-r" "$P" "$KR_TMP" $ups \
		"$KR_BIN" "$OBJ_B" A B 0 $((1 << 31))
	out=$output
	echo "$out" | sed 's/^/# /' >&3
	sleep 0.2
	touch "$KR_TMP/stop"
	wait "$spid"
	sleep 1
	[ "$status" = 0 ]
	[[ "$out" == "upgrades $ups ("* ]]
	n=$(wc -l < "$KR_TMP/sent")
	# the state in force throughout: backend 3 down (skipped: its keys go to the next
	# point's backend, as in a ring without it), half the keys on ring B
	kr_expected u 0 "$n" 160 1 2 4 > "$KR_TMP/exp.A"
	KR_BE_PORT=7001 kr_expected u 0 "$n" 160 1 2 4 > "$KR_TMP/exp.B"
	run $KR_PY "$KR_ROOT/tests/bats/ops_swapcheck.py" "$KR_TMP/sent" "$KR_TMP/trans" \
		"$KR_TMP/exp.A" "$KR_TMP/exp.B" $(for i in 1 2 3 4; do echo "$KR_TMP/b$i.log"; done)
	echo "$output" | sed 's/^\([^#]\)/# \1/' >&3
	[ "$status" = 0 ]
	[[ "$output" =~ swap\ under\ load:\ transitions\ 0\ packets\ ([0-9]+)\ lost\ ([0-9]+)\ misrouted\ ([0-9]+)\ duplicated\ ([0-9]+) ]]
	echo "# upgrade: ${BASH_REMATCH[1]} packets through $ups upgrades (both directions);" \
		"lost ${BASH_REMATCH[2]}, misrouted ${BASH_REMATCH[3]}, duplicated" \
		"${BASH_REMATCH[4]}; counters never decreased" >&3
	# nothing reached the down backend
	[ ! -s "$KR_TMP/b3.log" ]
	run -0 kr unload r0
	[ ! -e "/sys/fs/bpf/keyrouter/$P" ]
}

@test "upgrade refuses builds whose map layout differs (max_entries; a .bss variable by BTF): says which map and what to do, the running program and its maps untouched" {
	local id
	kr_config "$KR_TMP/A.json" 160
	run -0 kr load r0 -c "$KR_TMP/A.json" --instance "$P"
	run -0 kr status --json --instance "$P"
	id=$(echo "$output" | $KR_PY -c 'import json, sys; print(json.load(sys.stdin)["instance"]["prog_id"])')
	pins_ids "$P" > "$KR_TMP/pins.before"
	ip -n "$P-r" link show r0 > "$KR_TMP/link.before"
	run -1 kr upgrade r0 --object "$OBJ_L"
	echo "$output"
	[[ "$output" == *"refused"* ]]
	[[ "$output" == *"kr_backends: max_entries 4096, pinned 65536"* ]]
	[[ "$output" == *"nothing was changed"* ]]
	[[ "$output" == *"keyrouter unload r0 --instance $P"* ]]
	# the same sizes, another layout by name: seen in the BTF of the value (.bss)
	run -1 kr upgrade r0 --object "$OBJ_T"
	echo "$output"
	[[ "$output" == *"keyroute.bss: variable 0 is 'kr_trace_prev' (offset 0, "*"pinned 'kr_trace_last'"* ]]
	[[ "$output" == *"nothing was changed"* ]]
	# the same program, recorded and attached; the same maps behind the same pins
	run -0 kr status --json --instance "$P"
	[ "$(echo "$output" | $KR_PY -c 'import json, sys; i = json.load(sys.stdin)["instance"]; print(i["prog_id"], i["attached"])')" = "$id yes" ]
	grep -q "prog/xdp id $id " "$KR_TMP/link.before"
	run -0 ip -n "$P-r" link show r0
	[[ "$output" == *"prog/xdp id $id "* ]]
	pins_ids "$P" > "$KR_TMP/pins.after"
	diff "$KR_TMP/pins.before" "$KR_TMP/pins.after"
	# and it still routes
	for i in 1 2 3 4; do : > "$KR_TMP/b$i.log"; done
	kr_send r 0 300
	kr_wait_recv r 300
	diff <(kr_expected r 0 300 160 1 2 3 4) <(kr_received r)
	run -0 kr unload r0
}

# Rewrite the program id recorded in kr_ops_meta of instance $1 (struct kr_ops_meta: prog_id
# at byte 12).
set_meta_prog() { # instance id
	local f=/sys/fs/bpf/keyrouter/$1/kr_ops_meta
	# shellcheck disable=SC2046
	bpftool map update pinned "$f" key hex 00 00 00 00 value hex $(bpftool -j map dump \
		pinned "$f" | $KR_PY -c 'import json, struct, sys
v = bytearray(int(x, 16) for x in json.load(sys.stdin)[0]["value"])
v[12:16] = struct.pack("<I", int(sys.argv[1]))
print(" ".join("%02x" % b for b in v))' "$2")
}

prog_of() { # status --json output -> "prog_id attached"
	$KR_PY -c 'import json, sys; i = json.load(sys.stdin)["instance"]; print(i["prog_id"], i["attached"])'
}

@test "an upgrade interrupted between its swap and its record: the next upgrade finds the program by the instance's maps and records it" {
	local old new
	kr_config "$KR_TMP/A.json" 160
	run -0 kr load r0 -c "$KR_TMP/A.json" --instance "$P"
	old=$(kr status --json --instance "$P" | prog_of | cut -d' ' -f1)
	run -0 kr upgrade r0 --object "$OBJ_B"
	new=$(kr status --json --instance "$P" | prog_of | cut -d' ' -f1)
	[ "$new" != "$old" ]
	# what a kill -9 between the swap and the record leaves: the old id recorded
	set_meta_prog "$P" "$old"
	[ "$(kr status --json --instance "$P" | prog_of)" = "$old no" ]
	run -0 kr upgrade r0
	echo "$output"
	[[ "$output" == *"(id $new) is not the recorded one ($old) but uses this instance's maps"* ]]
	[[ "$output" == *"program $new (tag "* ]]
	run -0 ip -n "$P-r" link show r0
	new=$(echo "$output" | sed -n 's/.*prog\/xdp id \([0-9]*\) .*/\1/p')
	[ "$(kr status --json --instance "$P" | prog_of)" = "$new yes" ]
	for i in 1 2 3 4; do : > "$KR_TMP/b$i.log"; done
	kr_send i 0 100
	kr_wait_recv i 100
	diff <(kr_expected i 0 100 160 1 2 3 4) <(kr_received i)
	run -0 kr unload r0
	[ ! -e "/sys/fs/bpf/keyrouter/$P" ]
}

@test "upgrade in TC mode replaces the filter of the same handle; --if-attached does nothing on an instance that is not loaded" {
	local before after
	kr_config "$KR_TMP/A.json" 160
	run -0 kr upgrade --if-attached --instance "$P"
	[[ "$output" == *"not loaded: nothing to upgrade"* ]]
	run -1 kr upgrade --instance "$P"
	run -0 kr load r0 -c "$KR_TMP/A.json" --mode tc --instance "$P"
	for i in 1 2 3 4; do : > "$KR_TMP/b$i.log"; done
	kr_send t 0 100
	kr_wait_recv t 100
	run -0 ip netns exec "$P-r" tc filter show dev r0 ingress
	before=$(echo "$output" | sed -n 's/.* id \([0-9]*\) name kr_tc .*/\1/p')
	[ -n "$before" ]
	run -0 kr upgrade r0 --object "$OBJ_B"
	echo "$output"
	[[ "$output" == *"program $before (tag "* ]]
	run -0 ip netns exec "$P-r" tc filter show dev r0 ingress
	after=$(echo "$output" | sed -n 's/.* id \([0-9]*\) name kr_tc .*/\1/p')
	[ -n "$after" ]
	[ "$after" != "$before" ]
	[ "$(echo "$output" | grep -c 'name kr_tc')" = 1 ]
	run -0 kr status --json --instance "$P"
	[ "$(echo "$output" | $KR_PY -c 'import json, sys; s = json.load(sys.stdin); print(s["instance"]["prog_id"], s["counters"]["routed"] >= 100)')" = "$after True" ]
	kr_send t 100 100
	kr_wait_recv t 200
	diff <(kr_expected t 0 200 160 1 2 3 4) <(kr_received t)
	run -0 kr upgrade r0
	run -0 kr unload r0
	run -0 ip netns exec "$P-r" tc filter show dev r0 ingress
	[[ "$output" != *kr_tc* ]]
	[ ! -e "/sys/fs/bpf/keyrouter/$P" ]
}
