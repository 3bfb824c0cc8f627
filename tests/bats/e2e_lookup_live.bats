#!/usr/bin/env bats
# `lookup --live` tells the truth during a migration: real unbound on 4 backends, keyrouter
# in native XDP (l2), ring dns4 migrating at 37 % from b1 b2 b3 to b1 b2 b3 b4.  For 1000
# names, the backend `lookup -c FILE --service dns4 --live` prints (computed from the
# instance's own published slots and control word: the slot each key's hash takes, that
# slot's image, the live backend states) is the backend that really answers; which
# configuration file is given does not change the answer (the instance is the truth, the
# file only gives the key type and, by its "instance", which instance: no --instance is
# passed); the share of keys on the new slot is 37 % within 4 sigma; a backend set down
# during the migration moves exactly the keys lookup --live says; `--via-kernel` with the
# instance runs the kernel's program on the instance's slots and states: the same lines.

bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'
load ../lib/e2e_common

N=1000

setup_file() {
	e2e_require_keyrouter "ring stage" "ring migrate" || return 0
	e2e_setup_file 4 || return 1
	topo_start_dns || return 1
	e2e_config "$TOPO_DIR/old.json" l2 "1 2 3" dns:dns:53
	e2e_config "$TOPO_DIR/new.json" l2 "1 2 3 4" dns:dns:53
	e2e_names $N live >"$TOPO_DIR/names"
	e2e_load "$TOPO_DIR/old.json" >"$TOPO_DIR/load.log" 2>&1 || { cat "$TOPO_DIR/load.log" >&2; return 1; }
	topo_kr ring stage dns4 -c "$TOPO_DIR/new.json" >/dev/null || return 1
	topo_kr ring migrate dns4 --percent 37 --instance "$TOPO_INSTANCE" >/dev/null || return 1
}

teardown_file() { e2e_teardown_file; }
setup() { e2e_setup; }

@test "lookup --live at 37 %: 1000 names answered by the backend it predicts, whichever configuration file is given" {
	e2e_dns_batch "$TOPO_VIP4" "$TOPO_DIR/names" >"$TOPO_DIR/ans"
	e2e_predict "$TOPO_DIR/new.json" dns4 "$TOPO_DIR/names" --live >"$TOPO_DIR/pred.new"
	e2e_predict "$TOPO_DIR/old.json" dns4 "$TOPO_DIR/names" --live >"$TOPO_DIR/pred.old"
	e2e_compare "$TOPO_DIR/pred.new" "$TOPO_DIR/ans"
	diff "$TOPO_DIR/pred.new" "$TOPO_DIR/pred.old"
	# without --live the file's own ring is the answer: neither file is right for every key
	e2e_predict "$TOPO_DIR/new.json" dns4 "$TOPO_DIR/names" >"$TOPO_DIR/cfg.new"
	e2e_predict "$TOPO_DIR/old.json" dns4 "$TOPO_DIR/names" >"$TOPO_DIR/cfg.old"
	run -1 cmp -s "$TOPO_DIR/cfg.new" "$TOPO_DIR/ans"
	run -1 cmp -s "$TOPO_DIR/cfg.old" "$TOPO_DIR/ans"
}

@test "lookup --live at 37 %: each line names its slot; the new slot's share is 37 % within 4 sigma" {
	run -0 "$TOPO_KEYROUTER" lookup -c "$TOPO_DIR/new.json" --service dns4 --live --keys-file "$TOPO_DIR/names"
	echo "${lines[0]}"
	[ "$(grep -c ' slot [01] generation [0-9]* (\(active\|migrated\))$' <<<"$output")" = $N ]
	run awk -v n=$N '/ slot 1 generation .* \(migrated\)$/ { m++ }
		END { p = 0.37; b = 4 * sqrt(p * (1 - p) / n); d = m / n - p; if (d < 0) d = -d
		      printf "on the new slot: %d of %d (%.3f; bound %.3f)\n", m, n, m / n, b; exit !(d <= b) }' <<<"$output"
	echo "$output"
	[ "$status" = 0 ]
}

@test "lookup --live --via-kernel: the kernel's own program on the instance's slots, control word and states prints the same 1000 lines, with b2 down too" {
	local b2=${TOPO_B4[2]}:53 k=("$TOPO_KEYROUTER" lookup -c "$TOPO_DIR/new.json" --service dns4 --keys-file "$TOPO_DIR/names")
	"${k[@]}" --live >"$TOPO_DIR/user" 2>/dev/null
	"${k[@]}" --via-kernel --instance "$TOPO_INSTANCE" >"$TOPO_DIR/kernel" 2>/dev/null
	[ "$(wc -l <"$TOPO_DIR/user")" = $N ]
	diff "$TOPO_DIR/user" "$TOPO_DIR/kernel"
	run -1 grep -q ' walk ' "$TOPO_DIR/user"
	topo_kr backend set "$b2" down --instance "$TOPO_INSTANCE" >/dev/null
	"${k[@]}" --live >"$TOPO_DIR/user" 2>/dev/null
	"${k[@]}" --via-kernel --live >"$TOPO_DIR/kernel" 2>/dev/null
	topo_kr backend set "$b2" up --instance "$TOPO_INSTANCE" >/dev/null
	diff "$TOPO_DIR/user" "$TOPO_DIR/kernel"
	# the walk past b2 is in both (the kernel's walk, not a copy of the userspace one)
	[ "$(grep -c ' walk [0-9]* (backend 1: down)' "$TOPO_DIR/kernel")" -gt 0 ]
}

@test "lookup --live: a backend set down during the migration moves exactly the keys it predicts" {
	local b2=${TOPO_B4[2]}:53
	e2e_predict "$TOPO_DIR/new.json" dns4 "$TOPO_DIR/names" --live >"$TOPO_DIR/pred.before"
	topo_kr backend set "$b2" down --instance "$TOPO_INSTANCE"
	e2e_predict "$TOPO_DIR/new.json" dns4 "$TOPO_DIR/names" --live >"$TOPO_DIR/pred.down"
	e2e_dns_batch "$TOPO_VIP4" "$TOPO_DIR/names" >"$TOPO_DIR/ans.down"
	topo_kr backend set "$b2" up --instance "$TOPO_INSTANCE"
	e2e_compare "$TOPO_DIR/pred.down" "$TOPO_DIR/ans.down"
	# the keys that moved are b2's, and only those
	paste -d' ' "$TOPO_DIR/pred.before" "$TOPO_DIR/pred.down" |
		awk '$2 != $4 && $2 != 2 { bad++ } $2 == 2 && $4 == 2 { bad++ } $2 == 2 { m++ }
		     END { printf "b2 had %d keys; other keys moved: %d\n", m, bad; exit !(m > 0 && bad == 0) }' 
}

@test "lookup --live: a service the instance does not have, or no instance, is a clear error" {
	sed 's/"vip": "10.200.0.1"/"vip": "10.200.9.9"/' "$TOPO_DIR/new.json" >"$TOPO_DIR/other.json"
	grep -q 10.200.9.9 "$TOPO_DIR/other.json"
	run "$TOPO_KEYROUTER" lookup -c "$TOPO_DIR/other.json" --service dns4 --live x.kr.test
	[ "$status" = 1 ]
	[[ "$output" == *"has no service"*"apply the configuration first"* ]]
	run "$TOPO_KEYROUTER" lookup -c "$TOPO_DIR/new.json" --service dns4 --live --instance "nope-$$" x.kr.test
	[ "$status" = 1 ]
	[[ "$output" == *"nope-$$"* ]]
}

@test "diff --old-published -c FILE takes the file's instance (as apply and lookup --live): the bill of the staged ring against the published one" {
	run -0 "$TOPO_KEYROUTER" diff --old-published -c "$TOPO_DIR/new.json" --ring dns4
	assert_line --partial "instance $TOPO_INSTANCE"
	[[ "$output" == *"moved"* ]]
}

@test "lookup --json: one object per key (jq), the same route, slot and walk as the text lines, with b2 down" {
	local b2=${TOPO_B4[2]}:53 k=("$TOPO_KEYROUTER" lookup -c "$TOPO_DIR/new.json" --service dns4 --live --addr --keys-file "$TOPO_DIR/names")
	topo_kr backend set "$b2" down --instance "$TOPO_INSTANCE" >/dev/null
	"${k[@]}" 2>/dev/null >"$TOPO_DIR/text"
	"${k[@]}" --json 2>/dev/null >"$TOPO_DIR/json"
	topo_kr backend set "$b2" up --instance "$TOPO_INSTANCE" >/dev/null
	[ "$(jq -s length "$TOPO_DIR/json")" = $N ]
	# key, hash, route address, walk, slot: the text's fields, from jq
	jq -r '[.key, .hash, .route.address, (.route.walk | tostring), (.slot | tostring), (if .migrated then "migrated" else "active" end)] | join(" ")' \
		"$TOPO_DIR/json" >"$TOPO_DIR/from_json"
	awk '{ w = 0; for (i = 1; i <= NF; i++) { if ($i == "route") a = $(i + 2); if ($i == "walk") w = $(i + 1); if ($i == "slot") s = $(i + 1) }
	       m = ($NF == "(migrated)") ? "migrated" : "active"; print $1, $2, a, w, s, m }' "$TOPO_DIR/text" >"$TOPO_DIR/from_text"
	diff "$TOPO_DIR/from_text" "$TOPO_DIR/from_json"
	[ "$(jq -s '[.[] | select(.route.skipped.because == "down")] | length' "$TOPO_DIR/json")" -gt 0 ]
	jq -e -s 'all(.[]; .next | length == 3)' "$TOPO_DIR/json" >/dev/null
}

@test "lookup --header: one comment line naming the columns; the key lines follow unchanged" {
	k=("$TOPO_KEYROUTER" lookup -c "$TOPO_DIR/new.json" --service dns4 --live --addr --keys-file "$TOPO_DIR/names")
	"${k[@]}" --header >"$TOPO_DIR/h" 2>/dev/null
	"${k[@]}" >"$TOPO_DIR/nh" 2>/dev/null
	[ "$(head -1 "$TOPO_DIR/h")" = "# key hash ring_index backend b1 b2 b3 route route_backend address [walk N (backend B: why)] slot S generation G [(active)|(migrated)]" ]
	diff <(tail -n +2 "$TOPO_DIR/h") "$TOPO_DIR/nh"
	# the named columns are where the header says: "route" is the 8th field, the slot after it
	awk 'NR > 1 && $8 != "route" { bad++ } END { exit bad > 0 }' "$TOPO_DIR/h"
}
