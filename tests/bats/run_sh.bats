#!/usr/bin/env bats
# tests/run.sh itself: a program whose TAP plan and results disagree, one without a plan,
# one that hangs and one that exits non-zero without a failure each count as one failure
# naming the program; a hanging bats test is one failure naming the test; a whole program
# passes; a background file (KR_BATS_BACKGROUND) runs at nice 19 and is reported after the
# others.  Fake programs in a scratch OUT directory, fake bats files in a scratch dir.
bats_require_minimum_version 1.5.0

setup() {
	cd "$BATS_TEST_DIRNAME/../.."
	O="$BATS_TEST_TMPDIR/out"
	mkdir -p "$O/tests"
}

prog() { # name body
	printf '#!/bin/bash\n%s\n' "$2" > "$O/tests/$1"
	chmod +x "$O/tests/$1"
}

@test "run.sh: a whole TAP stream passes" {
	prog zzrs_good 'echo "ok 1 - a"; echo "ok 2 - b"; echo "1..2"'
	run -0 env OUT="$O" TESTS=zzrs_ tests/run.sh
	[ "${lines[-1]}" = "2 passed, 0 failed" ]
}

@test "run.sh: plan 1..3 with two results (exit 0) fails, naming the program" {
	prog zzrs_short 'echo "ok 1 - a"; echo "ok 2 - b"; echo "1..3"'
	run -1 env OUT="$O" TESTS=zzrs_ tests/run.sh
	[[ "$output" == *"not ok - zzrs_short: plan 1..3 but 2 results"* ]]
	[ "${lines[-1]}" = "2 passed, 1 failed" ]
}

@test "run.sh: results without a plan (exit 0) fail" {
	prog zzrs_noplan 'echo "ok 1 - a"'
	run -1 env OUT="$O" TESTS=zzrs_ tests/run.sh
	[[ "$output" == *"not ok - zzrs_noplan: 0 TAP plans (1..N) for 1 results"* ]]
	[ "${lines[-1]}" = "1 passed, 1 failed" ]
}

@test "run.sh: a hang becomes one failure naming the program" {
	prog zzrs_hang 'echo "ok 1 - a"; sleep 600; echo "1..1"'
	run -1 env OUT="$O" TESTS=zzrs_ KR_TEST_TIMEOUT=2 tests/run.sh
	[[ "$output" == *"not ok - zzrs_hang timed out after 2s"* ]]
	[ "${lines[-1]}" = "1 passed, 1 failed" ]
}

@test "run.sh: a non-zero exit without a failure counts as one failure" {
	prog zzrs_exit 'echo "ok 1 - a"; echo "1..1"; exit 3'
	run -1 env OUT="$O" TESTS=zzrs_ tests/run.sh
	[[ "$output" == *"not ok - zzrs_exit exited with status 3"* ]]
	[ "${lines[-1]}" = "1 passed, 1 failed" ]
}

@test "run.sh: a hanging bats test becomes one failure naming it; the other tests still run" {
	mkdir -p "$BATS_TEST_TMPDIR/bats"
	printf '%s\n' "@""test \"zzrs sleeper\" {" '	sleep 60' '}' "@""test \"zzrs quick\" {" \
		'	true' '}' > "$BATS_TEST_TMPDIR/bats/zzrs_hang.bats"
	run -1 env OUT="$O" TESTS=zzrs_ KR_BATS_DIR="$BATS_TEST_TMPDIR/bats" BATS_TEST_TIMEOUT=2 \
		tests/run.sh
	[[ "$output" == *"not ok 1 zzrs sleeper # timeout after 2s"* ]]
	[ "${lines[-1]}" = "1 passed, 1 failed" ]
}

@test "run.sh: a skipped test is named with its reason, and each file's seconds are printed" {
	prog zzrs_skip 'echo "ok 1 - a"; echo "ok 2 - b # SKIP needs a unicorn"; echo "1..2"'
	run -0 env OUT="$O" TESTS=zzrs_ tests/run.sh
	[[ "$output" == *"# skipped in zzrs_skip: ok 2 - b # SKIP needs a unicorn"* ]]
	[[ "$output" =~ "# zzrs_skip: 2 ok, 0 not ok ("[0-9]+" s)" ]]
	[[ "$output" == *"# 1 skipped"* ]]
	[ "${lines[-1]}" = "1 passed, 0 failed" ]
}

@test "run.sh: a background file runs at nice 19 while the foreground runs, is reported after it, and its failure counts" {
	local d=$BATS_TEST_TMPDIR/bats
	mkdir -p "$d"
	printf '%s\n' "@""test \"zzrs bg nice\" {" "	touch $d/bg.started" '	[ "$(nice)" = 19 ]' '}' \
		"@""test \"zzrs bg fails\" {" '	false' '}' > "$d/zzrs_bg.bats"
	# the foreground test waits (up to 10 s) until the background one has started
	printf '%s\n' "@""test \"zzrs fg\" {" \
		"	for i in \$(seq 100); do [ -e $d/bg.started ] && break; sleep 0.1; done" \
		"	[ -e $d/bg.started ]" '	[ "$(nice)" = "$ZZRS_NICE" ]' '}' > "$d/zzrs_fg.bats"
	export ZZRS_NICE=$(nice)
	run -1 env OUT="$O" TESTS=zzrs_ KR_BATS_DIR="$d" KR_BATS_BACKGROUND=zzrs_bg tests/run.sh
	echo "$output"
	[[ "$output" == *"not ok 2 zzrs bg fails"* ]]
	# the foreground file first, then the background one
	[[ "$output" =~ "# bats zzrs_fg: 1 ok, 0 not ok ("[0-9]+" s)".*"# == bats zzrs_bg (in the background)".*"# bats zzrs_bg: 1 ok, 1 not ok ("[0-9]+" s)" ]]
	[ "${lines[-1]}" = "2 passed, 1 failed" ]
	# KR_BATS_BACKGROUND empty: everything in the foreground, in order (zzrs_bg first)
	rm -f "$d/bg.started"
	run -1 env OUT="$O" TESTS=zzrs_ KR_BATS_DIR="$d" KR_BATS_BACKGROUND= tests/run.sh
	echo "$output"
	[[ "$output" != *"in the background"* ]]
	[ "$ZZRS_NICE" = 19 ] || [[ "$output" == *"not ok 1 zzrs bg nice"* ]]
	[ "$ZZRS_NICE" = 19 ] || [ "${lines[-1]}" = "1 passed, 2 failed" ]
}

@test "run.sh: a side-lane file runs beside the foreground at the normal priority, is reported after it, and its failure counts" {
	local d=$BATS_TEST_TMPDIR/bats
	mkdir -p "$d"
	# the side file waits (up to 10 s) for the foreground to have started: they overlap
	printf '%s\n' "@""test \"zzrs side overlaps\" {" "	touch $d/side.started" \
		"	for i in \$(seq 100); do [ -e $d/fg.started ] && break; sleep 0.1; done" \
		"	[ -e $d/fg.started ]" '	[ "$(nice)" = "$ZZRS_NICE" ]' '}' \
		"@""test \"zzrs side fails\" {" '	false' '}' > "$d/zzrs_side.bats"
	printf '%s\n' "@""test \"zzrs fg2\" {" "	touch $d/fg.started" \
		"	for i in \$(seq 100); do [ -e $d/side.started ] && break; sleep 0.1; done" \
		"	[ -e $d/side.started ]" '}' > "$d/zzrs_fg2.bats"
	export ZZRS_NICE=$(nice)
	run -1 env OUT="$O" TESTS=zzrs_ KR_BATS_DIR="$d" KR_BATS_BACKGROUND= KR_BATS_SIDE=zzrs_side \
		tests/run.sh
	echo "$output"
	[[ "$output" == *"not ok 2 zzrs side fails"* ]]
	[[ "$output" =~ "# bats zzrs_fg2: 1 ok, 0 not ok ("[0-9]+" s)".*"# == bats zzrs_side (beside the foreground)".*"# bats zzrs_side: 1 ok, 1 not ok ("[0-9]+" s)" ]]
	[ "${lines[-1]}" = "2 passed, 1 failed" ]
	# KR_BATS_SIDE empty: in the foreground, one after the other (zzrs_fg2 waits in vain)
	rm -f "$d/side.started" "$d/fg.started"
	run -1 env OUT="$O" TESTS=zzrs_ KR_BATS_DIR="$d" KR_BATS_BACKGROUND= KR_BATS_SIDE= tests/run.sh
	[[ "$output" != *"beside the foreground"* ]]
	[[ "$output" == *"not ok 1 zzrs fg2"* ]]
}
