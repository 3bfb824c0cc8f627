#!/usr/bin/env bats
# A router that heals itself (issue 23, points 1 and 2):
#   - liveness: a program detached behind keyrouter's back is seen by status (exit 3), check
#     (CRITICAL), the exposition (keyrouter_attached 0 beside keyrouter_up 1), and restored
#     by apply and by the unit's start and reload lines -- traffic flows again;
#   - recovery: kill -9 of load at >= 20 moments spread over a 2M-point load, and of apply,
#     ring stage and unload at several moments each (strace's fault injection: SIGKILL on
#     entry to the K-th bpf / netlink / mkdir / unlink call; tests/bats/ops_killtest.py):
#     the next load or unload cleans up or completes by itself, the load routes every key
#     where the ring says (real UDP packets), and unload leaves no pin, no attached program
#     and none of the maps or programs the killed command left.
# Topology: tests/bats/ops_helpers.bash (client -> router r0 -> 3 backends on one L2).

bats_require_minimum_version 1.5.0

setup_file() {
	load ops_helpers
	kr_prereq
	command -v strace >/dev/null || skip "needs strace"
	export P="kr-heal-$$"
	kr_topo_up 3 || { kr_topo_down; return 1; }
	kr_recv_start
	# 3 backends x 666667 points: a 2,000,001-point ring; heal_b: 2 of them
	kr_config "$KR_TMP/heal_a.json" 666667 1 2 3
	kr_config "$KR_TMP/heal_b.json" 666667 1 2
	kr_expected h 0 100 666667 1 2 3 > "$KR_TMP/exp.heal_a"
	kr_expected h 0 100 666667 1 2 > "$KR_TMP/exp.heal_b"
	kr_config "$KR_TMP/small.json" 160 1 2 3
	kr_expected h 0 100 160 1 2 3 > "$KR_TMP/exp.small"
}

teardown_file() {
	load ops_helpers
	kr_topo_down
	[ -z "${P:-}" ] || rm -f "/etc/keyrouter/$P-u.json"
}

setup() {
	load ops_helpers
	kr_prereq
	[ -n "${KR_TMP:-}" ] || skip "no topology"
	I=$P-heal
}

teardown() {
	kr unload r0 --instance "$I" >/dev/null 2>&1 || true
	kr unload r0 --instance "$P-u" >/dev/null 2>&1 || true
	kr_ns r ip link set dev r0 xdp off 2>/dev/null || true
	rm -rf "/sys/fs/bpf/keyrouter/$I" "/sys/fs/bpf/keyrouter/$P-u"
	return 0
}

# ops_killtest.py MODE MOMENTS with a bpf filesystem of its own (a private mount namespace):
# no instance of another test or user changes the calls a command makes (a load reads the
# record of every instance), so the moments of the traced run are those of the killed ones.
killtest() { # mode moments min-moments
	run unshare -m --propagation private sh -c 'mount -t bpf bpf /sys/fs/bpf && exec "$@"' \
		sh env KR_BIN="$KR_BIN" VIP="$VIP" PORT="$PORT" "$KR_PY" tests/bats/ops_killtest.py "$1" "$2"
	echo "$output" | sed 's/^/# /' >&3
	[ "$status" = 0 ]
	assert_line --regexp "^kill test $1: moments [0-9]+ failed 0$"
	n=$(sed -n "s/^kill test $1: moments \([0-9]*\) .*/\1/p" <<<"$output")
	[ "$n" -ge "$3" ]
}

@test "kill -9 of load at >= 20 moments of a 2M-point load: the next load or unload recovers, the load routes, unload leaves nothing" {
	cd "$KR_ROOT"
	killtest load 22 20
	# the moments reach the whole load: before anything, right after the attach (a program
	# attached, its id not recorded yet), with part of the pins, and in the apply
	assert_output --regexp "load at [a-z]+ call [0-9]+ \(.*\): killed; left nothing;"
	assert_output --regexp "left [0-9]+ pins, record loading, program [0-9]+ attached"
	assert_output --partial "left 2 pins, record loading, program"
	refute_output --regexp "record finished, no program attached"
}

@test "kill -9 of apply at several moments: the next apply converges and routes; after one more, unload leaves nothing" {
	cd "$KR_ROOT"
	killtest apply 8 6
}

@test "kill -9 of ring stage at several moments: routing stays on the active ring, the next stage converges; then unload leaves nothing" {
	cd "$KR_ROOT"
	killtest stage 6 5
}

@test "kill -9 of unload at several moments: the next unload or load completes it" {
	cd "$KR_ROOT"
	killtest unload 7 6
	assert_output --partial "record finished, no program attached"
}

# Route keys h0..h99 and compare with exp.$1 (every key at its predicted backend).
routes_as() {
	for i in $(seq 1 "$KR_NB"); do : > "$KR_TMP/b$i.log"; done
	kr_send h 0 100
	kr_wait_recv h 100 || true
	kr_received h > "$KR_TMP/got"
	diff "$KR_TMP/exp.$1" "$KR_TMP/got"
}

# No key reaches a backend (the router's stack does not route the VIP).
routes_none() {
	for i in $(seq 1 "$KR_NB"); do : > "$KR_TMP/b$i.log"; done
	kr_send h 0 100
	sleep 1
	[ "$(cat "$KR_TMP"/b*.log | grep -c ' h')" = 0 ]
}

@test "detached behind keyrouter's back: status exits 3 and says what to run, check is CRITICAL, keyrouter_attached 0; apply attaches it again (XDP and TC)" {
	for mode in generic tc; do
		run -0 kr load r0 -c "$KR_TMP/small.json" --mode $mode --instance "$I"
		run -0 routes_as small
		run -0 kr check --instance "$I"
		assert_output --regexp "^KEYROUTER OK - instance $I: attached to r0 \($mode mode"
		if [ $mode = tc ]; then
			kr_ns r tc filter del dev r0 ingress
		else
			kr_ns r ip link set dev r0 xdpgeneric off
		fi
		run -0 routes_none
		run -3 kr status --instance "$I"
		assert_line --index 0 --partial "r0 (not attached any more"
		assert_output --partial "keyrouter: instance '$I' is not attached: its program"
		assert_output --partial "'keyrouter apply -c CONFIG --instance $I' attaches it again"
		run -3 kr status --json --instance "$I"
		run -2 kr check --instance "$I"
		assert_output --regexp "^KEYROUTER CRITICAL - instance $I: NOT attached to r0"
		[ "$(wc -l <<<"$output")" = 1 ]
		# the exposition (also from the host: the instance's namespace is entered)
		for where in kr "$KR_BIN"; do
			run -0 $where status --prometheus --instance "$I"
			assert_line "keyrouter_up{keyrouter_instance=\"$I\"} 1"
			assert_line "keyrouter_attached{keyrouter_instance=\"$I\"} 0"
		done
		# a dry run says so and changes nothing
		run -0 kr apply -c "$KR_TMP/small.json" --instance "$I" --dry-run
		assert_output --partial "apply would attach it again ($mode mode)"
		run -3 kr status --instance "$I"
		run -0 kr apply -c "$KR_TMP/small.json" --instance "$I"
		assert_output --partial "was not attached to 'r0' any more: attached it again ($mode mode)"
		assert_output --partial "apply: nothing changed"
		run -0 kr status --instance "$I"
		assert_line --index 0 --partial "r0 (attached)"
		run -0 "$KR_BIN" status --prometheus --instance "$I"
		assert_line "keyrouter_attached{keyrouter_instance=\"$I\"} 1"
		run -0 routes_as small
		run -0 kr check --instance "$I"
		run -0 kr unload r0 --instance "$I"
		[ ! -e "/sys/fs/bpf/keyrouter/$I" ]
	done
}

@test "the unit's start and reload lines restore a detached program; check is WARNING with a backend down" {
	U=$P-u
	mkdir -p /etc/keyrouter
	cp "$KR_TMP/small.json" "/etc/keyrouter/$U.json"
	# run the unit's ExecXXX line as systemd would: %i, its Environment=, this tree's tool
	unit() {
		local line
		line=$(sed -n "s/^$1=//p" "$KR_ROOT/dist/systemd/keyrouter@.service")
		line=${line//%i/$U}
		line=${line//\/usr\/sbin\/keyrouter/$KR_BIN}
		(
			export KEYROUTER_IFACE=r0 KEYROUTER_MODE=generic
			line=${line//\$\{KEYROUTER_IFACE\}/$KEYROUTER_IFACE}
			eval "set -- $line"
			nsenter --net="/run/netns/$P-r" "$@"
		)
	}
	# start = ExecStartPre (upgrade in place, only when attached), then ExecStart
	start() { unit ExecStartPre && unit ExecStart; }
	run -0 start
	assert_output --partial "loaded on r0 (generic mode"
	run -0 routes_as small
	for line in start "unit ExecReload"; do
		kr_ns r ip link set dev r0 xdpgeneric off
		run -0 routes_none
		run -0 $line
		assert_output --partial "attached it again (generic mode)"
		# start: then the installed build replaces the pinned one, in place
		[ "$line" != start ] || assert_output --partial "upgraded instance '$U' on r0 in place"
		run -0 kr status --instance "$U"
		run -0 routes_as small
	done
	run -0 kr backend set "$(kr_bip 2):$PORT" down --instance "$U"
	run -1 kr check --instance "$U"
	assert_output --regexp "^KEYROUTER WARNING - .*backends 2 up, 1 down, 0 drain \| backends=3 backends_up=2 backends_down=1 backends_drain=0$"
	run -0 unit ExecStop
	[ ! -e "/sys/fs/bpf/keyrouter/$U" ]
	run -2 kr check --instance "$U"
	assert_output "KEYROUTER CRITICAL - instance $U is not loaded (no '/sys/fs/bpf/keyrouter/$U')"
}
