#!/usr/bin/env bats
# Swap under load: 16 backends, ring "web" as two rings that send ~15/16 of the keys to
# different backends (the same backends, their ring port differing: another point set),
# a client streaming distinct keys at 10k packets/s while the ring is staged, migrated,
# committed and rolled back again and again (tests/bats/ops_swapdrive.py: >= 100 routing
# transitions, each changing where keys go).  Every packet must arrive exactly once, at
# the backend its key and a ring state possibly in force between its sending and its
# arrival predict (tests/bats/ops_swapcheck.py: measured times only, no slack).

bats_require_minimum_version 1.5.0

setup_file() {
	load ops_helpers
	kr_prereq
	export P="kr-ops-$$-sw"
	kr_topo_up 16 || { kr_topo_down; return 1; }
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
}

@test "swap under load: 16 backends, 10k packets/s, >= 100 transitions, none lost, misrouted or duplicated" {
	local all spid n
	all=$(seq 1 16)
	kr_config "$KR_TMP/A.json" 160
	KR_BE_PORT=7001 kr_config "$KR_TMP/B.json" 160
	run -0 kr load r0 -c "$KR_TMP/A.json" --instance "$P"
	for i in $all; do : > "$KR_TMP/b$i.log"; done
	kr_ns c $KR_PY "$KR_UDP" pace "$VIP" "$PORT" s 10000 "$KR_TMP/sent" "$KR_TMP/stop" \
		3>&- &
	spid=$!
	for n in $(seq 1 100); do [ -e "$KR_TMP/sent.started" ] && break; sleep 0.05; done
	[ -e "$KR_TMP/sent.started" ]
	sleep 0.2
	run -0 $KR_PY "$KR_ROOT/tests/bats/ops_swapdrive.py" "$P-r" "$P" "$KR_TMP" 100 $$ \
		"$KR_BIN"
	sleep 0.2
	touch "$KR_TMP/stop"
	wait "$spid"
	sleep 1
	n=$(wc -l < "$KR_TMP/sent")
	kr_expected s 0 "$n" 160 $all > "$KR_TMP/exp.A"
	KR_BE_PORT=7001 kr_expected s 0 "$n" 160 $all > "$KR_TMP/exp.B"
	run -0 kr ring status web --instance "$P"
	echo "$output" | sed 's/^/# /' >&3
	run $KR_PY "$KR_ROOT/tests/bats/ops_swapcheck.py" "$KR_TMP/sent" "$KR_TMP/trans" \
		"$KR_TMP/exp.A" "$KR_TMP/exp.B" $(for i in $all; do echo "$KR_TMP/b$i.log"; done)
	echo "$output" | sed 's/^\([^#]\)/# \1/' >&3
	[ "$status" = 0 ]
	[[ "$output" == *"swap under load: transitions "* ]]
	run -0 kr unload r0
}
