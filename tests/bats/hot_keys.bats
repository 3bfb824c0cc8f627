#!/usr/bin/env bats
# Spill and hot-key replicas (issue 28; docs/datapath.md "Spill and hot-key replicas"):
# the decisions of the real XDP program, loaded by `keyrouter load` on a veth in a network
# namespace, key by key against an independent model (tests/oracle/kr_spill_oracle.py:
# Python, the published ring from `keyrouter ring dump`, the states and fractions from the
# configuration, BPF_PROG_TEST_RUN of each instance's pinned program).  Two instances given
# the same configuration must agree with the model, so with each other, for every key.
bats_require_minimum_version 1.5.0

setup_file() {
	export HK_ROOT HK_BIN HK_ORACLE HK_P HK_TMP HK_PY=/usr/bin/python3
	HK_ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
	HK_BIN=$HK_ROOT/${OUT:-build}/keyrouter
	HK_ORACLE=$HK_ROOT/tests/oracle/kr_spill_oracle.py
	HK_P=kr-hk-$$
	HK_TMP=$(mktemp -d /tmp/kr-hk.XXXXXX)
}

teardown_file() {
	rm -rf "$HK_TMP"
}

setup() {
	[ "$(id -u)" = 0 ] || skip "needs root"
	[ -x "$HK_BIN" ] || skip "no $HK_BIN (run make)"
	ip netns add "$HK_P"
	ip -n "$HK_P" link add hkveth0 type veth peer name hkveth1
	ip -n "$HK_P" link add hkveth2 type veth peer name hkveth3
	for d in hkveth0 hkveth1 hkveth2 hkveth3 lo; do ip -n "$HK_P" link set "$d" up; done
}

teardown() {
	kr unload hkveth0 --instance "$HK_P-a" >/dev/null 2>&1
	kr unload hkveth2 --instance "$HK_P-b" >/dev/null 2>&1
	ip netns del "$HK_P" 2>/dev/null
	rm -rf "/sys/fs/bpf/keyrouter/$HK_P-a" "/sys/fs/bpf/keyrouter/$HK_P-b"
}

kr() { nsenter --net="/run/netns/$HK_P" "$HK_BIN" "$@"; }

# config FILE [spill of backends 1..8] [hot keys JSON]: ring "web" of 8 backends (4 down
# or spilled as given), a payload service on 10.66.0.1:9001 (l2)
config() {
	local f=$1 i sp hot=${3:-[]} sep=""
	local -a s=(${2:-0 0 0 0 0 0 0 0})
	{
		echo '{ "rings": [ { "name": "web", "format": "v2", "point_multiple": 40,'
		echo "  \"hot_keys\": $hot, \"backends\": ["
		for i in 1 2 3 4 5 6 7 8; do
			sp=${s[$((i - 1))]}
			printf '%s { "address": "10.66.0.%d:9001", "mac": "02:66:00:00:00:%02x", "weight": %d%s%s }\n' \
				"$sep" $((10 + i)) "$i" $((1 + i % 3)) \
				"$([ "$i" = 4 ] && echo ', "state": "down"')" \
				"$([ "$sp" != 0 ] && echo ", \"spill\": $sp")"
			sep=,
		done
		echo '] } ], "services": [ { "name": "kv", "vip": "10.66.0.1", "port": 9001,'
		echo '  "ring": "web", "key": { "type": "payload" }, "forward": { "mode": "l2" } } ] }'
	} > "$f"
}

load_two() {
	run -0 kr load hkveth0 -c "$1" --instance "$HK_P-a"
	run -0 kr load hkveth2 -c "$1" --instance "$HK_P-b"
}

# trace_a OUT [ARGS...]: `keyrouter trace` of instance a into OUT, on when this returns;
# trace_a_stop: its end (SIGINT, as an operator's ^C)
trace_a() {
	local out=$1 i
	shift
	nsenter --net="/run/netns/$HK_P" "$HK_BIN" trace --duration 60 --instance "$HK_P-a" "$@" \
		>"$out" 2>"$out.err" &
	HK_TRACE=$!
	for i in $(seq 50); do
		kr trace --status --instance "$HK_P-a" | grep -q '^trace on' && return 0
		sleep 0.1
	done
	echo "trace did not start: $(cat "$out.err")" >&2
	return 1
}
trace_a_stop() {
	kill -INT "$HK_TRACE"
	wait "$HK_TRACE" || :
}

# hot_bit RING_ID: bit 56 (KR_CTL_HOT) of the ring's control word in instance a
hot_bit() {
	local v
	v=$(bpftool map lookup pinned "/sys/fs/bpf/keyrouter/$HK_P-a/kr_ring_ctl" key "$1" 0 0 0 |
		sed -n 's/.*"value": \([0-9][0-9]*\).*/\1/p')
	[ -n "$v" ] || return 1
	echo $((v >> 56 & 1))
}

oracle() { # CONFIG NKEYS SEED -> the oracle's verdict over both instances
	"$HK_BIN" ring dump -c "$1" --ring web --no-header > "$HK_TMP/dump"
	run "$HK_PY" "$HK_ORACLE" check "$1" "$HK_TMP/dump" "$2" "$3" \
		"/sys/fs/bpf/keyrouter/$HK_P-a" "/sys/fs/bpf/keyrouter/$HK_P-b"
	echo "$output"
}

@test "spill: 12,000 keys through two instances' XDP programs agree with the independent model, key by key; spill 0 routes as without spill" {
	"$HK_PY" "$HK_ORACLE" selftest
	config "$HK_TMP/c.json" "0.3 0 0.5 0 0.9 0 0.99 0.2"
	load_two "$HK_TMP/c.json"
	oracle "$HK_TMP/c.json" 12000 7
	[ "$status" = 0 ]
	[[ "$output" =~ spill:\ keys\ 12000\ instances\ 2\ agree\ 12000\ spilled\ ([0-9]+) ]]
	echo "# ${BASH_REMATCH[1]} of 12000 keys spilled" >&3
	[ "${BASH_REMATCH[1]}" -gt 1000 ]
	# each key ran once through each program: the spilled counter is that count, exactly
	run -0 kr stats --prometheus --instance "$HK_P-b"
	[[ "$output" == *"keyrouter_ring_slot_spilled_packets_total{keyrouter_instance=\"$HK_P-b\",ring=\"web\",slot=\"0\"} ${BASH_REMATCH[1]}"* ]]
	[[ "$output" == *"keyrouter_backend_spill{"*"} 0.99"* ]]
	run -0 kr status --instance "$HK_P-b"
	[[ "$output" == *"spill 0.5000 (fixed)"* ]]
	# userspace's truth: lookup --live (the published image, kr_backends' spill) agrees
	KR_SPILL_KEYS=$HK_TMP/keys "$HK_PY" "$HK_ORACLE" check "$HK_TMP/c.json" "$HK_TMP/dump" \
		12000 7 "/sys/fs/bpf/keyrouter/$HK_P-a" > /dev/null
	kr lookup -c "$HK_TMP/c.json" --service kv --live --instance "$HK_P-a" --json \
		--keys-file "$HK_TMP/keys" > "$HK_TMP/lookup.json"
	run -0 "$HK_PY" "$HK_ORACLE" cmp-lookup "$HK_TMP/c.json" "$HK_TMP/dump" "$HK_TMP/lookup.json"
	[[ "$output" == *"lookup: keys 12000 agree 12000"* ]]
	# every fraction back to 0 at run time (backend set): the routes of a ring without spill
	for b in 11 13 15 17 18; do
		kr backend set "10.66.0.$b:9001" --spill 0 --instance "$HK_P-a"
		kr backend set "10.66.0.$b:9001" --spill auto --instance "$HK_P-b"
	done
	config "$HK_TMP/z.json"
	oracle "$HK_TMP/z.json" 3000 8
	[ "$status" = 0 ]
	[[ "$output" == *"agree 3000 spilled 0;"* ]]
	run -0 bpftool map dump pinned "/sys/fs/bpf/keyrouter/$HK_P-a/kr_backends"
	[[ "$output" != *'"spill": '[1-9]* ]]
}

@test "hot keys: each client stays on one replica, k distinct replicas used, every other key untouched (agrees with the model); hotkey add/del/list" {
	config "$HK_TMP/h.json" "0 0.4 0 0 0 0 0 0" \
		'[ {"key": "hot-one", "replicas": 3}, {"key": "hot-two", "replicas": 5} ]'
	load_two "$HK_TMP/h.json"
	# the trace of instance a meanwhile: each routed event says spilled or which replica
	trace_a "$HK_TMP/trace.json" --json
	oracle "$HK_TMP/h.json" 2000 9
	[ "$status" = 0 ]
	[[ "$output" == *"hot keys 2 clients 128 replicas used 3/3,5/5 unstable 0"* ]]
	trace_a_stop
	run -0 "$HK_PY" "$HK_ORACLE" trace "$HK_TMP/h.json" "$HK_TMP/dump" "$HK_TMP/trace.json"
	echo "$output"
	[[ "$output" =~ ^trace:\ events\ ([0-9]+)\ spilled\ ([0-9]+)\ agree\ ([0-9]+)\ hot\ ([0-9]+)\ replicas\ seen\ (.*)$ ]]
	# 2000 keys, then 64 clients per hot key, each hot packet sent twice to instance a
	[ "${BASH_REMATCH[1]}" = $((2000 + 2 * 128)) ]
	[ "${BASH_REMATCH[2]}" -gt 0 ]
	[ "${BASH_REMATCH[3]}" = "${BASH_REMATCH[1]}" ]
	[ "${BASH_REMATCH[4]}" = 256 ]
	[[ "${BASH_REMATCH[5]}" == *"hot-one:3/3"* && "${BASH_REMATCH[5]}" == *"hot-two:5/5"* ]]
	local nsp=${BASH_REMATCH[2]}
	# the text form of the same keys names them as well
	trace_a "$HK_TMP/trace.txt"
	oracle "$HK_TMP/h.json" 2000 9
	[ "$status" = 0 ]
	trace_a_stop
	[ "$(grep -Ec ' walk [0-9]+ spilled l2 routed ring$' "$HK_TMP/trace.txt")" = "$nsp" ]
	[ "$(grep -Ec ' key hot-(one|two) .* walk [0-9]+ replica [0-4] l2 routed ring$' "$HK_TMP/trace.txt")" = 256 ]
	[ "$(grep -Ec ' walk [0-9]+ l2 routed ring$' "$HK_TMP/trace.txt")" = $((2000 - nsp)) ]
	# lookup --live --client: the replica of each client, as the model says
	"$HK_BIN" ring dump -c "$HK_TMP/h.json" --ring web --no-header > "$HK_TMP/dump"
	for hkc in 1 2 3 4 5 6 7 8; do
		run -0 "$HK_PY" "$HK_ORACLE" route "$HK_TMP/h.json" "$HK_TMP/dump" hot-two 10.8.0.$hkc $((20000 + hkc))
		want=$output
		run -0 kr lookup -c "$HK_TMP/h.json" --service kv --live --instance "$HK_P-a" --json \
			--client 10.8.0.$hkc:$((20000 + hkc)) hot-two
		[ "$(echo "$output" | "$HK_PY" -c 'import json,sys; r=json.load(sys.stdin)["route"]; print(r["index"], r["replica"])')" = "$want" ]
	done
	run -0 kr lookup -c "$HK_TMP/h.json" --service kv hot-one
	[[ "$output" == *"replica 0 of 3"* ]]
	run -0 kr hotkey list web --json --instance "$HK_P-a"
	[[ "$output" == *'"replicas": 3'* ]]
	[[ "$output" == *'"replicas": 5'* ]]
	# at run time: a third key on both instances, then the second removed from both
	for hkx in a b; do
		run -0 kr hotkey add web hot-three --replicas 4 -c "$HK_TMP/h.json" --instance "$HK_P-$hkx"
		run -0 kr hotkey del web hot-two -c "$HK_TMP/h.json" --instance "$HK_P-$hkx"
	done
	config "$HK_TMP/h2.json" "0 0.4 0 0 0 0 0 0" \
		'[ {"key": "hot-one", "replicas": 3}, {"key": "hot-three", "replicas": 4} ]'
	oracle "$HK_TMP/h2.json" 2000 10
	[ "$status" = 0 ]
	[[ "$output" == *"replicas used 3/3,4/4 unstable 0"* ]]
	run -0 kr hotkey list --instance "$HK_P-a"
	[ "${#lines[@]}" = 2 ]
	# the last one removed: the ring's control word loses its hot bit (no lookup)
	for hkv in hot-one hot-three; do run -0 kr hotkey del web "$hkv" -c "$HK_TMP/h.json" --instance "$HK_P-a"; done
	[ "$(hot_bit 0)" = 0 ]
}

@test "apply of a change to hot keys only: reported and counted (text, --dry-run, --json), written exactly as planned; the same again changes nothing" {
	config "$HK_TMP/h1.json" "" '[ {"key": "hot-one", "replicas": 3} ]'
	run -0 kr load hkveth0 -c "$HK_TMP/h1.json" --instance "$HK_P-a"
	run -0 kr hotkey list web --instance "$HK_P-a"
	[[ "$output" =~ ^web\ (0x[0-9a-f]{8})\ replicas\ 3$ ]]
	local one=${BASH_REMATCH[1]}
	run -0 kr hotkey add web hot-two --replicas 2 -c "$HK_TMP/h1.json" --instance "$HK_P-a"
	[[ "$output" =~ ^hot\ key\ (0x[0-9a-f]{8}) ]]
	local two=${BASH_REMATCH[1]}
	# the config: hot-one's replicas 3 -> 4, hot-three new, hot-two (added by hand) gone
	config "$HK_TMP/h2.json" "" '[ {"key": "hot-one", "replicas": 4}, {"key": "hot-three", "replicas": 5} ]'
	run -0 kr apply --dry-run -c "$HK_TMP/h2.json" --instance "$HK_P-a"
	[[ "$output" == *"ring 'web' (id 0): unchanged"* ]]
	[[ "$output" == *"ring 'web': would change hot key $one (replicas 3 -> 4)"* ]]
	[[ "$output" =~ ring\ \'web\':\ would\ add\ hot\ key\ (0x[0-9a-f]{8})\ \(replicas\ 5\) ]]
	local three=${BASH_REMATCH[1]}
	[[ "$output" == *"ring 'web': would remove hot key $two (replicas 2; not in the config)"* ]]
	[[ "$output" == *"would add 1 hot keys, would change 1 hot keys, would remove 1 hot keys; nothing was written"* ]]
	[[ "$output" != *"nothing would change"* ]]
	run -0 kr apply --dry-run --json -c "$HK_TMP/h2.json" --instance "$HK_P-a"
	[ "$(jq -r '[.changed, .counts.rings_published, .counts.hot_keys_added, .counts.hot_keys_changed, .counts.hot_keys_removed] | join(" ")' <<<"$output")" = "true 0 1 1 1" ]
	[ "$(jq -r '.plan.hot_keys | map("\(.change) \(.hash) \(.replicas) \(.was_replicas)") | sort | join(",")' <<<"$output")" = \
		"$(printf '%s\n' "add $three 5 null" "change $one 4 3" "remove $two 2 null" | sort | paste -sd,)" ]
	# the dry run wrote nothing
	run -0 kr hotkey list web --instance "$HK_P-a"
	[ "$(sort <<<"$output" | paste -sd,)" = "$(printf '%s\n' "web $one replicas 3" "web $two replicas 2" | sort | paste -sd,)" ]
	run -0 kr apply -c "$HK_TMP/h2.json" --instance "$HK_P-a"
	[[ "$output" == *"apply: rings 0 published, 1 unchanged"* ]]
	[[ "$output" == *"; hot keys 1 added, 1 changed, 1 removed"* ]]
	run -0 kr hotkey list web --instance "$HK_P-a"
	[ "$(sort <<<"$output" | paste -sd,)" = "$(printf '%s\n' "web $one replicas 4" "web $three replicas 5" | sort | paste -sd,)" ]
	run -0 kr apply -c "$HK_TMP/h2.json" --instance "$HK_P-a"
	[[ "$output" == "apply: nothing changed (1 rings, 1 services, 8 backends up to date)" ]]
	run -0 kr apply --dry-run -c "$HK_TMP/h2.json" --instance "$HK_P-a"
	[[ "$output" == *"apply (dry run): nothing would change"* ]]
	[[ "$output" != *"hot key"* ]]
	run -0 kr apply --json -c "$HK_TMP/h2.json" --instance "$HK_P-a"
	[ "$(jq -r '[.changed, .counts.hot_keys_added, .counts.hot_keys_changed, .counts.hot_keys_removed] | join(" ")' <<<"$output")" = "false 0 0 0" ]
	# no hot keys left in the config: both go, and the ring's control word loses its hot bit
	config "$HK_TMP/h0.json"
	run -0 kr apply --json -c "$HK_TMP/h0.json" --instance "$HK_P-a"
	[ "$(jq -r '[.changed, .counts.hot_keys_removed] | join(" ")' <<<"$output")" = "true 2" ]
	run -0 kr hotkey list --instance "$HK_P-a"
	[ "$output" = "no hot keys" ]
	[ "$(hot_bit 0)" = 0 ]
}

@test "a ring that leaves the configuration takes its hot keys with it, the controller's too; the ring that gets its id later starts without them" {
	# two rings: "web" (id 0) and "old" (id 1, a hot key from the config and one the
	# controller put there), then "old" goes, then a new ring "new" takes id 1
	two_rings() { # FILE SECOND-RING-NAME HOT-JSON
		config "$1"
		jq --arg n "$2" --argjson h "$3" '.rings += [.rings[0] | .name = $n | .hot_keys = $h] |
			.services += [.services[0] | .name = "kv2" | .port = 9002 | .ring = $n]' \
			"$1" > "$1.tmp" && mv "$1.tmp" "$1"
	}
	two_rings "$HK_TMP/o1.json" old '[ {"key": "old-hot", "replicas": 3} ]'
	run -0 kr load hkveth0 -c "$HK_TMP/o1.json" --instance "$HK_P-a"
	local pin=/sys/fs/bpf/keyrouter/$HK_P-a
	run -0 kr hotkey list old --instance "$HK_P-a"
	[[ "$output" =~ ^old\ (0x[0-9a-f]{8})\ replicas\ 3$ ]]
	local h=${BASH_REMATCH[1]}
	# the controller's entry (KR_HOT_F_CONTROLLER): ring id 1, key hash 0x00c0ffee, replicas 2
	run -0 bpftool map update pinned "$pin/kr_hot_keys" key 1 0 0 0 0xee 0xff 0xc0 0 \
		value 2 0 0 0 1 0 0 0
	run -0 kr hotkey list --instance "$HK_P-a"
	[ "${#lines[@]}" = 2 ]
	config "$HK_TMP/o2.json"
	run -0 kr apply --dry-run -c "$HK_TMP/o2.json" --instance "$HK_P-a"
	[[ "$output" == *"ring 'old' (id 1): would remove (not in the config)"* ]]
	[[ "$output" == *"ring 'old': would remove hot key $h (replicas 3; not in the config)"* ]]
	[[ "$output" == *"ring 'old': would remove hot key 0x00c0ffee (replicas 2; not in the config)"* ]]
	run -0 kr apply --json -c "$HK_TMP/o2.json" --instance "$HK_P-a"
	[ "$(jq -r '[.counts.rings_removed, .counts.hot_keys_removed] | join(" ")' <<<"$output")" = "1 2" ]
	run -0 kr hotkey list --instance "$HK_P-a"
	[ "$output" = "no hot keys" ]
	run -0 bpftool map dump pinned "$pin/kr_hot_keys"
	[[ "$output" != *'"key"'* ]]
	# a new ring gets id 1: no replicas of the old ring's keys
	two_rings "$HK_TMP/o3.json" new '[]'
	run -0 kr apply -c "$HK_TMP/o3.json" --instance "$HK_P-a"
	run -0 kr ring status new --instance "$HK_P-a"
	[[ "$output" == *"id 1"* ]]
	run -0 kr hotkey list --instance "$HK_P-a"
	[ "$output" = "no hot keys" ]
	[ "$(hot_bit 1)" = 0 ]
}

@test "bad input: spill out of range, replicas 0/1/17, an unknown ring, a QUIC ring: a clear error, the running state untouched" {
	config "$HK_TMP/c.json" "0.3 0 0 0 0 0 0 0"
	run -0 kr load hkveth0 -c "$HK_TMP/c.json" --instance "$HK_P-a"
	bpftool map dump pinned "/sys/fs/bpf/keyrouter/$HK_P-a/kr_backends" > "$HK_TMP/be.before"
	bpftool map dump pinned "/sys/fs/bpf/keyrouter/$HK_P-a/kr_ring_ctl" > "$HK_TMP/ctl.before"
	config "$HK_TMP/bad.json" "1.5 0 0 0 0 0 0 0"
	run -1 kr apply -c "$HK_TMP/bad.json" --instance "$HK_P-a"
	[[ "$output" == *"backends[0].spill: expected a fraction 0..0.99"* ]]
	for hkv in 0 1 17; do
		config "$HK_TMP/bad.json" "" "[ {\"key\": \"x\", \"replicas\": $hkv} ]"
		run -1 kr apply -c "$HK_TMP/bad.json" --instance "$HK_P-a"
		[[ "$output" == *"hot_keys[0].replicas"* ]]
		run -2 kr hotkey add web x --replicas "$hkv" -c "$HK_TMP/c.json" --instance "$HK_P-a"
		[[ "$output" == *"--replicas: expected 2..16"* ]]
	done
	run -2 kr backend set 10.66.0.11:9001 --spill 1.5 --instance "$HK_P-a"
	[[ "$output" == *"bad spill '1.5': expected a fraction 0..0.99"* ]]
	run -2 kr backend set 10.66.0.11:9001 --spill -0.1 --instance "$HK_P-a"
	run -1 kr hotkey add nosuch 0x12345678 --hash --replicas 3 --instance "$HK_P-a"
	[[ "$output" == *"no ring 'nosuch' in instance"* ]]
	run -1 kr hotkey add nosuch x --replicas 3 -c "$HK_TMP/c.json" --instance "$HK_P-a"
	[[ "$output" == *"no ring 'nosuch'"* ]]
	run -2 kr hotkey add web x --replicas 3 --instance "$HK_P-a"
	[[ "$output" == *"give the configuration (-c CONFIG)"* ]]
	# a QUIC ring takes no hot keys (a connection ID must not move)
	sed 's/"type": "payload"/"type": "quic", "cid_length": 8/' "$HK_TMP/c.json" > "$HK_TMP/q.json"
	run -1 kr hotkey add web 0a0b0c0d0e0f0102 --replicas 3 -c "$HK_TMP/q.json" --instance "$HK_P-a"
	[[ "$output" == *"QUIC"* ]]
	sed 's/"hot_keys": \[\]/"hot_keys": [{"hash": "0x1234", "replicas": 3}]/' "$HK_TMP/q.json" > "$HK_TMP/q2.json"
	run -1 kr apply -c "$HK_TMP/q2.json" --instance "$HK_P-a"
	[[ "$output" == *"QUIC rings take no hot keys"* ]]
	run -0 kr hotkey list --instance "$HK_P-a"
	[[ "$output" == "no hot keys" ]]
	bpftool map dump pinned "/sys/fs/bpf/keyrouter/$HK_P-a/kr_backends" | diff "$HK_TMP/be.before" -
	bpftool map dump pinned "/sys/fs/bpf/keyrouter/$HK_P-a/kr_ring_ctl" | diff "$HK_TMP/ctl.before" -
}

@test "upgrade from a build whose kr_backend had pad where spill is: the pinned maps are taken, and spill then works" {
	local obj=$HK_ROOT/${OUT:-build}/tests/progs/kr_upgrade_pad.bpf.o
	[ -f "$obj" ] || skip "no $obj (run make)"
	config "$HK_TMP/z.json"
	run -0 kr load hkveth0 -c "$HK_TMP/z.json" --instance "$HK_P-a" --object "$obj"
	run -0 kr load hkveth2 -c "$HK_TMP/z.json" --instance "$HK_P-b"
	run -0 kr upgrade hkveth0 --instance "$HK_P-a"
	echo "$output"
	[[ "$output" != *refused* ]]
	config "$HK_TMP/c.json" "0.5 0 0.5 0 0 0 0 0"
	run -0 kr apply -c "$HK_TMP/c.json" --instance "$HK_P-a"
	run -0 kr apply -c "$HK_TMP/c.json" --instance "$HK_P-b"
	oracle "$HK_TMP/c.json" 2000 11
	[ "$status" = 0 ]
	[[ "$output" == *"agree 2000"* ]]
}

@test "diff prices a spill and state change exactly: the independent model's sample agrees; a membership change alone prints no spill bill" {
	config "$HK_TMP/old.json" "0 0 0 0 0 0 0 0"
	config "$HK_TMP/new.json" "0.4 0 0 0 0 0.25 0 0.1"
	sed -i 's|"10.66.0.13:9001", "mac": "02:66:00:00:00:03", "weight": 1 |&, "state": "down"|' "$HK_TMP/new.json"
	grep -q '"10.66.0.13:9001".*"state": "down"' "$HK_TMP/new.json"
	run -0 "$HK_BIN" diff --old-config "$HK_TMP/old.json" --new-config "$HK_TMP/new.json" --ring web --json
	exact=$(echo "$output" | jq -r '.spill.moved')
	[ -n "$exact" ]
	[ "$exact" != null ]
	"$HK_BIN" ring dump -c "$HK_TMP/new.json" --ring web --no-header > "$HK_TMP/dump"
	run -0 "$HK_PY" "$HK_ORACLE" moved "$HK_TMP/old.json" "$HK_TMP/new.json" "$HK_TMP/dump" 200000 11
	read -r _ p _ e <<<"$output"
	echo "diff: exact $exact; model's sample $p +- $e"
	# within 5 standard errors, and the change is not nothing
	awk -v x="$exact" -v p="$p" -v e="$e" 'BEGIN { d = x - p; if (d < 0) d = -d; exit !(x > 0.05 && d <= 5 * e) }'
	run -0 "$HK_BIN" diff --old-config "$HK_TMP/old.json" --new-config "$HK_TMP/new.json" --ring web
	[[ "$output" == *"spill and state on the new ring"* ]]
	# a ninth backend added, nothing else: the ring's own figures, no spill bill
	sed 's|"10.66.0.18:9001", "mac": "02:66:00:00:00:08", "weight": 3 }|&, { "address": "10.66.0.19:9001", "mac": "02:66:00:00:00:09" }|' \
		"$HK_TMP/old.json" > "$HK_TMP/grown.json"
	grep -q 10.66.0.19 "$HK_TMP/grown.json"
	run -0 "$HK_BIN" diff --old-config "$HK_TMP/old.json" --new-config "$HK_TMP/grown.json" --ring web
	[[ "$output" != *"spill and state"* ]]
	run -0 "$HK_BIN" diff --old-config "$HK_TMP/old.json" --new-config "$HK_TMP/grown.json" --ring web --json
	[ "$(echo "$output" | jq -r '.spill // "none"')" = none ]
}
