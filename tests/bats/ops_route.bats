#!/usr/bin/env bats
# Operations with real attachment and real packets: load/unload in native, generic and TC
# modes, apply idempotence, health, no maps left behind, the plain-bpftool path,
# coexistence with an xdp-loader program, kill -9 during apply.
# Topology: tests/bats/ops_helpers.bash (client -> router r0 -> 3 backends on one L2).

bats_require_minimum_version 1.5.0

setup_file() {
	load ops_helpers
	kr_prereq
	export P="kr-ops-$$-rt"
	kr_topo_up 3 || { kr_topo_down; return 1; }
	kr_recv_start
	kr_config "$KR_TMP/abc.json" 160 1 2 3
	kr_config "$KR_TMP/ab.json" 160 1 2
}

teardown_file() {
	load ops_helpers
	kr_topo_down
}

setup() {
	load ops_helpers
	kr_prereq
	[ -n "${KR_TMP:-}" ] || skip "no topology"
}

teardown() {
	kr unload r0 >/dev/null 2>&1 || true
	kr_ns r ip link set dev r0 xdp off 2>/dev/null || true
	kr_ns r xdp-loader unload r0 --all >/dev/null 2>&1 || true
	[ -d "/sys/fs/bpf/$P" ] && rm -rf "/sys/fs/bpf/$P"
	return 0
}

# Send 300 keys PREFIX0..PREFIX299 and check that every one arrived, at the backend the
# ring of the given backends (point_multiple pm) predicts.
route_check() { # prefix pm backend-indices...
	local prefix=$1
	shift
	kr_expected "$prefix" 0 300 "$@" > "$KR_TMP/want"
	for i in $(seq 1 "$KR_NB"); do : > "$KR_TMP/b$i.log"; done
	kr_send "$prefix" 0 300
	kr_wait_recv "$prefix" 300 || true
	kr_received "$prefix" > "$KR_TMP/got"
	echo "# received $(wc -l < "$KR_TMP/got") of 300" >&3
	run -0 diff "$KR_TMP/want" "$KR_TMP/got"
}

@test "load native, every key at its ring's backend, unload: nothing left" {
	run -0 kr load r0 -c "$KR_TMP/abc.json" --mode native --instance "$P"
	assert_output --partial "loaded on r0 (native mode"
	kr_ns r xdp-loader status r0 | grep -q kr_xdp
	route_check k 160 1 2 3
	# The maps of the instance (pinned ones and the ring images inside kr_rings).
	ids=$(for f in /sys/fs/bpf/keyrouter/$P/*; do bpftool map show pinned "$f" -j | jq .id; done
	      bpftool map dump pinned "/sys/fs/bpf/keyrouter/$P/kr_rings" -j | jq '.[].inner_map_id // .[].value' 2>/dev/null)
	n=$(echo "$ids" | grep -c .)
	[ "$n" -ge 6 ]
	run -1 kr load r0 -c "$KR_TMP/abc.json" --instance "$P"
	assert_output --partial "already"
	run -0 kr unload r0
	[ ! -e "/sys/fs/bpf/keyrouter/$P" ]
	run -1 kr unload r0
	assert_output --partial "not loaded on 'r0'"
	run -0 kr_ns r ip link show r0
	refute_output --partial "prog/xdp"
	# the kernel frees the maps once nothing holds them (asynchronously)
	for t in $(seq 1 50); do
		left=0
		for id in $ids; do bpftool map show id "$id" >/dev/null 2>&1 && left=$((left + 1)); done
		[ "$left" = 0 ] && break
		sleep 0.1
	done
	echo "# $n maps before unload, $left left after" >&3
	[ "$left" = 0 ]
}

@test "load generic and tc: routes the same, unload detaches" {
	run -0 kr load r0 -c "$KR_TMP/abc.json" --mode generic --instance "$P"
	kr_ns r ip link show r0 | grep -q "prog/xdp"
	route_check g 160 1 2 3
	run -0 kr unload r0
	run -0 kr_ns r ip link show r0
	refute_output --partial "prog/xdp"

	run -0 kr load r0 -c "$KR_TMP/abc.json" --mode tc --instance "$P"
	run -0 kr_ns r tc filter show dev r0 ingress
	assert_output --partial "kr_tc"
	route_check t 160 1 2 3
	run -0 kr unload r0
	run -0 kr_ns r tc filter show dev r0 ingress
	refute_output --partial "kr_tc"
	[ ! -e "/sys/fs/bpf/keyrouter/$P" ]
}

@test "apply is idempotent: a second apply changes nothing and says so" {
	run -0 kr load r0 -c "$KR_TMP/abc.json" --instance "$P"
	before=$(bpftool map dump pinned "/sys/fs/bpf/keyrouter/$P/kr_rings" -j | md5sum)
	run -0 kr apply -c "$KR_TMP/abc.json" --instance "$P"
	assert_output --partial "apply: nothing changed (1 rings, 1 services, 3 backends up to date)"
	after=$(bpftool map dump pinned "/sys/fs/bpf/keyrouter/$P/kr_rings" -j | md5sum)
	[ "$before" = "$after" ]
	# a third of the keys move (backend 3's): more than max_move, so forced
	run -0 kr apply --force -c "$KR_TMP/ab.json" --instance "$P"
	assert_output --partial "rings 1 published"
	assert_output --partial "backends 0 added, 0 changed, 1 released, 2 unchanged"
	route_check a 160 1 2
	run -0 kr apply -c "$KR_TMP/ab.json" --instance "$P"
	assert_output --partial "nothing changed"
}

@test "health: down moves exactly the down backend's keys, to the predicted ones; up brings them back" {
	run -0 kr load r0 -c "$KR_TMP/abc.json" --instance "$P"
	route_check h 160 1 2 3
	cp "$KR_TMP/got" "$KR_TMP/got.up"
	run -0 kr backend set "$(kr_bip 3):$PORT" down --instance "$P"
	assert_output --partial "down"
	# the ring built without backend 3 says where its keys go
	route_check h 160 1 2
	cp "$KR_TMP/got" "$KR_TMP/got.down"
	# exactly backend 3's keys moved: every other key stayed where it was
	moved=$(join "$KR_TMP/got.up" "$KR_TMP/got.down" | awk '$2 != $3' | wc -l)
	from3=$(awk '$2 == 3' "$KR_TMP/got.up" | wc -l)
	stayed=$(join "$KR_TMP/got.up" "$KR_TMP/got.down" | awk '$2 == $3 && $2 != 3' | wc -l)
	echo "# $moved keys moved (backend 3 had $from3), $stayed stayed" >&3
	[ "$moved" = "$from3" ]
	[ "$moved" -gt 0 ]
	[ $((moved + stayed)) = 300 ]
	run -0 kr stats --json --instance "$P"
	run -0 kr backend set "$(kr_bip 3)" up --ring web --instance "$P"
	route_check h 160 1 2 3
	run -0 cmp "$KR_TMP/got.up" "$KR_TMP/got"
	# no ring was rebuilt: still generation 1
	run -0 kr ring status web --json --instance "$P"
	[ "$(echo "$output" | jq '.[0].slots[0].generation')" = 1 ]
}

@test "plain bpftool: loadall + net attach, then apply --pin-dir fills the maps and traffic flows" {
	dir="/sys/fs/bpf/$P"
	mkdir -p "$dir"
	run -0 bpftool prog loadall "$KR_OBJ" "$dir/progs" pinmaps "$dir"
	run -0 kr_ns r bpftool net attach xdp pinned "$dir/progs/kr_xdp" dev r0
	run -0 kr apply --pin-dir "$dir" -c "$KR_TMP/abc.json"
	assert_output --partial "rings 1 published"
	route_check p 160 1 2 3
	run -0 kr apply --pin-dir "$dir" -c "$KR_TMP/abc.json"
	assert_output --partial "nothing changed"
	run -0 kr status --pin-dir "$dir"
	assert_output --partial "ring web (id 0): idle"
	run -0 kr_ns r bpftool net detach xdp dev r0
	rm -rf "$dir"
}

@test "coexistence with an XDP program loaded by xdp-loader" {
	other=/usr/lib/x86_64-linux-gnu/bpf/xdpfilt_alw_all.o
	[ -f "$other" ] || other=$(ls /usr/lib/*/bpf/xdpfilt_alw_all.o 2>/dev/null | head -1)
	[ -f "$other" ] || skip "no xdpfilt_alw_all.o (xdp-tools)"
	run -0 kr_ns r xdp-loader load -m native r0 "$other"
	run kr load r0 -c "$KR_TMP/abc.json" --mode native --instance "$P"
	if [ "$status" = 0 ]; then
		# libxdp's dispatcher: both programs on r0
		run -0 kr_ns r xdp-loader status r0
		assert_output --partial "kr_xdp"
		assert_output --partial "xdpfilt_alw_all"
		route_check x 160 1 2 3
		run -0 kr unload r0
		run -0 kr_ns r xdp-loader status r0
		assert_output --partial "xdpfilt_alw_all"
		refute_output --partial "kr_xdp"
	else
		# This kernel refuses libxdp's dispatcher (freplace): a clear error, nothing left,
		# and keyrouter runs beside the other XDP program in TC mode.
		assert_output --partial "couldn't attach XDP"
		assert_output --partial "nothing was left attached or pinned"
		[ ! -e "/sys/fs/bpf/keyrouter/$P" ]
		echo "# libxdp dispatcher unavailable here: XDP coexistence falls back to --mode tc" >&3
		run -0 kr load r0 -c "$KR_TMP/abc.json" --mode tc --instance "$P"
		run -0 kr_ns r xdp-loader status r0
		assert_output --partial "xdp"
		route_check x 160 1 2 3
		run -0 kr unload r0
	fi
	run -0 kr_ns r xdp-loader unload r0 --all
}

@test "kill -9 during apply: routing stays whole, the next apply converges" {
	kr_config "$KR_TMP/big3.json" 20000 1 2 3
	kr_config "$KR_TMP/big2.json" 20000 1 2
	kr_expected k 0 300 20000 1 2 3 > "$KR_TMP/exp.big3"
	kr_expected k 0 300 20000 1 2 > "$KR_TMP/exp.big2"
	run -0 kr load r0 -c "$KR_TMP/big3.json" --instance "$P"
	cur=big3
	n=0
	for delay in 0.005 0.01 0.02 0.03 0.05 0.08 0.12 0.2; do
		next=$([ $cur = big3 ] && echo big2 || echo big3)
		# (backend 3 in or out: a third of the keys, more than max_move: forced)
		nsenter --net="/run/netns/$P-r" timeout -s KILL "$delay" "$KR_BIN" -q apply \
			--force -c "$KR_TMP/$next.json" --instance "$P" >/dev/null 2>&1 || true
		# whole: every key routed, all by the old ring or all by the new one
		for i in $(seq 1 "$KR_NB"); do : > "$KR_TMP/b$i.log"; done
		kr_send k 0 300
		kr_wait_recv k 300 || true
		kr_received k > "$KR_TMP/got"
		[ "$(wc -l < "$KR_TMP/got")" = 300 ]
		if cmp -s "$KR_TMP/got" "$KR_TMP/exp.$cur"; then
			state=old
		else
			run -0 diff "$KR_TMP/exp.$next" "$KR_TMP/got"
			state=new
		fi
		echo "# killed after ${delay}s: routing whole ($state ring)" >&3
		run -0 kr apply --force -c "$KR_TMP/$next.json" --instance "$P"
		run -0 kr apply -c "$KR_TMP/$next.json" --instance "$P"
		assert_output --partial "nothing changed"
		cur=$next
		n=$((n + 1))
	done
	[ $cur = big3 ] && route_check k 20000 1 2 3 || route_check k 20000 1 2
}

# Routes 300 keys and says which prediction they match: "old" (exp.$1), "new" (exp.$2), or
# fails (a key lost, or keys split between the two rings where no migration is under way).
whole_as() { # old new
	for i in $(seq 1 "$KR_NB"); do : > "$KR_TMP/b$i.log"; done
	kr_send k 0 300
	kr_wait_recv k 300 || true
	kr_received k > "$KR_TMP/got"
	[ "$(wc -l < "$KR_TMP/got")" = 300 ]
	if cmp -s "$KR_TMP/got" "$KR_TMP/exp.$1"; then
		echo old
	else
		diff "$KR_TMP/exp.$2" "$KR_TMP/got" >&2 && echo new
	fi
}

@test "kill -9 during ring stage and ring commit: routing stays whole, the next command converges" {
	kr_config "$KR_TMP/big3.json" 20000 1 2 3
	kr_config "$KR_TMP/big2.json" 20000 1 2
	kr_expected k 0 300 20000 1 2 3 > "$KR_TMP/exp.big3"
	kr_expected k 0 300 20000 1 2 > "$KR_TMP/exp.big2"
	run -0 kr load r0 -c "$KR_TMP/big3.json" --instance "$P"
	cur=big3
	for delay in 0.005 0.02 0.05 0.1; do
		next=$([ $cur = big3 ] && echo big2 || echo big3)
		# stage killed at some point: the standby slot is not in use (fraction 0), so
		# every key stays on the active ring whatever the kill interrupted
		nsenter --net="/run/netns/$P-r" timeout -s KILL "$delay" "$KR_BIN" -q ring stage web \
			-c "$KR_TMP/$next.json" --instance "$P" >/dev/null 2>&1 || true
		run -0 whole_as "$cur" "$next"
		assert_output old
		run -0 kr ring status web --instance "$P"
		# the next stage converges (a second stage of the same version is harmless)
		run kr ring stage web -c "$KR_TMP/$next.json" --instance "$P"
		echo "# $output" >&3
		[ "$status" = 0 ]
		run -0 kr ring migrate web --percent 100 --instance "$P"
		run -0 whole_as "$cur" "$next"
		assert_output new
		# commit killed at some point: before it, 100% go to the staged slot; after it,
		# the staged slot is active with fraction 0: the same ring either way
		nsenter --net="/run/netns/$P-r" timeout -s KILL "$delay" "$KR_BIN" -q ring commit web \
			--instance "$P" >/dev/null 2>&1 || true
		run -0 whole_as "$cur" "$next"
		assert_output new
		kr ring commit web --instance "$P" >/dev/null 2>&1 || true
		run -0 kr ring status web --instance "$P"
		echo "# stage/commit killed after ${delay}s: routing whole" >&3
		run -0 kr apply -c "$KR_TMP/$next.json" --instance "$P"
		assert_output --partial "nothing changed"
		cur=$next
	done
}
