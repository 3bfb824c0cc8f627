#!/bin/bash
# Runs every test of keyrouter and ends with one line "N passed, N failed".
#   C test programs in build/tests/ (TAP on stdout), then the bats files in tests/bats/.
# Each program's TAP must be whole: a program that crashes, exits non-zero without
# reporting a failure, prints no plan, or whose plan (1..N) disagrees with the results it
# printed (it stopped early, or printed a point twice) counts as one failure more.
# Timeouts: a C program runs at most KR_TEST_TIMEOUT seconds (default 900), one bats test
# at most BATS_TEST_TIMEOUT (default 1200) and a bats file at most KR_BATS_FILE_TIMEOUT
# (default 3600); a hang becomes one failure naming the program or the test.
# Each program's and bats file's summary line ends with its wall-clock seconds (make test
# aims at 10 minutes in all: the slow ones are seen), and every skipped test is named.
# TESTS=pattern runs only the programs / bats files whose name matches; KR_BATS_DIR (default
# tests/bats) is where the bats files are.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-build}
pat=${TESTS:-}
bats_dir=${KR_BATS_DIR:-tests/bats}
prog_timeout=${KR_TEST_TIMEOUT:-900}
file_timeout=${KR_BATS_FILE_TIMEOUT:-3600}
export BATS_TEST_TIMEOUT=${BATS_TEST_TIMEOUT:-1200}
log=$(mktemp -d /tmp/kr-test.XXXXXX)
trap 'rm -rf "$log"' EXIT
passed=0 failed=0 skipped=0

count() { # file -> updates counters; sets $f to its failures (no subshell: the
	  # counters must survive)
	local p s
	p=$(grep -cE '^ok ' "$1")
	s=$(grep -cE '^ok .*# ?(skip|SKIP)' "$1")
	f=$(grep -cE '^not ok ' "$1")
	passed=$((passed + p - s)); skipped=$((skipped + s)); failed=$((failed + f))
}

# skips FILE NAME: name each skipped test (and why), so that a skip is seen, not only counted.
skips() {
	grep -E '^ok .*# ?(skip|SKIP)' "$1" | sed "s|^|# skipped in $2: |"
}

# plan_check FILE NAME: the TAP plan must exist once and equal the number of results.
plan_check() {
	local plans n results
	plans=$(grep -cE '^1\.\.[0-9]+' "$1")
	results=$(grep -cE '^(not )?ok ' "$1")
	if [ "$plans" != 1 ]; then
		echo "not ok - $2: $plans TAP plans (1..N) for $results results"
		failed=$((failed + 1))
		return
	fi
	n=$(sed -nE 's/^1\.\.([0-9]+).*/\1/p' "$1")
	if [ "$n" != "$results" ]; then
		echo "not ok - $2: plan 1..$n but $results results"
		failed=$((failed + 1))
	fi
}

# timed_out RC: did `timeout` stop the command (124, or 137 after -k)?
timed_out() { [ "$1" = 124 ] || [ "$1" = 137 ]; }

for t in "$OUT"/tests/*; do
	[ -x "$t" ] && [ -f "$t" ] || continue
	case "$t" in *.d) continue;; esac
	name=$(basename "$t")
	[ -n "$pat" ] && [[ "$name" != *$pat* ]] && continue
	echo "# == $name"
	start=$SECONDS
	timeout -k 10 "$prog_timeout" "$t" 2>&1 | tee "$log/$name.tap" |
		grep -E '^(not ok|# )' | grep -v '^# ok' | awk 'NR <= 200'
	rc=${PIPESTATUS[0]}
	count "$log/$name.tap"
	if timed_out "$rc"; then
		echo "not ok - $name timed out after ${prog_timeout}s"
		failed=$((failed + 1))
	elif [ "$rc" != 0 ] && [ "$f" = 0 ]; then
		echo "not ok - $name exited with status $rc"
		failed=$((failed + 1))
	elif [ "$f" = 0 ]; then
		plan_check "$log/$name.tap" "$name"
	fi
	skips "$log/$name.tap" "$name"
	echo "# $name: $(grep -cE '^ok ' "$log/$name.tap") ok, $f not ok ($((SECONDS - start)) s)"
done

if ls "$bats_dir"/*.bats >/dev/null 2>&1; then
	for b in "$bats_dir"/*.bats; do
		name=$(basename "$b" .bats)
		[ -n "$pat" ] && [[ "$name" != *$pat* ]] && continue
		echo "# == bats $name"
		start=$SECONDS
		timeout -k 10 "$file_timeout" bats --tap "$b" > "$log/bats-$name.tap" 2>&1
		rc=$?
		grep -E '^(not ok|#)' "$log/bats-$name.tap" | awk 'NR <= 200'
		count "$log/bats-$name.tap"
		if timed_out "$rc"; then
			echo "not ok - bats $name timed out after ${file_timeout}s"
			failed=$((failed + 1))
		elif [ "$rc" != 0 ] && [ "$f" = 0 ]; then
			echo "not ok - bats $name exited with status $rc"
			tail -20 "$log/bats-$name.tap"
			failed=$((failed + 1))
		elif [ "$f" = 0 ]; then
			plan_check "$log/bats-$name.tap" "bats $name"
		fi
		skips "$log/bats-$name.tap" "bats $name"
		echo "# bats $name: $(grep -cE '^ok ' "$log/bats-$name.tap") ok, $f not ok" \
			"($((SECONDS - start)) s)"
	done
fi

[ "$skipped" -gt 0 ] && echo "# $skipped skipped"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
