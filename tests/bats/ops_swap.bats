#!/usr/bin/env bats
# Swap under live traffic: a client streams packets with distinct keys while ring "web" is
# staged, migrated in steps, committed and rolled back again and again (>= 100
# transitions).  Every packet must arrive exactly once, at the backend its key and the
# slot in force when it was sent predict (tests/bats/ops_swapcheck.py).

bats_require_minimum_version 1.5.0

setup_file() {
	load ops_helpers
	kr_prereq
	export P="kr-ops-$$-sw"
	kr_topo_up 3 || { kr_topo_down; return 1; }
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

now() { date +%s.%N; }

# Run one transition: command, then record "start end slot0 slot1 active fraction".
step() { # slot0 slot1 active fraction -- keyrouter args...
	local s0=$1 s1=$2 act=$3 frac=$4 t0 t1
	shift 5
	t0=$(now)
	kr -q "$@" --instance "$P" >/dev/null || return 1
	t1=$(now)
	echo "$t0 $t1 $s0 $s1 $act $frac" >> "$KR_TMP/trans"
	sleep 0.03
}

@test "swap under live traffic: >= 100 transitions, zero lost, zero misrouted" {
	n=12000
	kr_config "$KR_TMP/A.json" 160 1 2
	kr_config "$KR_TMP/B.json" 160 1 2 3
	kr_expected s 0 "$n" 160 1 2 > "$KR_TMP/exp.A"
	kr_expected s 0 "$n" 160 1 2 3 > "$KR_TMP/exp.B"
	run -0 kr load r0 -c "$KR_TMP/A.json" --instance "$P"
	for i in $(seq 1 "$KR_NB"); do : > "$KR_TMP/b$i.log"; done
	t=$(now)
	echo "$t $t A - 0 0" > "$KR_TMP/trans"
	kr_ns c $KR_PY "$KR_UDP" stream "$VIP" "$PORT" s "$n" 1500 "$KR_TMP/sent" 3>&- &
	spid=$!
	sleep 0.2
	# slots: (s0, s1), active slot, fraction (2^-32 units); A in slot 0 at first
	s0=A s1=- act=0 cyc=0
	q=1073741824 # 25%
	while [ "$(($(wc -l < "$KR_TMP/trans") - 1))" -lt 104 ]; do
		new=$([ "$act" = 0 ] && echo "$s0" || echo "$s1")
		new=$([ "$new" = A ] && echo B || echo A)
		if [ "$act" = 0 ]; then s1=$new; else s0=$new; fi
		step "$s0" "$s1" "$act" 0 -- ring stage web -c "$KR_TMP/$new.json"
		step "$s0" "$s1" "$act" $q -- ring migrate web --percent 25
		step "$s0" "$s1" "$act" $((2 * q)) -- ring migrate web --percent 50
		step "$s0" "$s1" "$act" 4294967296 -- ring migrate web --percent 100
		if [ $((cyc % 2)) = 0 ]; then
			act=$((act ^ 1))
			step "$s0" "$s1" "$act" 0 -- ring commit web
		else
			step "$s0" "$s1" "$act" 0 -- ring rollback web
			if [ "$act" = 0 ]; then s1=-; else s0=-; fi
		fi
		cyc=$((cyc + 1))
	done
	wait "$spid"
	sleep 1
	echo "# $(($(wc -l < "$KR_TMP/trans") - 1)) transitions in $cyc cycles" >&3
	run -0 kr ring status web --instance "$P"
	echo "$output" | sed 's/^/# /' >&3
	run $KR_PY "$KR_ROOT/tests/bats/ops_swapcheck.py" "$KR_TMP/sent" "$KR_TMP/trans" \
		"$KR_TMP/exp.A" "$KR_TMP/exp.B" "$KR_TMP"/b1.log "$KR_TMP"/b2.log "$KR_TMP"/b3.log
	echo "$output" >&3
	[ "$status" = 0 ]
	run -0 kr unload r0
}
